#include "compiler/targets/cuda_target.h"

#include <fmt/format.h>

#include <algorithm>

#include "compiler/backends/ptx_backend.h"
#include "compiler/emit/generators.h"

namespace kernelc::targets {

void CudaTarget::Check(const model::Module& module,
                       const BuildSettings& settings,
                       diag::DiagnosticEngine& diags) const {
  const bool cpu = std::find(settings.targets.begin(), settings.targets.end(),
                             model::Target::kCpu) != settings.targets.end();
  for (const model::Kernel& k : module.kernels) {
    if (k.ptx) {
      // The cuda target never compiles a PTX kernel's source, so nothing
      // that needs its compiled code can be had (see CompileCuda).
      if (k.kind == model::KernelKind::kHost)
        diags.Report<diag::Id::kPtxHostKernel>(k.loc, k.name);
      for (const model::Param& p : k.params)
        if (p.traced) diags.Report<diag::Id::kPtxTraced>(p.loc, k.name, p.name);
    } else if (!cpu && k.kind == model::KernelKind::kHost) {
      diags.Report<diag::Id::kHostKernelNeedsCpu>(k.loc, k.name);
    }
  }
}

bool CudaTarget::AddToCacheKey(cache::KeyBuilder& key) {
  keyed_ = backends::LocateNvrtc();
  if (!keyed_ || !key.AddFileIdentity("nvrtc", keyed_->library)) return false;
  key.Add("cuda-include", keyed_->cuda_include);
  // And the ptxas that PTX kernels would be assembled with.
  if (std::optional<std::string> ptxas =
          backends::FindPtxas(keyed_->cuda_include))
    if (!key.AddFileIdentity("ptxas", *ptxas)) return false;
  return true;
}

namespace {

// The module's PTX kernels, assembled with the ptxas of NVRTC's toolkit.
Result<std::vector<model::CudaBinary>> AssemblePtx(
    const sema::ModulePlan& plan, const backends::CudaBuild& cb,
    const backends::Nvrtc& nvrtc, diag::DiagnosticEngine& diags) {
  const model::Module& module = *plan.module;
  if (std::none_of(module.kernels.begin(), module.kernels.end(),
                   [](const model::Kernel& k) { return k.ptx.has_value(); }))
    return std::vector<model::CudaBinary>();
  std::optional<std::string> ptxas = backends::FindPtxas(nvrtc.cuda_include());
  if (!ptxas)
    return Error::Internal(
        "no ptxas to assemble the PTX kernels: install the CUDA toolkit "
        "(/usr/local/cuda), set CUDA_HOME, or put ptxas on PATH");
  backends::PtxBuild pb;
  pb.ptxas = *ptxas;
  pb.archs = cb.archs;
  pb.progress = cb.progress;
  pb.params = [&plan](const model::Kernel& k) {
    std::vector<int> ranks;
    for (const sema::KernelPlan& kp : plan.kernels)
      if (kp.kernel == &k)
        for (const sema::ParamPlan& p : kp.params) ranks.push_back(p.rank);
    return model::PtxEntryParams(k, ranks);
  };
  return backends::AssemblePtx(module, pb,
                               static_cast<int>(module.sources.size()), diags);
}

}  // namespace

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
                            const std::vector<const model::Kernel*>& fold,
                            const std::vector<const model::Kernel*>& entries) {
    return emit::CudaFoldProgram(plan, source, text, fold, entries);
  };
  cb.progress = settings.progress;
  Result<std::vector<model::CudaBinary>> bins =
      backends::CompileCuda(nvrtc.value(), *plan.module, cb, diags);
  if (!bins.ok()) return bins.error();
  Result<std::vector<model::CudaBinary>> ptx =
      AssemblePtx(plan, cb, nvrtc.value(), diags);
  if (!ptx.ok()) return ptx.error();
  for (model::CudaBinary& b : ptx.value()) bins.value().push_back(std::move(b));
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
