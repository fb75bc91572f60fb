// PTX as a kernel's CUDA code (model::PtxCode): the cuda target assembles
// each PTX file with the toolkit's ptxas for every requested architecture,
// so that PTX which does not assemble fails the build and not the first
// call, and embeds the PTX itself for newer GPUs to JIT-compile.
#ifndef KERNELC_COMPILER_BACKENDS_PTX_BACKEND_H_
#define KERNELC_COMPILER_BACKENDS_PTX_BACKEND_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/model/artifacts.h"
#include "compiler/model/model.h"
#include "compiler/model/ptx_abi.h"
#include "compiler/util/progress.h"
#include "compiler/util/status.h"

namespace kernelc::backends {

// The size in bytes of each `.param` of the `.entry` named `entry` in
// `ptx`, in order (an array `.b8 name[24]` counts its bytes); nullopt when
// the PTX has no such entry.
std::optional<std::vector<int>> PtxEntryParamBytes(std::string_view ptx,
                                                   std::string_view entry);

// The architecture of a PTX module's `.target sm_NN` directive (NN), or 0
// when it has none.
int PtxTarget(std::string_view ptx);

// ptxas of the toolkit whose include directory is `cuda_include`
// (<toolkit>/bin/ptxas), else the one on $PATH; nullopt when neither is.
std::optional<std::string> FindPtxas(const std::string& cuda_include);

struct PtxBuild {
  std::string ptxas;  // the program
  std::vector<int> archs;
  // The .entry parameters each kernel must have (model::PtxEntryParams).
  std::function<std::vector<model::PtxParam>(const model::Kernel&)> params;
  Progress* progress = nullptr;
};

// Assembles the PTX files of the module's PTX kernels, one CudaBinary per
// file in first-use order, numbered from `first_index` on: a cubin per
// architecture and the PTX (for the architecture of its `.target`), each
// with kernelc's kc_fill_u64 appended (the fill of KC_INIT that every
// module has). Before that, each kernel's `.entry` is checked against its
// ABI's parameters (count and sizes), reported at the spec's "ptx". ptxas's
// errors are relayed at the PTX file's lines (Error::Reported()); a ptxas
// that does not run is an internal error.
Result<std::vector<model::CudaBinary>> AssemblePtx(
    const model::Module& module, const PtxBuild& build, int first_index,
    diag::DiagnosticEngine& diags);

}  // namespace kernelc::backends

#endif  // KERNELC_COMPILER_BACKENDS_PTX_BACKEND_H_
