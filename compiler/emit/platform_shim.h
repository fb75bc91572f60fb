// One platform's part of a package (a model::Target: the CPU, CUDA): its
// XLA FFI handlers in the shim (shim.cc) and their registration, in C++ and
// in the Python package, and the handler the manifest names. One
// implementation per target, each in its own file (cpu_shim.h,
// cuda_shim.h); the target's unit in compiler/targets hands its shim to the
// driver, which puts it in the EmitRequest, one per target of the build.
// The generators call each platform in turn, kernel by kernel, so the
// emitted code keeps target order (the CPU's before CUDA's).
#ifndef KERNELC_COMPILER_EMIT_PLATFORM_SHIM_H_
#define KERNELC_COMPILER_EMIT_PLATFORM_SHIM_H_

#include <string>

#include "compiler/emit/generator.h"
#include "compiler/emit/printer.h"
#include "compiler/model/model.h"
#include "compiler/model/target.h"
#include "compiler/sema/sema.h"

namespace kernelc::emit {

class PlatformShim {
 public:
  virtual ~PlatformShim() = default;

  virtual model::Target target() const = 0;

  // Whether `kernel` has handlers on this platform.
  virtual bool Runs(const model::Kernel& kernel) const = 0;

  // The shim, in file order. Each section ends its lines; one with
  // nothing to say emits nothing.
  // The platform's #include lines, after the shim's: the end of the shim's
  // prelude (GeneratorContext::WriteSource), so nothing but includes.
  virtual void EmitIncludes(const EmitRequest& request, Printer& p) const = 0;
  // After the prelude: what the platform's handlers share.
  virtual void EmitSupport(const EmitRequest& request, Printer& p) const = 0;
  // After `namespace ffi = ::kc::ffi;`: declarations the handlers call.
  virtual void EmitDeclarations(const EmitRequest& request,
                                Printer& p) const = 0;
  // The handlers of a kernel that Runs, in the shim's anonymous namespace,
  // each followed by a blank line.
  virtual void EmitHandlers(const EmitRequest& request,
                            const sema::KernelPlan& kp, Printer& p) const = 0;
  // Their exported symbols, after the anonymous namespace.
  virtual void EmitRegistration(const EmitRequest& request,
                                const sema::KernelPlan& kp,
                                Printer& p) const = 0;

  // The statement of the package's __init__.py that registers the
  // kernel's handlers with XLA.
  virtual void EmitPyRegistration(const EmitRequest& request,
                                  const model::Kernel& kernel,
                                  Printer& p) const = 0;

  // The handler that kernelc.json lists for the kernel on this platform.
  virtual std::string HandlerSymbol(const Namer& namer,
                                    const model::Kernel& kernel) const = 0;
};

}  // namespace kernelc::emit

#endif  // KERNELC_COMPILER_EMIT_PLATFORM_SHIM_H_
