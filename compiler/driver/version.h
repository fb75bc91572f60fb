// kernelc's version, and the XLA FFI headers compiled into it.
#ifndef KERNELC_COMPILER_DRIVER_VERSION_H_
#define KERNELC_COMPILER_DRIVER_VERSION_H_

namespace kernelc::driver {

inline constexpr const char* kVersion = "0.1.0";
// The jaxlib whose XLA FFI headers are compiled into kernelc, and their API.
inline constexpr const char* kJaxlibFloor = "0.8.1";
inline constexpr const char* kFfiApi = "0.2";
// The Pythons that generated packages run on: those of the jax releases
// they work with, from kJaxlibFloor on. jax and jaxlib 0.8.1 require Python
// 3.11 or newer (their Requires-Python); later releases only drop old
// Pythons (jax 0.12 requires 3.12), so every Python that some supported jax
// runs on is 3.11 or newer. A wheel's Requires-Python.
inline constexpr const char* kRequiresPython = ">=3.11";

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_VERSION_H_
