#include "compiler/sema/sema.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "compiler/sema/kernel_analyzer.h"
#include "compiler/sema/pairing.h"

namespace kernelc::sema {

using model::Kernel;
using model::Param;
using model::Role;

expr::NameKind KernelPlan::KindOf(std::string_view name) const {
  for (size_t i = 0; i < kernel->params.size(); ++i) {
    const Param& p = kernel->params[i];
    if (p.name != name) continue;
    switch (p.role) {
      case Role::kIn:
      case Role::kInMut:
      case Role::kOut:
        return expr::NameKind::kTensor;
      case Role::kDerived:
        return expr::NameKind::kIntValue;
      case Role::kScalar:
        return model::IsInteger(p.dtype) ? expr::NameKind::kIntValue
                                         : expr::NameKind::kFloatValue;
    }
  }
  for (const Symbol& s : symbols)
    if (s.name == name) return expr::NameKind::kSymbol;
  return expr::NameKind::kUnknown;
}

Result<ModulePlan> Analyze(const model::Module& module,
                           diag::DiagnosticEngine& diags) {
  int errors_before = diags.error_count();
  ModulePlan plan;
  plan.module = &module;
  std::map<std::string, const Kernel*> names;
  std::vector<bool> clean;  // per kernel: analysed without errors
  for (const Kernel& k : module.kernels) {
    auto [it, inserted] = names.emplace(k.name, &k);
    if (!inserted) {
      diags.Report<diag::Id::kKernelDefinedTwice>(k.loc, k.name);
      diags.Report<diag::Id::kFirstDefinedHere>(it->second->loc);
    }
    int before = diags.error_count();
    plan.kernels.push_back(AnalyzeKernel(k, diags));
    clean.push_back(diags.error_count() == before);
  }
  AnalyzePairings(plan, clean, diags);
  if (diags.error_count() > errors_before) return Error::Reported();
  return plan;
}

}  // namespace kernelc::sema
