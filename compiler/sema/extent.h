// Extents as the build can know them: symbolic comparison of dimensions,
// for the shapes of paired kernels (KC_VJP, KC_JVP).
#ifndef KERNELC_COMPILER_SEMA_EXTENT_H_
#define KERNELC_COMPILER_SEMA_EXTENT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/expr/expr.h"
#include "compiler/model/model.h"
#include "compiler/sema/sema.h"

namespace kernelc::sema {

// A dimension's extent, as far as the build can tell it: a polynomial with
// integer coefficients in free quantities (a forward kernel's shape symbols,
// its inputs' "_" dimensions and its integer scalars) and opaque atoms (what
// a polynomial cannot express: division, modulo, min, max and ceil_div over
// unknowns, or a dimension checked against an expression that reaches the
// dimension again); or unknown.
//
// Two extents certainly differ for some call when their difference is a
// nonzero polynomial in free quantities alone, since a nonzero polynomial is
// nonzero somewhere on any product of infinite sets of integers. When the
// difference holds an atom, nothing is concluded: the trace-time checks of
// the generated wrapper see the real shapes.
//
// Extents are an algebra for expr::Fold: constants compute with the int64
// arithmetic of kernelc/arith.h, and a coefficient that would leave int64
// makes the extent unknown.
class Extent {
 public:
  static Extent Const(int64_t c);
  // A free quantity.
  static Extent Var(const std::string& name);
  // An opaque quantity, identified by `key`.
  static Extent Atom(const std::string& key);
  static Extent Unknown();

  bool unknown() const { return unknown_; }

  // The value, when this is a constant.
  std::optional<int64_t> Constant() const;

  // An operation of the expression language: polynomial arithmetic for
  // + - *, computed on constants otherwise, else an atom.
  static Extent Apply(expr::Op op, const Extent& a, const Extent& b);
  // A unary operation: Negate for minus; computed on a constant
  // otherwise, else an atom.
  static Extent Apply(expr::UnaryOp op, const Extent& a);
  static Extent Negate(const Extent& a);

  // Canonical text: equal polynomials have equal keys.
  std::string Key() const;

  // Whether this is certainly nonzero for some values of the free
  // quantities, none of which is in `constrained`.
  bool NonzeroSomewhere(const std::set<std::string>& constrained) const;

  // The free quantities this mentions, as Var named them.
  void VarsInto(std::set<std::string>& out) const;

 private:
  using Monomial = std::vector<std::string>;  // sorted factors

  static Extent Factor(std::string name);
  static Extent Combine(const Extent& a, const Extent& b, expr::Op op);
  static Extent Multiply(const Extent& a, const Extent& b);
  // Adds c to (or, with kSub, subtracts it from) the coefficient of m;
  // false on overflow.
  bool Accumulate(const Monomial& m, int64_t c, expr::Op op);

  std::map<Monomial, int64_t> terms_;  // nonzero coefficients
  bool unknown_ = false;
};

// The extents of one kernel's tensors and expressions. A forward kernel's
// input dimensions are free quantities (a symbol's binding, a "_"), or the
// expression they are checked against. The kernel that differentiates it
// receives forward values: its input dimensions come from `input_dim`.
class ExtentModel {
 public:
  explicit ExtentModel(const KernelPlan& kp,
                       std::function<Extent(int, int)> input_dim = nullptr);

  // Free quantities that a dimension checked against itself constrains
  // (with x of shape "n, k" and n = x.size, k must be 1): never concluded
  // on.
  const std::set<std::string>& constrained() const { return constrained_; }

  // Dimension d of parameter i.
  Extent Dim(int i, int d);

  // An expression of the kernel, folded with extents for values.
  Extent Eval(const expr::Node& e);

 private:
  struct Algebra;

  Extent Leaf(const expr::Node& e);
  Extent Derived(int j);

  template <typename F>
  Extent Guarded(std::pair<int, int> key, F f) {
    active_.insert(key);
    Extent e = f();
    active_.erase(key);
    return e;
  }

  const KernelPlan& kp_;
  const model::Kernel& k_;
  std::function<Extent(int, int)> input_dim_;
  std::map<std::pair<int, int>, Extent> dims_;
  std::set<std::pair<int, int>> active_, cyclic_;
  std::map<int, Extent> derived_;
  std::set<int> active_derived_, cyclic_derived_;
  std::set<std::string> constrained_;
};

}  // namespace kernelc::sema

#endif  // KERNELC_COMPILER_SEMA_EXTENT_H_
