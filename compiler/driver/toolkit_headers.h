// The toolchain headers that a compiler without dependency output may read.
#ifndef KERNELC_COMPILER_DRIVER_TOOLKIT_HEADERS_H_
#define KERNELC_COMPILER_DRIVER_TOOLKIT_HEADERS_H_

#include <string>
#include <vector>

namespace kernelc::driver {

// The headers under `toolkit_dirs` (a CUDA toolkit's include directories)
// that a compile of `sources` may read. NVRTC reports no dependencies, so
// they are found by following every #include from the sources through the
// compile's include path (each source's directory, `include_dirs`, then
// `toolkit_dirs`), conditionals ignored: more headers than NVRTC read, each
// checked by a stat on lookup. Reading them all on every lookup instead
// would cost a warm build more than it saves, and a stat of every header in
// the toolkit (thousands, with CCCL) more still. Absolute paths, sorted.
std::vector<std::string> CudaToolkitHeaders(
    const std::vector<std::string>& sources,
    const std::vector<std::string>& include_dirs,
    const std::vector<std::string>& toolkit_dirs);

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_TOOLKIT_HEADERS_H_
