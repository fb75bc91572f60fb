#include "compiler/sema/grid_guard.h"

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "compiler/expr/expr.h"

namespace kernelc::sema {

namespace {

using expr::Node;

// A canonical text of an expression, equal for two expressions only when
// they denote the same value for every call: derived values are replaced
// by their expressions and tensors by the tensor whose shape they share.
// Nothing is simplified, so "n + 0" is not "n": a guard the comparison
// misses stays, which costs only speed. The algebra of an expr::Fold.
class Canon {
 public:
  Canon(const model::Kernel& k, const KernelPlan& plan) : k_(k), plan_(plan) {}

  // Empty when derived values nest too deep to follow.
  std::string Of(const Node& e) { return expr::Fold(e, *this); }

  std::string Int(int64_t value) const { return fmt::format("{}", value); }
  std::string Leaf(const Node& n) {
    switch (n.kind) {
      case Node::Kind::kName:
        return Name(n.name);
      case Node::Kind::kSize:
        return "size " + Tensor(n.name);
      case Node::Kind::kRank:
        return "rank " + Tensor(n.name);
      default:
        return fmt::format("shape {} {}", Tensor(n.name), n.value);
    }
  }
  std::string Unary(expr::UnaryOp op, const std::string& a) const {
    return fmt::format("(u{} {})", static_cast<int>(op), a);
  }
  std::string Binary(expr::Op op, const std::string& a,
                     const std::string& b) const {
    return fmt::format("(b{} {} {})", static_cast<int>(op), a, b);
  }
  bool Done(const std::string& a) const { return a.empty(); }

  // A parameter's name, or a derived value's expression.
  std::string Name(const std::string& name) {
    const int i = k_.IndexOf(name);
    if (i < 0 || k_.params[i].role != model::Role::kDerived ||
        !plan_.params[i].derived)
      return "name " + name;
    if (depth_ == kMaxDepth) return "";
    ++depth_;
    std::string s = Of(*plan_.params[i].derived);
    --depth_;
    return s;
  }

 private:
  static constexpr int kMaxDepth = 64;

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
  int depth_ = 0;
};

}  // namespace

bool GuardBoundsGrid(const model::Kernel& k, const KernelPlan& plan) {
  if (!k.guard || k.kind != model::KernelKind::kGlobal ||
      plan.block_executor || k.grid_in_blocks || plan.grid.size() != 1 ||
      plan.block.size() != 1 || !plan.grid[0])
    return false;
  const int bound = k.IndexOf(k.guard->bound);
  if (bound < 0) return false;
  const model::Param& p = k.params[bound];
  if (p.role != model::Role::kScalar && p.role != model::Role::kDerived)
    return false;
  Canon canon(k, plan);
  const std::string grid = canon.Of(*plan.grid[0]);
  return !grid.empty() && grid == canon.Name(p.name);
}

}  // namespace kernelc::sema
