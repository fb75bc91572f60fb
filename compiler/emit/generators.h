// Every file of a package comes from one of these generators (generator.h
// has the interface). The driver lists them in compiler/driver/generate.cc;
// a new kind of file is one more generator here and one line there.
#ifndef KERNELC_COMPILER_EMIT_GENERATORS_H_
#define KERNELC_COMPILER_EMIT_GENERATORS_H_

#include <string>
#include <string_view>
#include <vector>

#include "compiler/emit/generator.h"
#include "compiler/model/artifacts.h"
#include "compiler/sema/sema.h"
#include "compiler/util/status.h"

namespace kernelc::emit {

// build/shim.cc: the XLA FFI handlers of every kernel on each platform of
// the build (platform_shim.h), and their exported symbols.
class ShimGenerator : public Generator {
 public:
  Status Generate(const EmitRequest& request,
                  GeneratorContext& context) const override;
};

// For the cpu target, build/<HostSourceName> for each source that defines
// kernels: their CPU entry points, compiled together with the source. The
// block executor they may run under is in the prebuilt runtime
// (libkernelc_runtime.a), which every library links.
class HostEntriesGenerator : public Generator {
 public:
  Status Generate(const EmitRequest& request,
                  GeneratorContext& context) const override;
};

// "host_<source_index>_<stem>.cc"; `source_index` indexes the module's
// sources.
std::string HostSourceName(const std::string& source, int source_index);

// For the cuda target, build/cuda_images.cc: the NVRTC binaries of each
// source and of its fold program, embedded in the library as one
// kc_cuda_module each; and the binaries themselves, for reading and for
// ptxas, as build/cuda/<CudaImageName>.
class CudaImagesGenerator : public Generator {
 public:
  Status Generate(const EmitRequest& request,
                  GeneratorContext& context) const override;
};

// "<index>_<stem>.sm_80.cubin", "<index>_<stem>.compute_90.ptx"; for a
// fold program's images (`fold`), "<index>_<stem>.fold.sm_80.cubin", ....
std::string CudaImageName(const model::CudaBinary& b,
                          const model::CudaImage& im, bool fold = false);

// For each source with a fold program, build/cuda/<index>_<stem>.fold.cu:
// the program as NVRTC compiled it, for reading.
class FoldProgramsGenerator : public Generator {
 public:
  Status Generate(const EmitRequest& request,
                  GeneratorContext& context) const override;
};

// The fold program of a source (kernelc/fold.h): its text again, under a
// #line naming it `source`, with its __global__ kernels made device
// functions, an entry for each of `fold` (kernels of plan's module) that
// runs it for the batch element of blockIdx.z, then an entry for each of
// `entries`, the kernels with traced scalars (KC_TRACED), that reads them
// on the device and calls the kernel. The fold entries read a traced
// scalar of their batch element.
Result<std::string> CudaFoldProgram(
    const sema::ModulePlan& plan, const std::string& source,
    std::string_view text, const std::vector<const model::Kernel*>& fold,
    const std::vector<const model::Kernel*>& entries);

// __init__.py: the package's functions (checks at trace time, the FFI
// call, the autodiff and sharding wrappers) and the registration of the
// handlers; and the package's Python runtime, _kernelc.py
// (runtime/python/_kernelc.py), verbatim.
class PythonPackageGenerator : public Generator {
 public:
  Status Generate(const EmitRequest& request,
                  GeneratorContext& context) const override;
};

// __init__.pyi: each function's signature, and its shapes and dtypes.
class StubsGenerator : public Generator {
 public:
  Status Generate(const EmitRequest& request,
                  GeneratorContext& context) const override;
};

// py.typed, empty: the PEP 561 marker, so that type checkers read the
// package's stubs (__init__.pyi) when it is installed.
class PyTypedGenerator : public Generator {
 public:
  Status Generate(const EmitRequest& request,
                  GeneratorContext& context) const override;
};

// kernelc.json: what was built, from what, for which targets.
class ManifestGenerator : public Generator {
 public:
  Status Generate(const EmitRequest& request,
                  GeneratorContext& context) const override;
};

}  // namespace kernelc::emit

#endif  // KERNELC_COMPILER_EMIT_GENERATORS_H_
