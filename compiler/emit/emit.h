// The emitters: from the analyzed model to generated files. Emitters never
// touch the filesystem: they return path -> contents, and the driver writes.
#ifndef KERNELC_COMPILER_EMIT_EMIT_H_
#define KERNELC_COMPILER_EMIT_EMIT_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/model/artifacts.h"
#include "compiler/sema/sema.h"
#include "compiler/util/status.h"

namespace kernelc::emit {

// path (relative, '/'-separated) -> contents. Ordered, so iteration is
// deterministic.
using FileMap = std::map<std::string, std::string>;

struct Output {
  FileMap package;  // files of the Python package directory
  FileMap build;    // C++ sources compiled into the package's library
};

// The kernels' CPU entry points for one source file, compiled with it:
// build/<stem>.host.cc. `source_index` indexes module->sources.
std::string HostSourceName(const std::string& source, int source_index);

// The raw binaries of one source, for reading and for ptxas:
// build/cuda/<index>_<stem>.sm_80.cubin, ....compute_90.ptx; those of its
// fold program (`fold`): <index>_<stem>.fold.sm_80.cubin, ..., beside the
// program's source, <index>_<stem>.fold.cu.
std::string CudaImageName(const model::CudaBinary& b,
                          const model::CudaImage& im, bool fold = false);

// The fold program of a source (kernelc/fold.h): its text again, under a
// #line naming it `source`, with its __global__ kernels made device
// functions, and an entry for each of `kernels` that runs it for the batch
// element of blockIdx.z.
Result<std::string> CudaFoldProgram(
    const std::string& source, std::string_view text,
    const std::vector<const model::Kernel*>& kernels);

Result<Output> EmitPackage(const sema::ModulePlan& plan,
                           const model::BuildInfo& info);

}  // namespace kernelc::emit

#endif  // KERNELC_COMPILER_EMIT_EMIT_H_
