#include "compiler/sema/grid_guard.h"

#include <fmt/format.h>

#include <string>

namespace kernelc::sema {

namespace {

using expr::Node;

// A canonical text of an expression, equal for two expressions only when
// they denote the same value for every call: derived values are replaced
// by their expressions and tensors by the tensor whose shape they share.
// Nothing is simplified, so "n + 0" is not "n": a guard the comparison
// misses stays, which costs only speed.
class Canon {
 public:
  Canon(const model::Kernel& k, const KernelPlan& plan) : k_(k), plan_(plan) {}

  // Empty when the expression is too deep to follow.
  std::string Of(const expr::NodePtr& e, int depth = 0) const {
    if (!e || depth > kMaxDepth) return "";
    switch (e->kind) {
      case Node::Kind::kInt:
        return fmt::format("{}", e->value);
      case Node::Kind::kName: {
        const int i = k_.IndexOf(e->name);
        if (i >= 0 && k_.params[i].role == model::Role::kDerived &&
            plan_.params[i].derived)
          return Of(plan_.params[i].derived, depth + 1);
        return "name " + e->name;
      }
      case Node::Kind::kSize:
        return "size " + Tensor(e->name);
      case Node::Kind::kRank:
        return "rank " + Tensor(e->name);
      case Node::Kind::kShape:
        return fmt::format("shape {} {}", Tensor(e->name), e->value);
      case Node::Kind::kNeg:
        return Args("-", e, depth);
      case Node::Kind::kBinary:
        return Args(std::string(1, e->op), e, depth);
      case Node::Kind::kCall:
        return Args(e->name, e, depth);
    }
    return "";
  }

 private:
  static constexpr int kMaxDepth = 64;

  std::string Args(const std::string& head, const expr::NodePtr& e,
                   int depth) const {
    std::string s = "(" + head;
    for (const expr::NodePtr& a : e->args) {
      std::string arg = Of(a, depth + 1);
      if (arg.empty()) return "";
      s += " " + arg;
    }
    return s + ")";
  }

  // The tensor whose shape `name`'s is, through shape texts that name
  // another tensor ("x": x's shape).
  std::string Tensor(std::string name) const {
    for (size_t hops = 0; hops <= k_.params.size(); ++hops) {
      const model::Param* p = k_.FindParam(name);
      if (p == nullptr || !p->shape || !k_.FindParam(p->shape->text) ||
          !model::IsTensor(k_.FindParam(p->shape->text)->role))
        return name;
      name = p->shape->text;
    }
    return name;
  }

  const model::Kernel& k_;
  const KernelPlan& plan_;
};

}  // namespace

bool GuardBoundsGrid(const model::Kernel& k, const KernelPlan& plan) {
  if (!k.guard || k.kind != model::KernelKind::kGlobal ||
      plan.block_executor || k.grid_in_blocks || plan.grid.size() != 1 ||
      plan.block.size() != 1)
    return false;
  const int bound = k.IndexOf(k.guard->bound);
  if (bound < 0) return false;
  const model::Param& p = k.params[bound];
  if (p.role != model::Role::kScalar && p.role != model::Role::kDerived)
    return false;
  Canon canon(k, plan);
  const std::string grid = canon.Of(plan.grid[0]);
  auto name = std::make_shared<Node>();
  name->kind = Node::Kind::kName;
  name->name = p.name;
  return !grid.empty() && grid == canon.Of(name);
}

}  // namespace kernelc::sema
