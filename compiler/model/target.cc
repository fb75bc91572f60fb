#include "compiler/model/target.h"

namespace kernelc::model {

std::string_view TargetName(Target t) {
  switch (t) {
    case Target::kCpu:
      return "cpu";
    case Target::kCuda:
      return "cuda";
  }
  return "";
}

std::optional<Target> TargetFromName(std::string_view name) {
  for (Target t : {Target::kCpu, Target::kCuda})
    if (TargetName(t) == name) return t;
  return std::nullopt;
}

}  // namespace kernelc::model
