// The int64 arithmetic of shape, grid and derived-value expressions: the one
// definition of what `+ - * / %`, unary minus, ceil_div, min and max compute.
//
// Each operation gives the exact integer result, or fails: with kOverflow
// when that result lies outside int64 (INT64_MIN / -1 among them), with
// kDivisionByZero when the divisor of /, % or ceil_div is zero. Division
// rounds toward negative infinity and a modulo takes the divisor's sign, as
// in Python. No operation has undefined behaviour or traps.
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
enum class Fault { kNone, kOverflow, kDivisionByZero };

// The binary operations of the expression language.
enum class Op { kAdd, kSub, kMul, kFloorDiv, kFloorMod, kCeilDiv, kMin, kMax };

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
  }
  return Fail(Fault::kOverflow);
}

}  // namespace kc::arith

#endif  // KERNELC_ARITH_H_
