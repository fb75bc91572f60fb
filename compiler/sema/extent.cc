#include "compiler/sema/extent.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernelc/arith.h"

namespace kernelc::sema {

using expr::Op;
using model::Param;
using model::Role;

Extent Extent::Const(int64_t c) {
  Extent e;
  if (c != 0) e.terms_[{}] = c;
  return e;
}

Extent Extent::Var(const std::string& name) { return Factor("v:" + name); }

Extent Extent::Atom(const std::string& key) { return Factor("a:" + key); }

Extent Extent::Unknown() {
  Extent e;
  e.unknown_ = true;
  return e;
}

Extent Extent::Factor(std::string name) {
  Extent e;
  e.terms_[{std::move(name)}] = 1;
  return e;
}

std::optional<int64_t> Extent::Constant() const {
  if (unknown_) return std::nullopt;
  if (terms_.empty()) return 0;
  if (terms_.size() == 1 && terms_.begin()->first.empty())
    return terms_.begin()->second;
  return std::nullopt;
}

bool Extent::Accumulate(const Monomial& m, int64_t c, Op op) {
  int64_t& slot = terms_[m];
  const kc::arith::Checked r = kc::arith::Apply(op, slot, c);
  if (!r.ok()) return false;
  slot = r.value;
  if (slot == 0) terms_.erase(m);
  return true;
}

Extent Extent::Combine(const Extent& a, const Extent& b, Op op) {
  if (a.unknown_ || b.unknown_) return Unknown();
  Extent r = a;
  for (const auto& [m, c] : b.terms_)
    if (!r.Accumulate(m, c, op)) return Unknown();
  return r;
}

Extent Extent::Multiply(const Extent& a, const Extent& b) {
  if (a.unknown_ || b.unknown_) return Unknown();
  Extent r;
  for (const auto& [ma, ca] : a.terms_)
    for (const auto& [mb, cb] : b.terms_) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      const kc::arith::Checked c = kc::arith::Mul(ca, cb);
      if (!c.ok() || !r.Accumulate(m, c.value, Op::kAdd)) return Unknown();
    }
  return r;
}

Extent Extent::Negate(const Extent& a) {
  return Combine(Const(0), a, Op::kSub);
}

Extent Extent::Apply(expr::UnaryOp op, const Extent& a) {
  if (op == expr::UnaryOp::kNeg) return Negate(a);
  if (a.unknown_) return Unknown();
  if (const std::optional<int64_t> x = a.Constant()) {
    const kc::arith::Checked r = kc::arith::Apply(op, *x);
    return r.ok() ? Const(r.value) : Unknown();
  }
  return Atom(fmt::format("u{}({})", static_cast<int>(op), a.Key()));
}

Extent Extent::Apply(Op op, const Extent& a, const Extent& b) {
  switch (op) {
    case Op::kAdd:
    case Op::kSub:
      return Combine(a, b, op);
    case Op::kMul:
      return Multiply(a, b);
    default:
      break;
  }
  if (a.unknown_ || b.unknown_) return Unknown();
  const std::optional<int64_t> x = a.Constant(), y = b.Constant();
  if (x && y) {
    const kc::arith::Checked r = kc::arith::Apply(op, *x, *y);
    return r.ok() ? Const(r.value) : Unknown();
  }
  if ((op == Op::kFloorDiv || op == Op::kCeilDiv) && y == 1) return a;
  return Atom(
      fmt::format("{}({}, {})", static_cast<int>(op), a.Key(), b.Key()));
}

std::string Extent::Key() const {
  if (unknown_) return "?";
  std::vector<std::string> parts;
  for (const auto& [m, c] : terms_)
    parts.push_back(
        fmt::format("{}{}{}", c, m.empty() ? "" : "*", fmt::join(m, "*")));
  return parts.empty() ? "0" : fmt::format("{}", fmt::join(parts, " + "));
}

bool Extent::NonzeroSomewhere(const std::set<std::string>& constrained) const {
  if (unknown_ || terms_.empty()) return false;
  for (const auto& [m, c] : terms_)
    for (const std::string& f : m)
      if (f.rfind("a:", 0) == 0 || constrained.count(f)) return false;
  return true;
}

void Extent::VarsInto(std::set<std::string>& out) const {
  for (const auto& [m, c] : terms_)
    for (const std::string& f : m)
      if (f.rfind("v:", 0) == 0) out.insert(f);
}

// Constants and operations are the extents' own; leaves are the model's.
struct ExtentModel::Algebra {
  ExtentModel& model;
  Extent Int(int64_t v) const { return Extent::Const(v); }
  Extent Leaf(const expr::Node& n) const { return model.Leaf(n); }
  Extent Unary(expr::UnaryOp op, const Extent& a) const {
    return Extent::Apply(op, a);
  }
  Extent Binary(Op op, const Extent& a, const Extent& b) const {
    return Extent::Apply(op, a, b);
  }
};

ExtentModel::ExtentModel(const KernelPlan& kp,
                         std::function<Extent(int, int)> input_dim)
    : kp_(kp), k_(*kp.kernel), input_dim_(std::move(input_dim)) {}

Extent ExtentModel::Dim(int i, int d) {
  const Param& p = k_.params[i];
  const ParamPlan& pp = kp_.params[i];
  // After "...", dimensions count from the last: the same as their index
  // among those written.
  auto written = [&pp](int x) { return pp.leading && x < 0 ? x + pp.rank : x; };
  d = written(d);
  auto key = std::make_pair(i, d);
  if (auto it = dims_.find(key); it != dims_.end()) return it->second;
  Extent atom =
      Extent::Atom(fmt::format("{}:{}.shape[{}]", k_.name, p.name, d));
  if (d < 0 || d >= pp.rank) return atom;
  if (active_.count(key)) {
    cyclic_.insert(key);
    return atom;
  }
  Extent e = atom;
  if (model::IsInput(p.role) && input_dim_) {
    e = input_dim_(i, d);
  } else if (model::IsInput(p.role)) {
    const expr::Node* check = nullptr;
    for (const DimCheck& c : kp_.checks)
      if (c.param == i && written(c.dim) == d) check = c.expr.get();
    bool bound = false;
    for (const Symbol& s : kp_.symbols)
      if (s.param == i && written(s.dim) == d) {
        e = Extent::Var(fmt::format("{}:{}", k_.name, s.name));
        bound = true;
      }
    if (!bound && d < static_cast<int>(pp.any_dim.size()) && pp.any_dim[d])
      e = Extent::Var(fmt::format("{}:{}.shape[{}]", k_.name, p.name, d));
    else if (!bound && check != nullptr)
      e = Guarded(key, [&] { return Eval(*check); });
  } else if (p.role == Role::kOut && d < static_cast<int>(pp.out_dims.size())) {
    e = Guarded(key, [&] { return Eval(*pp.out_dims[d]); });
  }
  if (cyclic_.count(key)) {
    e.VarsInto(constrained_);
    e = atom;
  }
  dims_.emplace(key, e);
  return e;
}

Extent ExtentModel::Eval(const expr::Node& e) {
  return expr::Fold(e, Algebra{*this});
}

Extent ExtentModel::Leaf(const expr::Node& e) {
  using Kind = expr::Node::Kind;
  const int j = k_.IndexOf(e.name);
  switch (e.kind) {
    case Kind::kName: {
      if (j >= 0) {
        const Param& p = k_.params[j];
        if (p.role == Role::kScalar && model::IsInteger(p.dtype))
          return Extent::Var("scalar:" + p.name);
        if (p.role == Role::kDerived && kp_.params[j].derived)
          return Derived(j);
        return Extent::Unknown();
      }
      for (const Symbol& s : kp_.symbols)
        if (s.name == e.name) return Dim(s.param, s.dim);
      return Extent::Unknown();
    }
    case Kind::kSize: {
      if (j < 0 || kp_.params[j].rank < 0 || kp_.params[j].leading)
        return Extent::Unknown();
      Extent size = Extent::Const(1);
      for (int d = 0; d < kp_.params[j].rank; ++d)
        size = Extent::Apply(Op::kMul, size, Dim(j, d));
      return size;
    }
    case Kind::kRank:
      if (j < 0 || kp_.params[j].rank < 0 || kp_.params[j].leading)
        return Extent::Unknown();
      return Extent::Const(kp_.params[j].rank);
    case Kind::kShape:
      if (j < 0) return Extent::Unknown();
      return Dim(j, static_cast<int>(e.value));
    default:
      return Extent::Unknown();
  }
}

// A derived value whose expression reaches the value again (through a
// dimension checked against it: "n" with n = x.size) is an atom.
Extent ExtentModel::Derived(int j) {
  if (auto it = derived_.find(j); it != derived_.end()) return it->second;
  Extent atom = Extent::Atom(fmt::format("{}:{}", k_.name, k_.params[j].name));
  if (active_derived_.count(j)) {
    cyclic_derived_.insert(j);
    return atom;
  }
  active_derived_.insert(j);
  Extent v = Eval(*kp_.params[j].derived);
  active_derived_.erase(j);
  if (cyclic_derived_.count(j)) {
    v.VarsInto(constrained_);
    v = atom;
  }
  derived_.emplace(j, v);
  return v;
}

}  // namespace kernelc::sema
