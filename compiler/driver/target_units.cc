#include "compiler/driver/target_units.h"

#include "compiler/targets/cpu_target.h"
#include "compiler/targets/cuda_target.h"

namespace kernelc::driver {

TargetUnits MakeTargetUnits(const std::vector<model::Target>& targets) {
  TargetUnits units;
  for (model::Target t : targets) {
    switch (t) {
      case model::Target::kCpu:
        units.push_back(std::make_unique<targets::CpuTarget>());
        break;
      case model::Target::kCuda:
        units.push_back(std::make_unique<targets::CudaTarget>());
        break;
    }
  }
  return units;
}

}  // namespace kernelc::driver
