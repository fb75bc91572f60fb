// Tests of kernelc/arith.h against exact 128-bit arithmetic, over the values
// where int64 arithmetic goes wrong: the limits, their neighbours, zero, and
// the factors whose products just fit.
#include "kernelc/arith.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using kc::arith::Checked;
using kc::arith::Fault;
using kc::arith::Op;

using Wide = __int128;

// floor(a / b) and a - b * floor(a / b) in 128 bits, where nothing
// overflows; b != 0.
Wide FloorQuotient(Wide a, Wide b) {
  Wide q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

// The exact result of `op`, or the fault the arithmetic must report.
Checked Expected(Op op, int64_t a64, int64_t b64) {
  const Wide a = a64, b = b64;
  Wide r = 0;
  switch (op) {
    case Op::kAdd:
      r = a + b;
      break;
    case Op::kSub:
      r = a - b;
      break;
    case Op::kMul:
      r = a * b;
      break;
    case Op::kFloorDiv:
    case Op::kFloorMod:
    case Op::kCeilDiv:
      if (b == 0) return Checked{0, Fault::kDivisionByZero};
      if (op == Op::kFloorDiv) r = FloorQuotient(a, b);
      if (op == Op::kFloorMod) r = a - b * FloorQuotient(a, b);
      if (op == Op::kCeilDiv) r = -FloorQuotient(-a, b);
      break;
    case Op::kMin:
      r = a < b ? a : b;
      break;
    case Op::kMax:
      r = a < b ? b : a;
      break;
  }
  if (r < INT64_MIN || r > INT64_MAX) return Checked{0, Fault::kOverflow};
  return Checked{static_cast<int64_t>(r), Fault::kNone};
}

std::vector<int64_t> EdgeValues() {
  std::vector<int64_t> v = {0,
                            1,
                            -1,
                            2,
                            -2,
                            3,
                            -3,
                            7,
                            -7,
                            INT64_MAX,
                            INT64_MAX - 1,
                            INT64_MIN,
                            INT64_MIN + 1,
                            INT64_MAX / 2,
                            INT64_MIN / 2,
                            3037000499,
                            3037000500,
                            -3037000499,
                            -3037000500,
                            int64_t{1} << 32,
                            -(int64_t{1} << 32),
                            int64_t{1} << 62,
                            -(int64_t{1} << 62)};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 40; ++i) v.push_back(static_cast<int64_t>(rng()));
  for (int i = 0; i < 20; ++i)
    v.push_back(static_cast<int64_t>(rng() % 2001) - 1000);
  return v;
}

const Op kOps[] = {Op::kAdd,      Op::kSub,     Op::kMul, Op::kFloorDiv,
                   Op::kFloorMod, Op::kCeilDiv, Op::kMin, Op::kMax};

TEST_CASE("every operation is exact or reports why not") {
  const std::vector<int64_t> values = EdgeValues();
  for (Op op : kOps)
    for (int64_t a : values)
      for (int64_t b : values) {
        const Checked want = Expected(op, a, b);
        const Checked got = kc::arith::Apply(op, a, b);
        INFO("op " << static_cast<int>(op) << " a " << a << " b " << b);
        REQUIRE(got.fault == want.fault);
        REQUIRE(got.value == want.value);
      }
}

TEST_CASE("the edge cases of division") {
  CHECK(kc::arith::FloorDiv(-7, 2).value == -4);
  CHECK(kc::arith::FloorMod(-7, 2).value == 1);
  CHECK(kc::arith::FloorMod(7, -2).value == -1);
  CHECK(kc::arith::CeilDiv(-7, 2).value == -3);
  CHECK(kc::arith::CeilDiv(7, 2).value == 4);
  // INT64_MIN / -1 does not fit; its remainder (0) does, and ceil_div of
  // INT64_MIN by 2 is exact.
  CHECK(kc::arith::FloorDiv(INT64_MIN, -1).fault == Fault::kOverflow);
  CHECK(kc::arith::CeilDiv(INT64_MIN, -1).fault == Fault::kOverflow);
  CHECK(kc::arith::FloorMod(INT64_MIN, -1).value == 0);
  CHECK(kc::arith::FloorMod(INT64_MIN, -1).ok());
  CHECK(kc::arith::CeilDiv(INT64_MIN, 2).value == INT64_MIN / 2);
  CHECK(kc::arith::FloorMod(1, 0).fault == Fault::kDivisionByZero);
  CHECK(kc::arith::CeilDiv(0, 0).fault == Fault::kDivisionByZero);
  CHECK(kc::arith::Neg(INT64_MIN).fault == Fault::kOverflow);
  CHECK(kc::arith::Neg(INT64_MAX).value == -INT64_MAX);
}

// Usable in constant expressions.
static_assert(kc::arith::Mul(3037000499, 3037000499).ok());
static_assert(!kc::arith::Mul(3037000500, 3037000500).ok());

}  // namespace
