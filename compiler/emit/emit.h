// The emitters: from the analyzed model to generated files. Emitters never
// touch the filesystem: they return path -> contents, and the driver writes.
#ifndef KERNELC_COMPILER_EMIT_EMIT_H_
#define KERNELC_COMPILER_EMIT_EMIT_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/sema/sema.h"
#include "compiler/util/status.h"

namespace kernelc::emit {

// path (relative, '/'-separated) -> contents. Ordered, so iteration is
// deterministic.
using FileMap = std::map<std::string, std::string>;

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
  // program (CudaFoldProgram), source order, and that program's images, as
  // `images`. Empty when none folds; then `text` is empty too, else the
  // source's text that NVRTC compiled.
  std::vector<std::string> fold_kernels;
  std::vector<CudaImage> fold_images;
  std::string text;
};

struct BuildInfo {
  std::string version;       // kernelc's version
  std::string package;       // Python package name
  std::string content_hash;  // hex SHA-256 of everything that shapes output
  std::string ffi_api;       // XLA FFI API version of the headers, "0.2"
  std::string jaxlib_floor;  // jaxlib those headers come from, "0.8.1"
  std::vector<std::string> targets;  // "cpu", ...
  // The cuda target: the architectures (80 for sm_80), and the compiled
  // binaries of each source that has __global__ kernels.
  std::vector<int> cuda_archs;
  bool cuda_fast_math = false;
  // The same as CUDA counts versions (cuDriverGetVersion): 1000 * major +
  // 10 * minor, 13000 for 13.0.
  int cuda_version = 0;
  std::vector<CudaBinary> cuda_binaries;
};

struct Output {
  FileMap package;  // files of the Python package directory
  FileMap build;    // C++ sources compiled into the package's library
};

// The kernels' CPU entry points for one source file, compiled with it:
// build/<stem>.host.cc. `source_index` indexes module->sources.
std::string HostSourceName(const std::string& source, int source_index);

// A CUDA version as CUDA_VERSION writes it (13000) in the form people do
// ("13.0").
std::string CudaVersionText(int cuda_version);

// Whether the build includes a target ("cpu", "cuda").
bool HasTarget(const BuildInfo& info, std::string_view target);

// The raw binaries of one source, for reading and for ptxas:
// build/cuda/<index>_<stem>.sm_80.cubin, ....compute_90.ptx; those of its
// fold program (`fold`): <index>_<stem>.fold.sm_80.cubin, ..., beside the
// program's source, <index>_<stem>.fold.cu.
std::string CudaImageName(const CudaBinary& b, const CudaImage& im,
                          bool fold = false);

// The fold program of a source (kernelc/fold.h): its text again, under a
// #line naming it `source`, with its __global__ kernels made device
// functions, and an entry for each of `kernels` that runs it for the batch
// element of blockIdx.z.
Result<std::string> CudaFoldProgram(
    const std::string& source, std::string_view text,
    const std::vector<const model::Kernel*>& kernels);

Result<Output> EmitPackage(const sema::ModulePlan& plan, const BuildInfo& info);

}  // namespace kernelc::emit

#endif  // KERNELC_COMPILER_EMIT_EMIT_H_
