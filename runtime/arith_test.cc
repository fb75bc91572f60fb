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
    case Op::kShl:
    case Op::kShr:
      if (b < 0 || b >= 64) return Checked{0, Fault::kShiftCount};
      // Multiplying or flooring by 2^b: no bit arithmetic on negatives.
      if (op == Op::kShl) {
        r = a;
        for (int i = 0; i < b64 && r >= INT64_MIN && r <= INT64_MAX; ++i)
          r *= 2;
      } else {
        r = FloorQuotient(a, Wide{1} << b64);
      }
      break;
    case Op::kAnd:
    case Op::kOr:
    case Op::kXor: {
      // Bit by bit, from the two's complement digits.
      const auto bits_of = [](int64_t v, int i) {
        return (static_cast<uint64_t>(v) >> i) & 1;
      };
      uint64_t u = 0;
      for (int i = 0; i < 64; ++i) {
        const uint64_t x = bits_of(a64, i), y = bits_of(b64, i);
        const uint64_t bit = op == Op::kAnd  ? (x & y)
                             : op == Op::kOr ? (x | y)
                                             : (x ^ y);
        u |= bit << i;
      }
      r = u >= (uint64_t{1} << 63) ? Wide(u) - (Wide{1} << 64) : Wide(u);
      break;
    }
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
                   Op::kFloorMod, Op::kCeilDiv, Op::kMin, Op::kMax,
                   Op::kShl,      Op::kShr,     Op::kAnd, Op::kOr,
                   Op::kXor};

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

TEST_CASE("shifts cover every count") {
  // The edge values hold few counts in 0..63; here each of them.
  const std::vector<int64_t> values = EdgeValues();
  for (Op op : {Op::kShl, Op::kShr})
    for (int64_t a : values)
      for (int64_t b = -2; b <= 65; ++b) {
        const Checked want = Expected(op, a, b);
        const Checked got = kc::arith::Apply(op, a, b);
        INFO("op " << static_cast<int>(op) << " a " << a << " b " << b);
        REQUIRE(got.fault == want.fault);
        REQUIRE(got.value == want.value);
      }
  CHECK(kc::arith::Shl(0, 64).fault == Fault::kShiftCount);
  CHECK(kc::arith::Shl(-1, 63).value == INT64_MIN);
  CHECK(kc::arith::Shl(1, 63).fault == Fault::kOverflow);
  CHECK(kc::arith::Shr(-7, 1).value == -4);
  CHECK(kc::arith::Shr(INT64_MIN, 63).value == -1);
}

TEST_CASE("casts convert as C does, into int64") {
  using kc::arith::UnaryOp;
  struct Case {
    UnaryOp op;
    int64_t a;
    Checked want;
  };
  const Case cases[] = {
      {UnaryOp::kToUint32, -1, {4294967295, Fault::kNone}},
      {UnaryOp::kToUint32, int64_t{1} << 32, {0, Fault::kNone}},
      {UnaryOp::kToInt32, 4294967295, {-1, Fault::kNone}},
      {UnaryOp::kToInt32, 2147483648, {-2147483648, Fault::kNone}},
      {UnaryOp::kToInt32, -2147483649, {2147483647, Fault::kNone}},
      {UnaryOp::kToInt16, 65535, {-1, Fault::kNone}},
      {UnaryOp::kToUint16, -1, {65535, Fault::kNone}},
      {UnaryOp::kToInt8, 200, {-56, Fault::kNone}},
      {UnaryOp::kToInt8, 127, {127, Fault::kNone}},
      {UnaryOp::kToInt8, 128, {-128, Fault::kNone}},
      {UnaryOp::kToUint8, -1, {255, Fault::kNone}},
      {UnaryOp::kToInt64, INT64_MIN, {INT64_MIN, Fault::kNone}},
      {UnaryOp::kToUint64, INT64_MAX, {INT64_MAX, Fault::kNone}},
      {UnaryOp::kToUint64, -1, {0, Fault::kOverflow}},
      {UnaryOp::kToUint64, INT64_MIN, {0, Fault::kOverflow}},
      {UnaryOp::kNot, 0, {-1, Fault::kNone}},
      {UnaryOp::kNot, INT64_MIN, {INT64_MAX, Fault::kNone}},
      {UnaryOp::kNeg, INT64_MIN, {0, Fault::kOverflow}},
  };
  for (const Case& c : cases) {
    INFO("op " << static_cast<int>(c.op) << " a " << c.a);
    const Checked got = kc::arith::Apply(c.op, c.a);
    CHECK(got.fault == c.want.fault);
    CHECK(got.value == c.want.value);
  }
  // The narrow casts agree with the compiler's own conversions (C++20's
  // modular ones, which every supported compiler already implements).
  for (int64_t a : EdgeValues()) {
    INFO("a " << a);
    CHECK(kc::arith::Apply(UnaryOp::kToInt8, a).value == int8_t(a));
    CHECK(kc::arith::Apply(UnaryOp::kToUint8, a).value == uint8_t(a));
    CHECK(kc::arith::Apply(UnaryOp::kToInt16, a).value == int16_t(a));
    CHECK(kc::arith::Apply(UnaryOp::kToUint16, a).value == uint16_t(a));
    CHECK(kc::arith::Apply(UnaryOp::kToInt32, a).value == int32_t(a));
    CHECK(kc::arith::Apply(UnaryOp::kToUint32, a).value == uint32_t(a));
  }
}

// Usable in constant expressions.
static_assert(kc::arith::Mul(3037000499, 3037000499).ok());
static_assert(!kc::arith::Mul(3037000500, 3037000500).ok());
static_assert(kc::arith::Shl(1, 62).value == int64_t{1} << 62);
static_assert(kc::arith::ToInt(-1, 32, false).value == 4294967295);

}  // namespace
