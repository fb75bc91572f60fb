// Sources and directories for the driver's tests.
#ifndef KERNELC_COMPILER_DRIVER_TEST_SOURCES_H_
#define KERNELC_COMPILER_DRIVER_TEST_SOURCES_H_

#include <llvm/Support/FileSystem.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "compiler/driver/scratch_directory.h"
#include "compiler/util/file_io.h"

namespace kernelc::driver::testing {

inline constexpr const char* kSaxpy = R"(#include <kernelc.h>
#include "scale.h"

KC_GRID("out.size")
__global__ void saxpy(KC_IN("n") const float* x, KC_IN("n") const float* y,
                      float a, KC_DERIVED("x.size") int64_t n,
                      KC_OUT("x") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = SCALE * a * x[i] + y[i];
}
)";

inline constexpr const char* kScaleHeader = "#define SCALE 1.0f\n";

// A new directory in the system's temporary directory, removed with
// everything in it when this goes out of scope.
class TempDir {
 public:
  TempDir() { REQUIRE(!dir_.Create("kernelc-driver-test")); }

  const std::string& path() const { return dir_.path(); }

  // Writes `text` to `rel` under this directory; returns its path.
  std::string Write(const std::string& rel, const std::string& text) const {
    std::string p = path() + "/" + rel;
    REQUIRE(WriteFileIfChanged(p, text).ok());
    return p;
  }

  // saxpy.cu in `dir` (relative to this directory), its header in
  // `dir`/inc/scale.h; returns the source's path.
  std::string WriteSaxpy(const std::string& dir = "src") const {
    Write(dir + "/inc/scale.h", kScaleHeader);
    return Write(dir + "/saxpy.cu", kSaxpy);
  }

 private:
  ScratchDirectory dir_;
};

// Every file under `dir`, relative, dot files included, sorted.
inline std::vector<std::string> FilesUnder(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end;
       !ec && it != end; it.increment(ec))
    if (!llvm::sys::fs::is_directory(it->path()))
      files.push_back(it->path().substr(dir.size() + 1));
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace kernelc::driver::testing

#endif  // KERNELC_COMPILER_DRIVER_TEST_SOURCES_H_
