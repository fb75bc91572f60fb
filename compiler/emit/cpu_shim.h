// The CPU's part of a package: for every kernel, a handler that runs it
// once per batch element, spread over XLA's intra-op thread pool, through
// the kernel's CPU entry point, which host_N_<stem>.cc defines
// (HostEntriesGenerator) and this file declares: a __global__ kernel's
// entry runs a range of the blocks of its launch, which the handler splits
// over the pool too (kernelc/grid_split.h), a host kernel is called once.
#ifndef KERNELC_COMPILER_EMIT_CPU_SHIM_H_
#define KERNELC_COMPILER_EMIT_CPU_SHIM_H_

#include <string>
#include <vector>

#include "compiler/emit/platform_shim.h"

namespace kernelc::emit {

class CpuShim : public PlatformShim {
 public:
  model::Target target() const override { return model::Target::kCpu; }
  bool Runs(const model::Kernel& /*kernel*/) const override { return true; }
  // The grid split (kernelc/grid_split.h).
  void EmitIncludes(const EmitRequest& request, Printer& p) const override;
  void EmitSupport(const EmitRequest& /*request*/,
                   Printer& /*p*/) const override {}
  // The entry points' declarations.
  void EmitDeclarations(const EmitRequest& request, Printer& p) const override;
  void EmitHandlers(const EmitRequest& request, const sema::KernelPlan& kp,
                    Printer& p) const override;
  void EmitRegistration(const EmitRequest& request, const sema::KernelPlan& kp,
                        Printer& p) const override;
  void EmitPyRegistration(const EmitRequest& request,
                          const model::Kernel& kernel,
                          Printer& p) const override;
  std::string HandlerSymbol(const Namer& namer,
                            const model::Kernel& kernel) const override;
};

// The definition of a kernel's CPU entry point, in the host file of its
// source, which includes the source and so inlines the kernel's body: in
// the plain grid loop, or under the block executor (kernelc/cpu_exec.h).
void EmitCpuEntry(const EmitRequest& request, const sema::KernelPlan& kp,
                  Printer& p);

// The storage of `extern __shared__` arrays (KC_HOST_EXTERN_SHARED), each
// in its declaration's namespace, in the host file of a source whose
// kernels reach them. `arrays` sorted, without repeats.
void EmitExternShared(const std::vector<model::ExternShared>& arrays,
                      Printer& p);

}  // namespace kernelc::emit

#endif  // KERNELC_COMPILER_EMIT_CPU_SHIM_H_
