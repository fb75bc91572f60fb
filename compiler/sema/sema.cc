#include "compiler/sema/sema.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <string_view>
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

const OpPlan* ModulePlan::FindOp(std::string_view op) const {
  for (const OpPlan& o : ops)
    if (o.name == op) return &o;
  return nullptr;
}

namespace {

// The element types of a kernel's input tensors, by which its op chooses
// among variants: "float32, int32".
std::string InputTypes(const Kernel& k) {
  std::vector<std::string> types;
  for (const Param& p : k.params)
    if (model::IsInput(p.role)) types.emplace_back(model::DTypeName(p.dtype));
  return fmt::format("{}", fmt::join(types, ", "));
}

// Groups the kernels into ops: a kernel is an op of its own, and the
// variants of a template kernel one op. Reports two ops of one name and
// two variants that no call could choose between.
void AnalyzeOps(ModulePlan& plan, diag::DiagnosticEngine& diags) {
  const std::vector<Kernel>& kernels = plan.module->kernels;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    OpPlan* op = nullptr;
    for (OpPlan& o : plan.ops)
      if (o.name == k.Op()) op = &o;
    if (op == nullptr) {
      plan.ops.push_back({k.Op(), {}, k.instantiation.has_value()});
      op = &plan.ops.back();
    } else if (!op->is_template || !k.instantiation) {
      // Two plain kernels of one name are reported as defined twice.
      const Kernel& first = kernels[op->variants.front()];
      if (op->is_template != k.instantiation.has_value()) {
        const Kernel& plain = op->is_template ? k : first;
        diags.Report<diag::Id::kOpNameTaken>(k.loc, plain.name, k.Op(), k.Op());
      }
      continue;
    }
    const std::string types = InputTypes(k);
    for (int j : op->variants) {
      const Kernel& other = kernels[j];
      if (InputTypes(other) != types) continue;
      diags.Report<diag::Id::kVariantsAmbiguous>(k.instantiation->loc, k.name,
                                                 other.name, k.Op(), types);
      diags.Report<diag::Id::kVariantDeclaredHere>(other.instantiation->loc,
                                                   other.name);
      break;
    }
    op->variants.push_back(static_cast<int>(i));
  }
}

}  // namespace

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
  AnalyzeOps(plan, diags);
  AnalyzePairings(plan, clean, diags);
  if (diags.error_count() > errors_before) return Error::Reported();
  return plan;
}

}  // namespace kernelc::sema
