#include "compiler/sema/extent.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <string>

#include "compiler/sema/sema_test_util.h"

// The fixtures (sema_test_util.h) are in scope.
namespace kernelc::sema::testing {
namespace {

using expr::Op;

Extent Sum(const Extent& a, const Extent& b) {
  return Extent::Apply(Op::kAdd, a, b);
}
Extent Diff(const Extent& a, const Extent& b) {
  return Extent::Apply(Op::kSub, a, b);
}
Extent Prod(const Extent& a, const Extent& b) {
  return Extent::Apply(Op::kMul, a, b);
}

const std::set<std::string> kFree;

TEST_CASE("constant extents compute with the runtime's arithmetic") {
  CHECK(Extent::Apply(Op::kFloorDiv, Extent::Const(-7), Extent::Const(2))
            .Constant() == -4);
  CHECK(Extent::Apply(Op::kFloorMod, Extent::Const(-7), Extent::Const(2))
            .Constant() == 1);
  CHECK(Extent::Apply(Op::kCeilDiv, Extent::Const(7), Extent::Const(2))
            .Constant() == 4);
  CHECK(
      Extent::Apply(Op::kMin, Extent::Const(3), Extent::Const(-4)).Constant() ==
      -4);
  // No value: division by zero, and coefficients beyond int64.
  CHECK(Extent::Apply(Op::kFloorDiv, Extent::Const(1), Extent::Const(0))
            .unknown());
  CHECK(Sum(Extent::Const(INT64_MAX), Extent::Const(1)).unknown());
  CHECK(Extent::Negate(Extent::Const(INT64_MIN)).unknown());
  CHECK(Prod(Extent::Var("n"), Extent::Const(INT64_MIN)).Key() ==
        std::to_string(INT64_MIN) + "*v:n");
  CHECK(Diff(Extent::Const(0), Prod(Extent::Var("n"), Extent::Const(INT64_MIN)))
            .unknown());
}

TEST_CASE("polynomials that differ somewhere are told apart") {
  const Extent n = Extent::Var("n"), m = Extent::Var("m");
  const Extent one = Extent::Const(1);
  // (n + 1)(n - 1) - (n * n - 1) is the zero polynomial.
  const Extent zero =
      Diff(Prod(Sum(n, one), Diff(n, one)), Diff(Prod(n, n), one));
  CHECK(zero.Key() == "0");
  CHECK_FALSE(zero.NonzeroSomewhere(kFree));
  CHECK(Diff(Sum(n, one), n).NonzeroSomewhere(kFree));
  CHECK(Diff(Prod(n, m), Prod(m, n)).Key() == "0");
  CHECK(Diff(n, m).NonzeroSomewhere(kFree));
  // Nothing is concluded about a constrained quantity.
  CHECK_FALSE(Diff(n, m).NonzeroSomewhere({"v:m"}));
}

TEST_CASE("division and its kin over unknowns are atoms") {
  const Extent n = Extent::Var("n");
  const Extent two = Extent::Const(2);
  const Extent halves =
      Extent::Apply(Op::kMul, Extent::Apply(Op::kFloorDiv, n, two), two);
  // n / 2 * 2 - n: nonzero for odd n, but not a polynomial.
  CHECK_FALSE(Diff(halves, n).NonzeroSomewhere(kFree));
  // Equal atoms cancel; dividing by one is the dividend.
  CHECK(Diff(Extent::Apply(Op::kFloorMod, n, two),
             Extent::Apply(Op::kFloorMod, n, two))
            .Key() == "0");
  CHECK(Extent::Apply(Op::kCeilDiv, n, Extent::Const(1)).Key() == n.Key());
  CHECK(Extent::Apply(Op::kMax, n, two).Key() !=
        Extent::Apply(Op::kMin, n, two).Key());
}

TEST_CASE("a kernel's dimensions fold through symbols and derived values") {
  Analysis a(Host(
      "k",
      {In("x", "n, m", 4), Derived("s", "x.size", 5), In("y", "s / 2", 6),
       Out("o", "m * n, ceil_div(m, 1)", 7), Out("p", "y.shape[0] + 1", 8)}));
  const KernelPlan& plan = a.plan();
  ExtentModel model(plan);
  // o's first dimension is x's size: the same polynomial as s.
  CHECK(Diff(model.Dim(3, 0), model.Eval(*plan.params[1].derived)).Key() ==
        "0");
  CHECK(model.Dim(3, 1).Key() == model.Dim(0, 1).Key());
  // y's dimension is checked against s / 2, an atom; p's is one more.
  CHECK(Diff(model.Dim(4, 0), model.Dim(2, 0)).Constant() == 1);
  CHECK(model.constrained().empty());
}

}  // namespace
}  // namespace kernelc::sema::testing
