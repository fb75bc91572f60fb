#include "compiler/targets/cpu_target.h"

#include <fmt/format.h>

#include "compiler/emit/generators.h"

namespace kernelc::targets {

void CpuTarget::Check(const model::Module& module,
                      const BuildSettings& /*settings*/,
                      diag::DiagnosticEngine& diags) const {
  for (const model::Kernel& k : module.kernels) {
    if (k.block_features.empty()) continue;
    std::string names;
    for (size_t i = 0; i < k.block_features.size(); ++i) {
      if (i > 0) names += i + 1 == k.block_features.size() ? " and " : ", ";
      names += k.block_features[i].what;
    }
    diags.Report<diag::Id::kCpuBlockFeatures>(k.loc, k.name, names);
    for (const model::BlockFeature& f : k.block_features)
      diags.Report<diag::Id::kBlockFeatureUsedHere>(f.loc, f.what);
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
