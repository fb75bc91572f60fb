#include "compiler/model/artifacts.h"

#include <fmt/format.h>

#include <algorithm>

namespace kernelc::model {

bool HasTarget(const BuildInfo& info, Target target) {
  return std::find(info.targets.begin(), info.targets.end(), target) !=
         info.targets.end();
}

std::string CudaVersionText(int cuda_version) {
  return fmt::format("{}.{}", cuda_version / 1000, cuda_version % 1000 / 10);
}

}  // namespace kernelc::model
