// The targets a package is built for. Code compares these values; the
// names appear only where kernelc meets the outside: the command line, the
// manifest and the generated Python's handler registrations.
#ifndef KERNELC_COMPILER_MODEL_TARGET_H_
#define KERNELC_COMPILER_MODEL_TARGET_H_

#include <optional>
#include <string_view>

namespace kernelc::model {

// In build order: a list of targets is kept sorted, so kCpu comes first.
enum class Target {
  kCpu,   // kernels on the CPU grid executor, host kernels
  kCuda,  // __global__ kernels compiled with NVRTC
};

std::string_view TargetName(Target t);  // "cpu", "cuda"
std::optional<Target> TargetFromName(std::string_view name);

}  // namespace kernelc::model

#endif  // KERNELC_COMPILER_MODEL_TARGET_H_
