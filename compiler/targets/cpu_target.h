// The cpu target: __global__ kernels run on the CPU grid executor (threads
// one after another, the body inlined into the grid loop) and host kernels
// are called once per op; each user source is compiled with its generated
// CPU entry points into the package's library.
#ifndef KERNELC_COMPILER_TARGETS_CPU_TARGET_H_
#define KERNELC_COMPILER_TARGETS_CPU_TARGET_H_

#include "compiler/emit/cpu_shim.h"
#include "compiler/targets/target.h"

namespace kernelc::targets {

class CpuTarget : public TargetUnit {
 public:
  model::Target target() const override { return model::Target::kCpu; }
  // Reports each kernel that uses block-level features (__shared__,
  // __syncthreads, warp intrinsics), which the grid executor cannot give
  // it, with a note at each use.
  void Check(const model::Module& module, const BuildSettings& settings,
             diag::DiagnosticEngine& diags) const override;
  // The host compiler, which every build uses for the package's library,
  // is in the key already.
  bool AddToCacheKey(cache::KeyBuilder& /*key*/) override { return true; }
  // The kernels are compiled with the package's library (HostUnits).
  Status CompileKernels(const sema::ModulePlan& /*plan*/,
                        const BuildSettings& /*settings*/,
                        model::BuildInfo* /*info*/,
                        diag::DiagnosticEngine& /*diags*/) override {
    return Status();
  }
  IdentityFields ContentHashFields(
      const model::BuildInfo& /*info*/) const override {
    return {};
  }
  // Each source's CPU entry points (emit::HostSourceName), which include
  // it.
  std::vector<backends::HostBuild::UserUnit> HostUnits(
      const model::Module& module, const std::vector<std::string>& source_paths,
      const std::map<std::string, std::string>& generated) const override;
  const emit::PlatformShim& shim() const override { return shim_; }

 private:
  emit::CpuShim shim_;
};

}  // namespace kernelc::targets

#endif  // KERNELC_COMPILER_TARGETS_CPU_TARGET_H_
