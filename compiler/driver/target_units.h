// The target units of a build.
#ifndef KERNELC_COMPILER_DRIVER_TARGET_UNITS_H_
#define KERNELC_COMPILER_DRIVER_TARGET_UNITS_H_

#include <memory>
#include <vector>

#include "compiler/model/target.h"
#include "compiler/targets/target.h"

namespace kernelc::driver {

using TargetUnits = std::vector<std::unique_ptr<targets::TargetUnit>>;

// One unit for each of `targets`, in their order.
TargetUnits MakeTargetUnits(const std::vector<model::Target>& targets);

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_TARGET_UNITS_H_
