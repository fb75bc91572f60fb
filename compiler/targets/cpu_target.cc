#include "compiler/targets/cpu_target.h"

#include "compiler/emit/generators.h"

namespace kernelc::targets {

void CpuTarget::Check(const model::Module& module,
                      const BuildSettings& /*settings*/,
                      diag::DiagnosticEngine& diags) const {
  for (const model::Kernel& k : module.kernels) {
    if (k.source.empty()) {
      diags.Report<diag::Id::kPtxNoCpuCode>(k.loc, k.name);
      continue;
    }
    if (k.block_features.empty()) continue;
    if (k.kind == model::KernelKind::kHost) {
      diags.Report<diag::Id::kHostKernelBlockFeature>(
          k.loc, k.name, k.block_features.front().what);
      continue;
    }
    for (const model::BlockFeature& f : k.block_features)
      if (f.what == model::kGridSync)
        diags.Report<diag::Id::kCpuGridSync>(f.loc, k.name);
  }
}

std::vector<backends::HostBuild::UserUnit> CpuTarget::HostUnits(
    const model::Module& module, const std::vector<std::string>& source_paths,
    const std::map<std::string, std::string>& generated) const {
  std::vector<backends::HostBuild::UserUnit> units;
  for (size_t i = 0; i < module.sources.size(); ++i) {
    std::string file =
        emit::HostSourceName(module.sources[i], static_cast<int>(i));
    // A source without kernels has no entry points.
    if (!generated.count(file)) continue;
    backends::HostBuild::UserUnit unit{file, source_paths[i], {}, {}};
    if (i < module.kernel_texts.size()) {
      const model::KernelText& t = module.kernel_texts[i];
      unit.text = t.cpu;
      for (const model::KernelText::Header& h : t.headers)
        if (!h.cpu.empty()) unit.headers.push_back({h.name, h.cpu});
    }
    units.push_back(std::move(unit));
  }
  return units;
}

}  // namespace kernelc::targets
