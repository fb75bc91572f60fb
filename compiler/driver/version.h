// kernelc's version, and the XLA FFI headers compiled into it.
#ifndef KERNELC_COMPILER_DRIVER_VERSION_H_
#define KERNELC_COMPILER_DRIVER_VERSION_H_

namespace kernelc::driver {

inline constexpr const char* kVersion = "0.1.0";
// The jaxlib whose XLA FFI headers are compiled into kernelc, and their API.
inline constexpr const char* kJaxlibFloor = "0.8.1";
inline constexpr const char* kFfiApi = "0.2";

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_VERSION_H_
