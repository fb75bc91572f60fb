// What a build knows beyond the kernel model once the kernels are compiled:
// the package's identity and the CUDA binaries. Plain structs, filled by the
// driver and the targets' compile steps and read by the emitters, so that
// the backends which produce them need not depend on the emitters.
#ifndef KERNELC_COMPILER_MODEL_ARTIFACTS_H_
#define KERNELC_COMPILER_MODEL_ARTIFACTS_H_

#include <string>
#include <vector>

#include "compiler/model/target.h"

namespace kernelc::model {

// One NVRTC output: a cubin for sm_<sm>, or PTX for compute_<sm>.
struct CudaImage {
  int sm = 0;
  bool is_ptx = false;
  std::string data;    // PTX without a terminating NUL
  std::string sha256;  // hex, of data
};

// The CUDA binaries of one kernel source.
struct CudaBinary {
  std::string source;                // as in Module::sources
  int source_index = 0;              // its index there
  std::vector<std::string> kernels;  // __global__ kernels, source order
  std::vector<std::string> lowered;  // their lowered (mangled) names
  std::vector<CudaImage> images;     // cubins by arch, then the PTX
  // The batch fold (kernelc/fold.h): the kernels with an entry in the fold
  // program (emit::CudaFoldProgram), source order, and that program's
  // images, as `images`. The program also has an entry for each kernel with
  // traced scalars (KC_TRACED), `entry_kernels`, which the handlers launch
  // instead of the kernel. Both empty when the program is not compiled;
  // then `text` is empty too, else the source's text that NVRTC compiled.
  std::vector<std::string> fold_kernels;
  std::vector<std::string> entry_kernels;
  std::vector<CudaImage> fold_images;
  std::string text;
};

struct BuildInfo {
  std::string version;          // kernelc's version
  std::string package;          // Python package name
  std::string content_hash;     // hex SHA-256 of everything that shapes output
  std::string ffi_api;          // XLA FFI API version of the headers, "0.2"
  std::string jaxlib_floor;     // jaxlib those headers come from, "0.8.1"
  std::vector<Target> targets;  // sorted, each once
  // The cuda target: the architectures (80 for sm_80), and the compiled
  // binaries of each source that has __global__ kernels.
  std::vector<int> cuda_archs;
  bool cuda_fast_math = false;
  // The same as CUDA counts versions (cuDriverGetVersion): 1000 * major +
  // 10 * minor, 13000 for 13.0.
  int cuda_version = 0;
  std::vector<CudaBinary> cuda_binaries;
};

// Whether the build includes `target`.
bool HasTarget(const BuildInfo& info, Target target);

// A CUDA version as CUDA_VERSION writes it (13000) in the form people do
// ("13.0").
std::string CudaVersionText(int cuda_version);

}  // namespace kernelc::model

#endif  // KERNELC_COMPILER_MODEL_ARTIFACTS_H_
