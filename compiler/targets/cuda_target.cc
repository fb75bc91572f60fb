#include "compiler/targets/cuda_target.h"

#include <fmt/format.h>

#include <algorithm>

#include "compiler/emit/generators.h"

namespace kernelc::targets {

void CudaTarget::Check(const model::Module& module,
                       const BuildSettings& settings,
                       diag::DiagnosticEngine& diags) const {
  if (std::find(settings.targets.begin(), settings.targets.end(),
                model::Target::kCpu) != settings.targets.end())
    return;
  for (const model::Kernel& k : module.kernels)
    if (k.kind == model::KernelKind::kHost)
      diags.Report<diag::Id::kHostKernelNeedsCpu>(k.loc, k.name);
}

bool CudaTarget::AddToCacheKey(cache::KeyBuilder& key) {
  keyed_ = backends::LocateNvrtc();
  if (!keyed_ || !key.AddFileIdentity("nvrtc", keyed_->library)) return false;
  key.Add("cuda-include", keyed_->cuda_include);
  return true;
}

Status CudaTarget::CompileKernels(const sema::ModulePlan& plan,
                                  const BuildSettings& settings,
                                  model::BuildInfo* info,
                                  diag::DiagnosticEngine& diags) {
  Result<backends::Nvrtc> nvrtc = backends::FindNvrtc();
  if (!nvrtc.ok()) return nvrtc.error();
  Result<std::vector<int>> archs = backends::ParseCudaArchs(
      settings.cuda_archs.empty() ? kDefaultCudaArchs : settings.cuda_archs,
      nvrtc.value(), diags);
  if (!archs.ok()) return archs.error();
  backends::CudaBuild cb;
  cb.archs = archs.value();
  cb.fast_math = settings.use_fast_math;
  cb.lineinfo = settings.lineinfo;
  cb.include_dirs = settings.include_dirs;
  cb.defines = settings.defines;
  cb.fold_program = [&plan](const std::string& source, std::string_view text,
                            const std::vector<const model::Kernel*>& kernels) {
    return emit::CudaFoldProgram(plan, source, text, kernels);
  };
  cb.progress = settings.progress;
  Result<std::vector<model::CudaBinary>> bins =
      backends::CompileCuda(nvrtc.value(), *plan.module, cb, diags);
  if (!bins.ok()) return bins.error();
  info->cuda_archs = cb.archs;
  info->cuda_fast_math = cb.fast_math;
  info->cuda_binaries = std::move(bins).value();
  info->cuda_version = nvrtc.value().cuda_version();
  compiled_with_ = nvrtc.value().library();
  return Status();
}

IdentityFields CudaTarget::ContentHashFields(
    const model::BuildInfo& info) const {
  IdentityFields fields;
  if (info.cuda_version != 0)
    fields.emplace_back("cuda",
                        "nvrtc " + model::CudaVersionText(info.cuda_version));
  for (const model::CudaBinary& b : info.cuda_binaries) {
    for (const model::CudaImage& im : b.images)
      fields.emplace_back(b.source, im.sha256);
    for (const model::CudaImage& im : b.fold_images)
      fields.emplace_back("fold", im.sha256);
  }
  return fields;
}

bool CudaTarget::CompiledWithKeyedToolchain() const {
  return compiled_with_.empty() ||
         (keyed_ && compiled_with_ == keyed_->library);
}

std::vector<std::string> CudaTarget::UnreportedIncludeDirs() const {
  if (!keyed_ || keyed_->cuda_include.empty()) return {};
  return backends::ToolkitIncludeDirs(keyed_->cuda_include);
}

}  // namespace kernelc::targets
