// The int64 arithmetic of shape, grid and derived-value expressions: the one
// definition of what `+ - * / %`, `<< >> & | ^`, unary minus and `~`, casts
// to integer types, ceil_div, min and max compute.
//
// Each operation gives the exact integer result, or fails: with kOverflow
// when that result lies outside int64 (INT64_MIN / -1 among them), with
// kDivisionByZero when the divisor of /, % or ceil_div is zero, with
// kShiftCount when a shift count is negative or 64 or more. Division
// rounds toward negative infinity and a modulo takes the divisor's sign, as
// in Python. `a << b` is a * 2^b, an overflow where that leaves int64 (also
// for negative a, where C leaves it undefined); `a >> b` is arithmetic,
// floor(a / 2^b), so a negative a stays negative. `& | ^ ~` act on the
// two's complement bits and never fail. A cast converts the value as C
// converts it to that type (modulo 2^N for an N-bit unsigned type, and for
// a narrower signed type, as C++20 and every CUDA compiler define it);
// the result must still be an int64: `(unsigned)-1` is 4294967295, while
// `(uint64_t)-1` is 2^64 - 1 and so an overflow. No operation has undefined
// behaviour or traps.
//
// The generated handlers evaluate through kc::rt::Evaluator (runtime.h),
// which is built on these; the compiler folds expressions with the same
// functions, and the generated Python's helpers implement the same rules.
// Header-only, with no dependency beyond <stdint.h>.
#ifndef KERNELC_ARITH_H_
#define KERNELC_ARITH_H_

#include <stdint.h>

namespace kc::arith {

// Why an operation has no int64 result.
enum class Fault { kNone, kOverflow, kDivisionByZero, kShiftCount };

// The binary operations of the expression language.
enum class Op {
  kAdd,
  kSub,
  kMul,
  kFloorDiv,
  kFloorMod,
  kCeilDiv,
  kMin,
  kMax,
  kShl,
  kShr,
  kAnd,
  kOr,
  kXor,
};

// The unary operations: minus, `~`, and the casts, one per integer type
// that a cast can name (`(unsigned)`, `(size_t)`, ...; see ToInt). Apply
// reads the casts' widths from their order here.
enum class UnaryOp {
  kNeg,
  kNot,
  kToInt8,
  kToUint8,
  kToInt16,
  kToUint16,
  kToInt32,
  kToUint32,
  kToInt64,
  kToUint64,
};

// An operation's outcome: `value` when `fault` is kNone, else 0.
struct Checked {
  int64_t value = 0;
  Fault fault = Fault::kNone;

  constexpr bool ok() const { return fault == Fault::kNone; }
};

constexpr Checked Fail(Fault f) { return Checked{0, f}; }

constexpr Checked Add(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? Fail(Fault::kOverflow)
                                          : Checked{r, Fault::kNone};
}

constexpr Checked Sub(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_sub_overflow(a, b, &r) ? Fail(Fault::kOverflow)
                                          : Checked{r, Fault::kNone};
}

constexpr Checked Mul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? Fail(Fault::kOverflow)
                                          : Checked{r, Fault::kNone};
}

constexpr Checked Neg(int64_t a) {
  return a == INT64_MIN ? Fail(Fault::kOverflow) : Checked{-a, Fault::kNone};
}

// C++'s / and % truncate; they are corrected toward negative infinity where
// the quotient is negative and inexact. With a nonzero remainder |b| >= 2,
// so the corrections cannot overflow. a % b is never computed for
// INT64_MIN % -1, which is undefined.
constexpr Checked FloorDiv(int64_t a, int64_t b) {
  if (b == 0) return Fail(Fault::kDivisionByZero);
  if (a == INT64_MIN && b == -1) return Fail(Fault::kOverflow);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return Checked{q, Fault::kNone};
}

constexpr Checked FloorMod(int64_t a, int64_t b) {
  if (b == 0) return Fail(Fault::kDivisionByZero);
  if (b == -1) return Checked{0, Fault::kNone};
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return Checked{r, Fault::kNone};
}

constexpr Checked CeilDiv(int64_t a, int64_t b) {
  if (b == 0) return Fail(Fault::kDivisionByZero);
  if (a == INT64_MIN && b == -1) return Fail(Fault::kOverflow);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) == (b < 0))) ++q;
  return Checked{q, Fault::kNone};
}

constexpr Checked Min(int64_t a, int64_t b) {
  return Checked{a < b ? a : b, Fault::kNone};
}

constexpr Checked Max(int64_t a, int64_t b) {
  return Checked{a < b ? b : a, Fault::kNone};
}

// The shift count is checked first, so that `a << 64` fails for a = 0 too:
// the fault does not depend on the shifted value. Shifting the unsigned bit
// pattern is defined for every count below 64; the bounds check before it
// makes the result the exact product.
constexpr Checked Shl(int64_t a, int64_t b) {
  if (b < 0 || b >= 64) return Fail(Fault::kShiftCount);
  // ~(INT64_MAX >> b) is INT64_MIN >> b, written without shifting a
  // negative value.
  if (a > (INT64_MAX >> b) || a < ~(INT64_MAX >> b))
    return Fail(Fault::kOverflow);
  return Checked{static_cast<int64_t>(static_cast<uint64_t>(a) << b),
                 Fault::kNone};
}

// Arithmetic on negative values without relying on C++17's
// implementation-defined >> of a negative: ~a is non-negative there, and
// ~(~a >> b) is floor(a / 2^b).
constexpr Checked Shr(int64_t a, int64_t b) {
  if (b < 0 || b >= 64) return Fail(Fault::kShiftCount);
  return Checked{a < 0 ? ~(~a >> b) : a >> b, Fault::kNone};
}

constexpr Checked And(int64_t a, int64_t b) {
  return Checked{a & b, Fault::kNone};
}

constexpr Checked Or(int64_t a, int64_t b) {
  return Checked{a | b, Fault::kNone};
}

constexpr Checked Xor(int64_t a, int64_t b) {
  return Checked{a ^ b, Fault::kNone};
}

constexpr Checked Not(int64_t a) { return Checked{~a, Fault::kNone}; }

// A cast to an integer type of `bits` bits: the value modulo 2^bits, read
// as that type (two's complement when signed). Unsigned 64-bit values above
// INT64_MAX are no int64: an overflow.
constexpr Checked ToInt(int64_t a, int bits, bool is_signed) {
  if (bits == 64) {
    return is_signed || a >= 0 ? Checked{a, Fault::kNone}
                               : Fail(Fault::kOverflow);
  }
  const uint64_t modulus = uint64_t{1} << bits;
  const uint64_t low = static_cast<uint64_t>(a) & (modulus - 1);
  if (!is_signed || low < modulus / 2)
    return Checked{static_cast<int64_t>(low), Fault::kNone};
  return Checked{static_cast<int64_t>(low) - static_cast<int64_t>(modulus),
                 Fault::kNone};
}

constexpr Checked Apply(UnaryOp op, int64_t a) {
  if (op == UnaryOp::kNeg) return Neg(a);
  if (op == UnaryOp::kNot) return Not(a);
  // The casts, in the enum's order: signed then unsigned, of 8, 16, 32 and
  // 64 bits.
  const int i = static_cast<int>(op) - static_cast<int>(UnaryOp::kToInt8);
  return ToInt(a, 8 << (i / 2), i % 2 == 0);
}

constexpr Checked Apply(Op op, int64_t a, int64_t b) {
  switch (op) {
    case Op::kAdd:
      return Add(a, b);
    case Op::kSub:
      return Sub(a, b);
    case Op::kMul:
      return Mul(a, b);
    case Op::kFloorDiv:
      return FloorDiv(a, b);
    case Op::kFloorMod:
      return FloorMod(a, b);
    case Op::kCeilDiv:
      return CeilDiv(a, b);
    case Op::kMin:
      return Min(a, b);
    case Op::kMax:
      return Max(a, b);
    case Op::kShl:
      return Shl(a, b);
    case Op::kShr:
      return Shr(a, b);
    case Op::kAnd:
      return And(a, b);
    case Op::kOr:
      return Or(a, b);
    case Op::kXor:
      return Xor(a, b);
  }
  return Fail(Fault::kOverflow);
}

}  // namespace kc::arith

#endif  // KERNELC_ARITH_H_
