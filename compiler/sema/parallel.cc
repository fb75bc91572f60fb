#include "compiler/sema/parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kernelc::sema {

using diag::Id;
using model::Kernel;
using model::Param;
using model::Role;
using model::Text;

namespace {

// Which parallel symbol an expression depends on: directly, through a
// tensor's size or a dimension of its shape (a dimension that is a
// parallel symbol, or is checked against an expression that depends on
// one), or through derived values.
class ParallelDeps {
 public:
  ParallelDeps(const Kernel& k, const Shapes& shapes, const KernelPlan& plan,
               const std::set<std::string>& parallel)
      : k_(k), shapes_(shapes), plan_(plan), parallel_(parallel) {}

  // The first parallel symbol `e` depends on, in evaluation order, or "".
  std::string OfExpr(const expr::NodePtr& e) {
    return expr::Fold(*e, Algebra{*this});
  }

 private:
  // A dependency passes through every operation; the first one found is
  // the answer.
  struct Algebra {
    ParallelDeps& deps;
    std::string Int(int64_t) const { return ""; }
    std::string Leaf(const expr::Node& n) const { return deps.OfLeaf(n); }
    std::string Unary(expr::UnaryOp, std::string a) const { return a; }
    std::string Binary(expr::Op, std::string a, std::string b) const {
      return a.empty() ? b : a;
    }
    bool Done(const std::string& a) const { return !a.empty(); }
  };

  std::string OfLeaf(const expr::Node& n) {
    using Kind = expr::Node::Kind;
    const int j = k_.IndexOf(n.name);
    switch (n.kind) {
      case Kind::kName: {
        if (parallel_.count(n.name)) return n.name;
        if (j < 0 || k_.params[j].role != Role::kDerived ||
            !plan_.params[j].derived)
          return "";
        auto [it, fresh] = derived_.emplace(j, "");
        if (fresh) it->second = OfExpr(plan_.params[j].derived);
        return it->second;
      }
      case Kind::kSize:
        if (j < 0 || !shapes_.Resolved(j)) return "";
        for (size_t d = 0; d < shapes_.dims[j].size(); ++d) {
          std::string dep = OfDim(j, static_cast<int>(d));
          if (!dep.empty()) return dep;
        }
        return "";
      case Kind::kShape:
        if (j < 0 || !shapes_.Resolved(j) || n.value < 0 ||
            n.value >= static_cast<int64_t>(shapes_.dims[j].size()))
          return "";
        return OfDim(j, static_cast<int>(n.value));
      default:
        return "";
    }
  }

  std::string OfDim(int i, int d) {
    const std::string& label = plan_.params[i].dim_symbols[d];
    if (parallel_.count(label)) return label;
    const DimSpec& s = shapes_.dims[i][d];
    if (s.any) return "";
    // A dimension checked against an expression that reaches the
    // dimension again ("n" with derived n = x.size) adds nothing.
    auto [it, fresh] = dims_.emplace(std::make_pair(i, d), "");
    if (fresh) it->second = OfExpr(s.expr);
    return it->second;
  }

  const Kernel& k_;
  const Shapes& shapes_;
  const KernelPlan& plan_;
  const std::set<std::string>& parallel_;
  std::map<int, std::string> derived_;
  std::map<std::pair<int, int>, std::string> dims_;
};

// KC_SUM: an output that sums over a parallel dimension it does not have.
// Its partial sums add up to the whole one only when it is written by the
// kernel alone (an Out: an in-place output's initial value would be added
// once per device) and holds numbers.
void AnalyzeSums(const Kernel& k, const Shapes& shapes, KernelPlan& plan,
                 diag::DiagnosticEngine& diags) {
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param& p = k.params[i];
    if (!p.sum) continue;
    const Text& t = *p.sum;
    if (p.role != Role::kOut) {
      const char* what = p.role == Role::kIn      ? "an input"
                         : p.role == Role::kInMut ? "an in-place output"
                         : p.role == Role::kScalar ? "a scalar"
                                                   : "a derived value";
      diags.Report<Id::kSumNotOutput>(t.loc, p.name, k.name, p.name, what);
      continue;
    }
    if (!model::IsFloat(p.dtype) && !model::IsInteger(p.dtype)) {
      diags.Report<Id::kSumNotNumber>(t.loc, p.name, k.name, p.name,
                                      model::DTypeName(p.dtype));
      continue;
    }
    if (std::none_of(k.parallel.begin(), k.parallel.end(),
                     [&t](const Text& q) { return q.text == t.text; })) {
      diags.Report<Id::kSumNotParallel>(t.loc, t.text, p.name, k.name,
                                        t.text);
      continue;
    }
    const std::vector<std::string>& labels = plan.params[i].dim_symbols;
    if (shapes.Resolved(i) &&
        std::find(labels.begin(), labels.end(), t.text) != labels.end()) {
      diags.Report<Id::kSumHasDimension>(t.loc, t.text, p.name, k.name,
                                         p.name, t.text);
      continue;
    }
    // A KC_PARALLEL name that failed its own checks was reported there.
    if (std::find(plan.parallel.begin(), plan.parallel.end(), t.text) !=
        plan.parallel.end())
      plan.params[i].sum = t.text;
  }
}

}  // namespace

// Under sharding each device runs the kernel on its shard, and everything
// computed from shapes (symbols, derived values, output shapes, the grid) is
// computed from the shard's extents. The local results are slices of the
// whole ones only when:
//  - each name is a whole dimension of an input (a shard of it is a shard
//    of the inputs, and its local value comes from a local shape), and at
//    most one dimension of any tensor;
//  - every output has each name as a whole dimension: a device writes
//    only its slice of every output, so an output without the dimension
//    would hold one device's partial result;
//  - a dimension that depends on a name, directly or through sizes,
//    shapes and derived values, is that name: every other dimension is
//    replicated and must have its whole extent on each shard;
//  - a named derived value depends on a parallel dimension, or it would
//    keep its whole value on a shard whose dimensions it sizes.
void AnalyzeParallel(const Kernel& k, const Shapes& shapes, KernelPlan& plan,
                     diag::DiagnosticEngine& diags) {
  // The names that are whole dimensions of inputs, shape symbols or
  // derived values: dependencies are traced to these.
  std::set<std::string> parallel;
  for (const Text& t : k.parallel)
    for (size_t i = 0; i < k.params.size(); ++i)
      if (model::IsInput(k.params[i].role) && shapes.Resolved(i))
        for (const std::string& s : plan.params[i].dim_symbols)
          if (s == t.text) parallel.insert(s);
  ParallelDeps deps(k, shapes, plan, parallel);
  std::set<std::string> seen;
  for (const Text& t : k.parallel) {
    if (!seen.insert(t.text).second) {
      diags.Report<Id::kParallelTwice>(t.loc, k.name, t.text);
      continue;
    }
    if (!parallel.count(t.text)) {
      diags.Report<Id::kParallelNotInputDimension>(t.loc, k.name, t.text);
      continue;
    }
    const int errors = diags.error_count();
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (!shapes.Resolved(i)) continue;
      const Param& p = k.params[i];
      const std::vector<std::string>& labels = plan.params[i].dim_symbols;
      // Dimensions that use the name, or depend on it, without being it.
      bool uses = false;
      for (size_t d = 0; d < shapes.dims[i].size(); ++d) {
        const DimSpec& s = shapes.dims[i][d];
        if (s.any || s.copied || parallel.count(labels[d])) continue;
        std::vector<std::string> used = expr::NamesUsed(s.expr);
        if (std::find(used.begin(), used.end(), t.text) != used.end()) {
          diags.Report<Id::kParallelPartOfDimension>(t.loc, k.name, t.text,
                                                     p.name, s.text);
          uses = true;
          continue;
        }
        bool direct = false;  // on another parallel name: reported there
        for (const std::string& n : used) direct |= parallel.count(n) > 0;
        if (direct || deps.OfExpr(s.expr) != t.text) continue;
        diags.Report<Id::kParallelDependentDimension>(t.loc, k.name, t.text,
                                                      s.text, p.name);
        uses = true;
      }
      long count = std::count(labels.begin(), labels.end(), t.text);
      if (count > 1)
        diags.Report<Id::kParallelRepeatedDimension>(t.loc, k.name, t.text,
                                                     count, p.name);
      const bool summed = p.sum && p.sum->text == t.text;
      if (model::IsResult(p.role) && count == 0 && !uses && !summed)
        diags.Report<Id::kParallelMissingFromOutput>(
            t.loc, k.name, t.text,
            p.role == Role::kOut ? "output" : "in-place output", p.name,
            t.text);
    }
    int j = k.IndexOf(t.text);
    if (j >= 0 && k.params[j].role == Role::kDerived &&
        plan.params[j].derived && deps.OfExpr(plan.params[j].derived).empty())
      diags.Report<Id::kParallelDerivedUnsharded>(
          t.loc, k.name, t.text, k.params[j].derived->text, t.text);
    if (diags.error_count() == errors) plan.parallel.push_back(t.text);
  }
  AnalyzeSums(k, shapes, plan, diags);
}

}  // namespace kernelc::sema
