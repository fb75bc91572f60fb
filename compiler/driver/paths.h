// Paths as the driver compares and records them.
#ifndef KERNELC_COMPILER_DRIVER_PATHS_H_
#define KERNELC_COMPILER_DRIVER_PATHS_H_

#include <string>

namespace kernelc::driver {

// `path` made absolute against the working directory, with "." and ".."
// components removed (lexically: symbolic links are not resolved).
std::string Absolute(const std::string& path);

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_PATHS_H_
