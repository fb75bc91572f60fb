#include "compiler/targets/cpu_target.h"

#include <fmt/format.h>

#include "compiler/emit/generators.h"

namespace kernelc::targets {

void CpuTarget::Check(const model::Module& module,
                      const BuildSettings& /*settings*/,
                      diag::DiagnosticSink& diags) const {
  for (const model::Kernel& k : module.kernels) {
    if (k.block_features.empty()) continue;
    if (k.kind == model::KernelKind::kHost) {
      diags.Error(k.loc,
                  fmt::format("host kernel '{}' uses {}: a KC_KERNEL function "
                              "runs once per call, not as a block of threads; "
                              "block-level features need a __global__ kernel",
                              k.name, k.block_features.front().what));
      continue;
    }
    for (const model::BlockFeature& f : k.block_features)
      if (f.what == model::kGridSync)
        diags.Error(f.loc,
                    fmt::format("kernel '{}' synchronizes its whole grid "
                                "(cooperative_groups::grid_group::sync), which "
                                "cannot run on the cpu target: the CPU runs a "
                                "grid's blocks a few at a time, so a barrier "
                                "across all of them never completes; split the "
                                "kernel in two at the barrier, or build it for "
                                "--target cuda alone",
                                k.name));
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
    if (generated.count(file)) units.push_back({file, source_paths[i]});
  }
  return units;
}

}  // namespace kernelc::targets
