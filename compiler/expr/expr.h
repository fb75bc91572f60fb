// The expression language of shapes, grids and derived values:
//   integers, names, t.size, t.rank, t.shape[i], + - * / % (floor division
//   and modulo), unary -, ceil_div(a, b), min(a, b), max(a, b), parentheses.
// All values are int64. One parser and checker; emitters for C++ (the
// handler) and Python (trace-time checks and output shapes).
#ifndef KERNELC_COMPILER_EXPR_EXPR_H_
#define KERNELC_COMPILER_EXPR_EXPR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kernelc::expr {

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Node {
  enum class Kind { kInt, kName, kSize, kRank, kShape, kNeg, kBinary, kCall };
  Kind kind = Kind::kInt;
  int64_t value = 0;          // kInt; kShape: the dimension index
  std::string name;           // kName, kSize, kRank, kShape; kCall: function
  char op = 0;                // kBinary: + - * / %
  std::vector<NodePtr> args;  // kNeg: 1; kBinary, kCall: 2
  int begin = 0, end = 0;     // byte range [begin, end) in the text
};

// Where a text is wrong: a byte offset into it and what is wrong.
struct ParseError {
  int offset = 0;
  std::string message;
};

template <typename T>
using Parsed = std::variant<T, ParseError>;

Parsed<NodePtr> Parse(std::string_view text);

// One dimension of a shape: "_" (any extent) or an expression.
struct Dim {
  bool any = false;
  NodePtr expr;
  int begin = 0, end = 0;
};

// "n, m * 2, _". An empty or blank text is rank 0.
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

struct Resolver {
  std::function<std::string(std::string_view name)> value;
  std::function<std::string(std::string_view tensor)> size;
  std::function<std::string(std::string_view tensor)> rank;
  std::function<std::string(std::string_view tensor, int64_t dim)> dim;
};

// C++ int64_t arithmetic. Division, modulo and ceil_div go through the
// evaluator object (`evaluator`.FloorDiv/FloorMod/CeilDiv), which neither
// traps nor has undefined behaviour; so do + - * and unary minus
// (Add/Sub/Mul/Neg), which check for overflow.
std::string EmitCpp(const NodePtr& e, const Resolver& r,
                    std::string_view evaluator);

// Python: // and % are floor operations already; ceil_div(a, b) becomes
// (-((-a) // b)).
std::string EmitPython(const NodePtr& e, const Resolver& r);

// Canonical text: "a + b * c", "ceil_div(n, 2)", "x.shape[0]".
std::string ToString(const NodePtr& e);

// The value of an expression without names.
std::optional<int64_t> ConstantValue(const NodePtr& e);

}  // namespace kernelc::expr

#endif  // KERNELC_COMPILER_EXPR_EXPR_H_
