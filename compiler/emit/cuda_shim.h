// CUDA's part of a package: for every __global__ kernel, an initialize-stage
// handler that loads the kernel's module into the stream's context, and an
// execute-stage handler that only launches, on XLA's stream, once per batch
// element (or once for a batch that folds, kernelc/fold.h), so XLA may
// capture it into a CUDA graph. The modules are the images of
// cuda_images.cc (CudaImagesGenerator), one cache per module and context.
#ifndef KERNELC_COMPILER_EMIT_CUDA_SHIM_H_
#define KERNELC_COMPILER_EMIT_CUDA_SHIM_H_

#include <string>

#include "compiler/emit/platform_shim.h"

namespace kernelc::emit {

class CudaShim : public PlatformShim {
 public:
  model::Target target() const override { return model::Target::kCuda; }
  // Host kernels (KC_KERNEL) run on the CPU only.
  bool Runs(const model::Kernel& kernel) const override {
    return kernel.kind == model::KernelKind::kGlobal;
  }
  // The runtime's CUDA part (kernelc/cuda.h).
  void EmitIncludes(const EmitRequest& request, Printer& p) const override;
  // The modules' declarations and their caches.
  void EmitSupport(const EmitRequest& request, Printer& p) const override;
  void EmitDeclarations(const EmitRequest& /*request*/,
                        Printer& /*p*/) const override {}
  void EmitHandlers(const EmitRequest& request, const sema::KernelPlan& kp,
                    Printer& p) const override;
  void EmitRegistration(const EmitRequest& request, const sema::KernelPlan& kp,
                        Printer& p) const override;
  void EmitPyRegistration(const EmitRequest& request,
                          const model::Kernel& kernel,
                          Printer& p) const override;
  // The execute stage's.
  std::string HandlerSymbol(const Namer& namer,
                            const model::Kernel& kernel) const override;
};

}  // namespace kernelc::emit

#endif  // KERNELC_COMPILER_EMIT_CUDA_SHIM_H_
