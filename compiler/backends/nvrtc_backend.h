// The CUDA backend: compiles each kernel source ahead of time with NVRTC,
// to a cubin for every requested architecture and PTX for the newest one.
// NVRTC is loaded with dlopen, so kernelc itself runs (and builds CPU
// packages) where there is no CUDA toolkit.
#ifndef KERNELC_COMPILER_BACKENDS_NVRTC_BACKEND_H_
#define KERNELC_COMPILER_BACKENDS_NVRTC_BACKEND_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/model/artifacts.h"
#include "compiler/model/model.h"
#include "compiler/util/progress.h"
#include "compiler/util/status.h"

namespace kernelc::backends {

// A loaded NVRTC library and the CUDA headers that come with it.
class Nvrtc {
 public:
  struct Api;
  ~Nvrtc();
  Nvrtc(Nvrtc&&) noexcept;

  const std::string& library() const { return library_; }  // path opened
  const std::string& version() const { return version_; }  // "13.0"
  // The version as CUDA counts them: 1000 * major + 10 * minor (13000).
  int cuda_version() const { return cuda_version_; }
  // The toolkit's include directory (cuda_fp16.h, ...); empty if unknown.
  const std::string& cuda_include() const { return cuda_include_; }
  // The real architectures this NVRTC compiles for (80 for sm_80).
  const std::vector<int>& supported_archs() const { return archs_; }
  const Api& api() const { return *api_; }

 private:
  friend Result<Nvrtc> FindNvrtc();
  Nvrtc() = default;
  std::unique_ptr<Api> api_;
  void* handle_ = nullptr;
  std::string library_, version_, cuda_include_;
  int cuda_version_ = 0;
  std::vector<int> archs_;
};

// Finds and loads NVRTC, the first usable one of: $CUDA_HOME, NVIDIA's pip
// wheels (nvidia/cu13, nvidia/cuda_nvrtc) in the active virtual environment,
// the active conda environment, the toolkit of the nvcc on $PATH,
// /usr/local/cuda. Internal error (exit 2) when there is none.
Result<Nvrtc> FindNvrtc();

// The include directories of a CUDA toolkit whose include directory
// (cuda_fp16.h, ...) is `include`: it, and CCCL's beside it (include/cccl:
// cuda/std, CUB, Thrust, which cooperative groups include since CUDA 13),
// where that exists.
std::vector<std::string> ToolkitIncludeDirs(const std::string& include);

// Where FindNvrtc looks first, found without loading anything: the first
// library in its search order that exists, and the toolkit include
// directory beside it (empty when that has no cuda_fp16.h). It identifies
// NVRTC cheaply, as the build cache needs; FindNvrtc goes on to the next
// library when this one cannot be loaded. nullopt when there is none.
struct NvrtcLocation {
  std::string library;
  std::string cuda_include;
};
std::optional<NvrtcLocation> LocateNvrtc();

// Parses "--cuda-arch sm_80,sm_90": sorted, unique architectures, checked
// against what NVRTC supports. Anything else is reported to `diags`, and
// the result is Error::Reported().
Result<std::vector<int>> ParseCudaArchs(const std::string& text,
                                        const Nvrtc& nvrtc,
                                        diag::DiagnosticEngine& diags);

// The fold program of a source (see emit::CudaFoldProgram, which the
// caller passes in: the backend compiles generated code but does not
// generate it).
using FoldProgramGenerator = std::function<Result<std::string>(
    const std::string& source, std::string_view text,
    const std::vector<const model::Kernel*>& fold,
    const std::vector<const model::Kernel*>& entries)>;

struct CudaBuild {
  std::vector<int> archs;
  bool fast_math = false;
  // Line information for profilers (--generate-line-info): the binaries
  // name the files as NVRTC read them.
  bool lineinfo = false;
  std::vector<std::string> include_dirs;  // user -I, absolute
  std::vector<std::string> defines;       // user -D
  // Unset: no kernel's batch folds, and kernels with traced scalars cannot
  // be compiled.
  FoldProgramGenerator fold_program;
  // Receives a stage per program and architecture, when set.
  Progress* progress = nullptr;
};

// The NVRTC options for one architecture, without include paths: part of
// the content hash.
std::vector<std::string> NvrtcFlags(const CudaBuild& build, int arch);

// Compiles every source that defines __global__ kernels, leaving out those
// given as PTX (see ptx_backend.h). NVRTC's errors and
// warnings are relayed to `diags` at the user's file and line (the program
// starts with a #line directive); a source that fails to compile gives
// Error::Reported(), a failing NVRTC an internal error. Each source's kernels
// whose batch can fold into the grid's z axis are compiled a second time, into
// the fold program (see kernelc/fold.h); CudaBinary::fold_kernels names those
// it holds. Kernels with traced scalars have an entry there too, which reads
// them on the device (CudaBinary::entry_kernels): for them the fold program
// must compile, and NVRTC's errors about it are the build's.
Result<std::vector<model::CudaBinary>> CompileCuda(
    const Nvrtc& nvrtc, const model::Module& module, const CudaBuild& build,
    diag::DiagnosticEngine& diags);

// The functions of a PTX module that have a body (.entry and .func), by
// name; `callable` for a .func, which a call can reach.
struct PtxFunction {
  std::string body;
  bool callable = false;
};
using PtxFunctions = std::map<std::string, PtxFunction, std::less<>>;
PtxFunctions ParsePtxFunctions(std::string_view ptx);

// Whether the PTX function `entry` reads blockIdx.z or gridDim.z (%ctaid.z,
// %nctaid.z), or calls a function and any function of the PTX does; true
// when `entry` is not in the PTX. Such a kernel's batch cannot fold into the
// grid's z axis (kernelc/fold.h).
bool UsesGridZ(const PtxFunctions& ptx, std::string_view entry);

// Relays an NVRTC log to `diags`: its "file(line): error: message" lines,
// with the column from the caret line below them, in NVRTC's words.
// Returns whether any line was recognized.
bool ParseNvrtcLog(const std::string& log, diag::DiagnosticEngine& diags);

}  // namespace kernelc::backends

#endif  // KERNELC_COMPILER_BACKENDS_NVRTC_BACKEND_H_
