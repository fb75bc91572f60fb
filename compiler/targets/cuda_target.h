// The cuda target: each source's __global__ kernels compiled ahead of time
// with NVRTC, a cubin for every architecture asked for and PTX for the
// newest, embedded into the package's library.
#ifndef KERNELC_COMPILER_TARGETS_CUDA_TARGET_H_
#define KERNELC_COMPILER_TARGETS_CUDA_TARGET_H_

#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/nvrtc_backend.h"
#include "compiler/emit/cuda_shim.h"
#include "compiler/targets/target.h"

namespace kernelc::targets {

// The architectures the cuda target compiles for when none are given.
inline constexpr const char* kDefaultCudaArchs = "sm_80,sm_90";

class CudaTarget : public TargetUnit {
 public:
  model::Target target() const override { return model::Target::kCuda; }
  // A host kernel (KC_KERNEL) has no GPU form: it needs the cpu target in
  // the same build.
  void Check(const model::Module& module, const BuildSettings& settings,
             diag::DiagnosticEngine& diags) const override;
  // NVRTC without loading it (its 100 MB library would cost a warm build
  // more than all the rest): the library that FindNvrtc tries first, by
  // identity, and its toolkit's include directory; and the ptxas of that
  // toolkit (backends::FindPtxas), by identity.
  bool AddToCacheKey(cache::KeyBuilder& key) override;
  // Finds and loads NVRTC, and fills info's cuda fields.
  Status CompileKernels(const sema::ModulePlan& plan,
                        const BuildSettings& settings, model::BuildInfo* info,
                        diag::DiagnosticEngine& diags) override;
  // NVRTC's version and every image's SHA-256: the images stand for
  // NVRTC's flags and the headers it read.
  IdentityFields ContentHashFields(const model::BuildInfo& info) const override;
  // The images are support code of the library, not the user's.
  std::vector<backends::HostBuild::UserUnit> HostUnits(
      const model::Module& /*module*/,
      const std::vector<std::string>& /*source_paths*/,
      const std::map<std::string, std::string>& /*generated*/) const override {
    return {};
  }
  bool CompiledWithKeyedToolchain() const override;
  // The toolkit's include directories of the NVRTC the key names.
  std::vector<std::string> UnreportedIncludeDirs() const override;
  const emit::PlatformShim& shim() const override { return shim_; }

 private:
  emit::CudaShim shim_;
  std::optional<backends::NvrtcLocation> keyed_;  // by AddToCacheKey
  std::string compiled_with_;  // the NVRTC library CompileKernels loaded
};

}  // namespace kernelc::targets

#endif  // KERNELC_COMPILER_TARGETS_CUDA_TARGET_H_
