// The expression language of shapes, grids and derived values, C's integer
// expressions less the comparisons:
//   integer literals (decimal, 0x hexadecimal, 0b binary, C's u/l/ll
//   suffixes), names, t.size, t.rank, t.shape[i], + - * / % (floor division
//   and modulo), << >> & | ^, unary - and ~, casts to integer types
//   ("(unsigned)n", "(size_t)n"), ceil_div(a, b), min(a, b), max(a, b),
//   parentheses; with C's precedence: unary and casts, then * / %, + -,
//   << >>, &, ^, |.
// All values are int64, computed as kernelc/arith.h defines. One parser and
// checker, one fold over the tree (see Fold) on which every evaluation, walk
// and emitter is built: C++ (the handler) and Python (trace-time checks and
// output shapes).
#ifndef KERNELC_COMPILER_EXPR_EXPR_H_
#define KERNELC_COMPILER_EXPR_EXPR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "kernelc/arith.h"

namespace kernelc::expr {

struct Node;
using NodePtr = std::shared_ptr<const Node>;

// The operation of a kBinary or kCall node, and of a kNeg, kNot or kCast
// node (kernelc/arith.h names them). The compiler reads this header of the
// runtime as it reads the launch ABI: the arithmetic is the runtime's, so
// that build-time folding computes what the handlers compute.
using Op = kc::arith::Op;
using UnaryOp = kc::arith::UnaryOp;

struct Node {
  enum class Kind {
    kInt,
    kName,
    kSize,
    kRank,
    kShape,
    kNeg,   // -a
    kNot,   // ~a
    kCast,  // (type)a
    kBinary,
    kCall
  };
  Kind kind = Kind::kInt;
  int64_t value = 0;  // kInt; kShape: the dimension index
  // kName, kSize, kRank, kShape; kCast: the type as written, its words
  // separated by one space ("unsigned int")
  std::string name;
  Op op = Op::kAdd;                  // kBinary, kCall
  UnaryOp cast = UnaryOp::kToInt64;  // kCast
  std::vector<NodePtr> args;  // kNeg, kNot, kCast: 1; kBinary, kCall: 2
  int begin = 0, end = 0;     // byte range [begin, end) in the text
};

// Where a text is wrong: a byte offset into it and what is wrong.
struct ParseError {
  int offset = 0;
  std::string message;
};

template <typename T>
using Parsed = std::variant<T, ParseError>;

// The limits of every expression text (and shape text), below what each
// emitter's output can hold. Depth is the height of the tree: a name or a
// literal is 1 deep, and an operation one more than its deepest operand
// ("a + b * c" is 3). The generated code nests one call per operation, so
// a tree of kMaxDepth stays well inside CPython's 200 nested brackets and
// Clang's 256 around it. Parentheses and signs nest the parser itself, up
// to twice kMaxDepth, which ToString's output of any tree within the limit
// needs at most. Length is in bytes.
inline constexpr int kMaxDepth = 100;
inline constexpr int kMaxLength = 4096;

// Parses an expression; a text over the limits is an error at the first
// byte past them.
Parsed<NodePtr> Parse(std::string_view text);

// One dimension of a shape: "_" (any extent) or an expression; or "...",
// which only the first may be: any number of leading dimensions.
struct Dim {
  bool any = false;
  NodePtr expr;
  int begin = 0, end = 0;
  bool leading = false;
};

// "n, m * 2, _", "..., c". An empty or blank text is rank 0.
Parsed<std::vector<Dim>> ParseShape(std::string_view text);

enum class NameKind { kUnknown, kTensor, kSymbol, kIntValue, kFloatValue };

struct Scope {
  std::function<NameKind(std::string_view)> kind;
  std::function<int(std::string_view)> tensor_rank;  // -1 when unknown
};

// The first misuse of a name in `e`, if any.
std::optional<ParseError> Check(const NodePtr& e, const Scope& scope);

// Names (plain and tensor names) in first-use order, without repeats.
std::vector<std::string> NamesUsed(const NodePtr& e);

// The operation of a kNeg, kNot or kCast node.
UnaryOp UnaryOf(const Node& n);

// A fold over an expression tree, bottom-up: the value of each node comes
// from the values of its operands, which are folded first, left to right.
// `algebra` supplies, for values of some type T:
//   T Int(int64_t value)          an integer literal
//   T Leaf(const Node& n)         a name, t.size, t.rank or t.shape[i]
//   T Unary(UnaryOp op, T a)      unary minus, ~ and casts
//   T Binary(Op op, T a, T b)     + - * / % << >> & | ^, ceil_div, min,
//                                 max
// and may supply `bool Done(const T& a)`: true when `a` is the value of
// every operation over it (a fault, the first name found, ...); then the
// remaining operands are not folded and `a` is the result; and
// `T At(const Node& n, T value)`: called with each node and its value,
// whose result is the node's value (to attach where the node is); and
// `T Cast(const Node& n, T a)`: a cast, with its node, which names the
// type as written (without it, a cast is a Unary).
// Recursion depth is the tree's height, which Parse bounds.
template <typename Algebra>
auto Fold(const Node& n, Algebra&& algebra);

struct Resolver {
  std::function<std::string(std::string_view name)> value;
  std::function<std::string(std::string_view tensor)> size;
  std::function<std::string(std::string_view tensor)> rank;
  std::function<std::string(std::string_view tensor, int64_t dim)> dim;
};

// C++ evaluating with the arithmetic of kernelc/arith.h: every operation is
// a call on the kc::rt::Evaluator object `evaluator` (`ev.Add(a, b)`,
// `ev.FloorDiv(a, b)`, `ev.Shl(a, b)`, `ev.ToUint32(a)`, ...), which
// neither traps nor has undefined behaviour and records a failure.
std::string EmitCpp(const NodePtr& e, const Resolver& r,
                    std::string_view evaluator);

// Python with the same arithmetic: every operation is a call of the checked
// helper of that name in the support module `module` (`_kc.add(a, b)`,
// `_kc.floor_div(a, b)`, `_kc.shl(a, b)`, `_kc.to_uint32(a)`, ...), which
// fails exactly where the C++ evaluator does.
std::string EmitPython(const NodePtr& e, const Resolver& r,
                       std::string_view module);

// Canonical text: "a + b * c", "ceil_div(n, 2)", "x.shape[0]".
std::string ToString(const NodePtr& e);

// The outcome of evaluating an expression: its value; or the first fault,
// in evaluation order (operands left to right, before their operation),
// which is the order of the generated C++ and Python; or neither, when a
// leaf whose value is unknown reaches the result.
struct Evaluation {
  std::optional<int64_t> value;
  kc::arith::Fault fault = kc::arith::Fault::kNone;
};

// The value of each leaf (a name, t.size, t.rank, t.shape[i]); nullopt
// where unknown.
using LeafValues = std::function<std::optional<int64_t>(const Node& leaf)>;

Evaluation Evaluate(const NodePtr& e, const LeafValues& leaves);

// The value of an expression without names; nullopt when it has names or
// fails.
std::optional<int64_t> ConstantValue(const NodePtr& e);

// The byte offset of the first leaf of `e` that names `name` (a plain name
// or a tensor's member), or -1.
int FirstUse(const NodePtr& e, std::string_view name);

// An operation of `e` that fails whatever values its names have: one whose
// operands have no names and whose evaluation faults
// (`2 * 9223372036854775807`), a division, modulo or ceil_div by such a
// constant zero (`n / 0`), or a shift by such a constant count out of range
// (`n << 64`). The generated code evaluates every operation, so the whole expression then
// always fails; such a text is a build-time error. [begin, end) is the
// operation's text, `text` its canonical form.
struct ConstantFault {
  int begin = 0, end = 0;
  kc::arith::Fault fault = kc::arith::Fault::kNone;
  std::string text;
};

// The first such operation in evaluation order; nullopt when there is none.
std::optional<ConstantFault> FindConstantFault(const NodePtr& e);

// --- Implementation of Fold
// ---------------------------------------------------

namespace fold_detail {

template <typename A, typename T, typename = void>
struct HasDone : std::false_type {};
template <typename A, typename T>
struct HasDone<
    A, T,
    std::void_t<decltype(std::declval<A&>().Done(std::declval<const T&>()))>>
    : std::true_type {};

template <typename T, typename Algebra>
bool Done(Algebra& algebra, const T& value) {
  if constexpr (HasDone<Algebra, T>::value) {
    return algebra.Done(value);
  } else {
    return false;
  }
}

template <typename A, typename T, typename = void>
struct HasAt : std::false_type {};
template <typename A, typename T>
struct HasAt<A, T,
             std::void_t<decltype(std::declval<A&>().At(
                 std::declval<const Node&>(), std::declval<T>()))>>
    : std::true_type {};

template <typename T, typename Algebra>
T At(Algebra& algebra, const Node& n, T value) {
  if constexpr (HasAt<Algebra, T>::value) {
    return algebra.At(n, std::move(value));
  } else {
    return value;
  }
}

template <typename A, typename T, typename = void>
struct HasCast : std::false_type {};
template <typename A, typename T>
struct HasCast<A, T,
               std::void_t<decltype(std::declval<A&>().Cast(
                   std::declval<const Node&>(), std::declval<T>()))>>
    : std::true_type {};

template <typename T, typename Algebra>
T UnaryOperation(Algebra& algebra, const Node& n, T a) {
  if constexpr (HasCast<Algebra, T>::value) {
    if (n.kind == Node::Kind::kCast) return algebra.Cast(n, std::move(a));
  }
  return algebra.Unary(UnaryOf(n), std::move(a));
}

template <typename Algebra>
auto FoldNode(const Node& n, Algebra& algebra)
    -> decltype(algebra.Int(int64_t{0})) {
  using T = decltype(algebra.Int(int64_t{0}));
  switch (n.kind) {
    case Node::Kind::kInt:
      return At(algebra, n, algebra.Int(n.value));
    case Node::Kind::kName:
    case Node::Kind::kSize:
    case Node::Kind::kRank:
    case Node::Kind::kShape:
      return At(algebra, n, algebra.Leaf(n));
    case Node::Kind::kNeg:
    case Node::Kind::kNot:
    case Node::Kind::kCast: {
      T a = FoldNode(*n.args[0], algebra);
      if (Done(algebra, a)) return a;
      return At(algebra, n, UnaryOperation(algebra, n, std::move(a)));
    }
    case Node::Kind::kBinary:
    case Node::Kind::kCall:
      break;
  }
  T a = FoldNode(*n.args[0], algebra);
  if (Done(algebra, a)) return a;
  T b = FoldNode(*n.args[1], algebra);
  if (Done(algebra, b)) return b;
  return At(algebra, n,
            algebra.Binary(n.op, std::move(a), std::move(b)));
}

}  // namespace fold_detail

template <typename Algebra>
auto Fold(const Node& n, Algebra&& algebra) {
  return fold_detail::FoldNode(n, algebra);
}

}  // namespace kernelc::expr

#endif  // KERNELC_COMPILER_EXPR_EXPR_H_
