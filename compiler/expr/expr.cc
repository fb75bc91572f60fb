#include "compiler/expr/expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

namespace kernelc::expr {

namespace {

// How deep parentheses and signs may nest the parser: ToString writes at
// most one of each per level of a tree (a negation of a parenthesised
// operation: "-(a + b)"), so its output of any tree within kMaxDepth parses.
constexpr int kMaxNesting = 2 * kMaxDepth;

// Only the ASCII whitespace characters: the annotation text is bytes, and a
// locale-dependent isspace could accept other bytes on some hosts.
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }

// How each operation is written: in the expression language (an operator
// or a function), and as the name of the C++ evaluator's method and of the
// Python support module's helper that compute it.
struct Spelling {
  Op op;
  char symbol;           // the operator, or 0 for a function
  const char* function;  // the function, or nullptr for an operator
  const char* cpp;
  const char* python;
};

constexpr Spelling kSpellings[] = {
    {Op::kAdd, '+', nullptr, "Add", "add"},
    {Op::kSub, '-', nullptr, "Sub", "sub"},
    {Op::kMul, '*', nullptr, "Mul", "mul"},
    {Op::kFloorDiv, '/', nullptr, "FloorDiv", "floor_div"},
    {Op::kFloorMod, '%', nullptr, "FloorMod", "floor_mod"},
    {Op::kCeilDiv, 0, "ceil_div", "CeilDiv", "ceil_div"},
    {Op::kMin, 0, "min", "Min", "minimum"},
    {Op::kMax, 0, "max", "Max", "maximum"},
};

const Spelling& SpellingOf(Op op) {
  for (const Spelling& s : kSpellings)
    if (s.op == op) return s;
  return kSpellings[0];
}

bool IsFunction(std::string_view name) {
  for (const Spelling& s : kSpellings)
    if (s.function && name == s.function) return true;
  return false;
}

struct Token {
  enum class Kind { kEnd, kInt, kName, kPunct, kError };
  Kind kind = Kind::kEnd;
  int begin = 0;
  int end = 0;
  int64_t value = 0;  // kInt
  char punct = 0;     // kPunct
  std::string error;  // kError
};

// Reads the token that starts at or after `pos` (after whitespace).
// Malformed input becomes a kError token, so that the parser reports it only
// if it gets that far and problems come out in text order.
Token Lex(std::string_view text, int pos) {
  const int n = static_cast<int>(text.size());
  while (pos < n && IsSpace(text[pos])) ++pos;
  Token t;
  t.begin = pos;
  t.end = pos;
  if (pos == n) return t;
  const char c = text[pos];
  if (IsDigit(c)) {
    int end = pos;
    bool too_large = false;
    int64_t value = 0;
    while (end < n && IsDigit(text[end])) {
      const int64_t digit = text[end] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        too_large = true;
      } else {
        value = value * 10 + digit;
      }
      ++end;
    }
    // "2x", "1.5", "0x10": one bad word, rather than a number followed by
    // something that would be reported as out of place.
    if (end < n && (IsNameChar(text[end]) || text[end] == '.')) {
      bool has_dot = false;
      while (end < n && (IsNameChar(text[end]) || text[end] == '.')) {
        has_dot |= text[end] == '.';
        ++end;
      }
      t.kind = Token::Kind::kError;
      t.end = end;
      t.error =
          fmt::format("invalid number '{}'{}", text.substr(pos, end - pos),
                      has_dot ? "; expressions are integer" : "");
      return t;
    }
    t.end = end;
    if (too_large) {
      t.kind = Token::Kind::kError;
      t.error = "integer literal is too large";
      return t;
    }
    t.kind = Token::Kind::kInt;
    t.value = value;
    return t;
  }
  if (IsNameStart(c)) {
    int end = pos;
    while (end < n && IsNameChar(text[end])) ++end;
    t.kind = Token::Kind::kName;
    t.end = end;
    return t;
  }
  switch (c) {
    case '+':
    case '-':
    case '*':
    case '/':
    case '%':
    case '(':
    case ')':
    case '[':
    case ']':
    case ',':
    case '.':
      t.kind = Token::Kind::kPunct;
      t.punct = c;
      t.end = pos + 1;
      return t;
    default:
      break;
  }
  t.kind = Token::Kind::kError;
  t.end = pos + 1;
  const auto byte = static_cast<unsigned char>(c);
  if (byte > 0x20 && byte < 0x7f) {
    t.error = fmt::format("unexpected character '{}'", c);
  } else {
    t.error = fmt::format("unexpected byte 0x{:02X}", byte);
  }
  return t;
}

// A parsed operand: the node, and the extent of its text including any
// parentheses around it, which the node's own span leaves out.
struct Item {
  NodePtr node;
  int begin = 0;
  int end = 0;
  int depth = 1;  // height of the node's tree
};

// Recursive descent, one function per grammar rule. Each returns false on
// failure, with the first error recorded in error_.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  const std::optional<ParseError>& error() const { return error_; }

  // The next token, not consumed. A malformed token records its error, so
  // callers that only look for an optional operator can stop there and the
  // error still wins.
  const Token& Peek() {
    if (!peeked_) {
      next_ = Lex(text_, pos_);
      peeked_ = true;
      if (next_.kind == Token::Kind::kError) Fail(next_.begin, next_.error);
    }
    return next_;
  }
  void Advance() {
    pos_ = Peek().end;
    peeked_ = false;
  }
  bool IsPunct(char c) {
    const Token& t = Peek();
    return t.kind == Token::Kind::kPunct && t.punct == c;
  }
  std::string_view TextOf(const Token& t) const {
    return text_.substr(t.begin, t.end - t.begin);
  }
  // The token after the next one, not consumed.
  Token PeekSecond() { return Lex(text_, Peek().end); }

  bool Fail(int offset, std::string message) {
    if (!error_) error_ = ParseError{offset, std::move(message)};
    return false;
  }

  bool ParseExpr(Item* out) { return ParseSum(out); }

 private:
  bool ParseSum(Item* out) {
    if (!ParseProduct(out)) return false;
    while (IsPunct('+') || IsPunct('-')) {
      const Token op = Peek();
      Advance();
      Item right;
      if (!ParseProduct(&right)) return false;
      if (!MakeBinary(op, std::move(*out), std::move(right), out)) return false;
    }
    return true;
  }

  bool ParseProduct(Item* out) {
    if (!ParseUnary(out)) return false;
    while (IsPunct('*') || IsPunct('/') || IsPunct('%')) {
      const Token op = Peek();
      Advance();
      Item right;
      if (!ParseUnary(&right)) return false;
      if (!MakeBinary(op, std::move(*out), std::move(right), out)) return false;
    }
    return true;
  }

  bool MakeBinary(const Token& op, Item left, Item right, Item* out) {
    const int depth = 1 + std::max(left.depth, right.depth);
    if (depth > kMaxDepth) return TooDeep(op.begin);
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::kBinary;
    n->op = op.punct;
    n->begin = left.begin;
    n->end = right.end;
    n->args = {std::move(left.node), std::move(right.node)};
    *out = Item{n, n->begin, n->end, depth};
    return true;
  }

  bool ParseUnary(Item* out) {
    if (!IsPunct('-')) return ParsePrimary(out);
    const Token minus = Peek();
    Advance();
    if (!Enter(minus.begin)) return false;
    Item operand;
    const bool ok = ParseUnary(&operand);
    --nesting_;
    if (!ok) return false;
    if (operand.depth + 1 > kMaxDepth) return TooDeep(minus.begin);
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::kNeg;
    n->begin = minus.begin;
    n->end = operand.end;
    n->args = {std::move(operand.node)};
    *out = Item{n, n->begin, n->end, operand.depth + 1};
    return true;
  }

  bool ParsePrimary(Item* out) {
    const Token t = Peek();
    if (error_) return false;
    if (t.kind == Token::Kind::kInt) {
      Advance();
      auto n = std::make_shared<Node>();
      n->kind = Node::Kind::kInt;
      n->value = t.value;
      n->begin = t.begin;
      n->end = t.end;
      *out = Item{n, t.begin, t.end, 1};
      return true;
    }
    if (t.kind == Token::Kind::kName) {
      if (IsFunction(TextOf(t))) return ParseCall(out);
      return ParseNameOrMember(out);
    }
    if (t.kind == Token::Kind::kPunct && t.punct == '(') {
      Advance();
      if (!Enter(t.begin)) return false;
      const bool ok = ParseExpr(out);
      --nesting_;
      if (!ok) return false;
      if (!IsPunct(')')) return Fail(Peek().begin, "expected ')'");
      out->begin = t.begin;
      out->end = Peek().end;
      Advance();
      return true;
    }
    return Fail(t.begin, "expected an expression");
  }

  bool ParseNameOrMember(Item* out) {
    const Token name = Peek();
    Advance();
    auto n = std::make_shared<Node>();
    n->name = std::string(TextOf(name));
    n->begin = name.begin;
    if (!IsPunct('.')) {
      if (error_) return false;
      n->kind = Node::Kind::kName;
      n->end = name.end;
      *out = Item{n, n->begin, n->end, 1};
      return true;
    }
    Advance();
    const Token member = Peek();
    if (member.kind != Token::Kind::kName) {
      return Fail(member.begin, "expected a member name after '.'");
    }
    const std::string_view m = TextOf(member);
    Advance();
    if (m == "size" || m == "rank") {
      n->kind = m == "size" ? Node::Kind::kSize : Node::Kind::kRank;
      n->end = member.end;
    } else if (m == "shape") {
      if (!IsPunct('[')) {
        return Fail(Peek().begin, "expected '[' after 'shape'");
      }
      Advance();
      const Token index = Peek();
      if (index.kind != Token::Kind::kInt) {
        return Fail(index.begin,
                    "expected a dimension index (a non-negative integer)");
      }
      Advance();
      if (!IsPunct(']')) return Fail(Peek().begin, "expected ']'");
      n->kind = Node::Kind::kShape;
      n->value = index.value;
      n->end = Peek().end;
      Advance();
    } else {
      return Fail(member.begin,
                  fmt::format("unknown member '{}' (expected size, shape or "
                              "rank)",
                              m));
    }
    *out = Item{n, n->begin, n->end, 1};
    return true;
  }

  bool ParseCall(Item* out) {
    const Token name = Peek();
    const std::string fn(TextOf(name));
    Advance();
    if (!IsPunct('(')) {
      return Fail(Peek().begin, fmt::format("expected '(' after '{}'", fn));
    }
    Advance();
    const std::string arity = fmt::format("'{}' takes 2 arguments", fn);
    if (IsPunct(')')) return Fail(Peek().begin, arity);
    if (!Enter(name.begin)) return false;
    Item a, b;
    bool ok = ParseExpr(&a);
    if (ok) {
      if (IsPunct(')')) {
        ok = Fail(Peek().begin, arity);
      } else if (!IsPunct(',')) {
        ok = Fail(Peek().begin, "expected ','");
      } else {
        Advance();
        ok = ParseExpr(&b);
      }
    }
    --nesting_;
    if (!ok) return false;
    if (IsPunct(',')) return Fail(Peek().begin, arity);
    if (!IsPunct(')')) return Fail(Peek().begin, "expected ')'");
    const int depth = 1 + std::max(a.depth, b.depth);
    if (depth > kMaxDepth) return TooDeep(name.begin);
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::kCall;
    n->name = fn;
    n->begin = name.begin;
    n->end = Peek().end;
    n->args = {std::move(a.node), std::move(b.node)};
    Advance();
    *out = Item{n, n->begin, n->end, depth};
    return true;
  }

  // Bounds the parser's own recursion ("((((...", "- - - ..."), which
  // creates no nodes and so is not caught by the depth of the tree.
  bool Enter(int offset) {
    if (++nesting_ > kMaxNesting) {
      --nesting_;
      return TooDeep(offset);
    }
    return true;
  }
  bool TooDeep(int offset) {
    return Fail(offset,
                fmt::format("expression is too deeply nested: kernelc allows "
                            "{} levels of operations",
                            kMaxDepth));
  }

  std::string_view text_;
  int pos_ = 0;  // where the next token's lexing starts
  bool peeked_ = false;
  Token next_;
  int nesting_ = 0;
  std::optional<ParseError> error_;
};

// Canonical text, with the binding strength of its outermost operation for
// the parentheses of the operation around it: sum < product < unary <
// primary.
struct Text {
  std::string text;
  int precedence = 4;
};

std::string Wrapped(const Text& t, bool parens) {
  return parens ? "(" + t.text + ")" : t.text;
}

struct TextAlgebra {
  Text Int(int64_t v) {
    // Negative literals are only built by hand, never parsed.
    return {std::to_string(v), v < 0 ? 3 : 4};
  }
  Text Leaf(const Node& n) {
    switch (n.kind) {
      case Node::Kind::kSize:
        return {n.name + ".size"};
      case Node::Kind::kRank:
        return {n.name + ".rank"};
      case Node::Kind::kShape:
        return {fmt::format("{}.shape[{}]", n.name, n.value)};
      default:
        return {n.name};
    }
  }
  Text Neg(Text a) {
    // "-(-a)" rather than "--a", which reads like a decrement.
    return {"-" + Wrapped(a, a.precedence <= 3), 3};
  }
  Text Binary(Op op, Text a, Text b) {
    const Spelling& s = SpellingOf(op);
    if (s.function)
      return {fmt::format("{}({}, {})", s.function, a.text, b.text)};
    const int p = s.symbol == '+' || s.symbol == '-' ? 1 : 2;
    // Left-associative: a right operand of equal precedence keeps its
    // parentheses ("a - (b - c)"), a left one does not need them.
    return {fmt::format("{} {} {}", Wrapped(a, a.precedence < p), s.symbol,
                        Wrapped(b, b.precedence <= p)),
            p};
  }
};

// The text of a leaf through the resolver, or canonical without one.
std::string ResolvedLeaf(const Node& n, const Resolver& r) {
  switch (n.kind) {
    case Node::Kind::kName:
      if (r.value) return r.value(n.name);
      break;
    case Node::Kind::kSize:
      if (r.size) return r.size(n.name);
      break;
    case Node::Kind::kRank:
      if (r.rank) return r.rank(n.name);
      break;
    case Node::Kind::kShape:
      if (r.dim) return r.dim(n.name, n.value);
      break;
    default:
      break;
  }
  return TextAlgebra().Leaf(n).text;
}

// Both targets spell every operation as a call: `ev.Add(a, b)`,
// `_kc.add(a, b)`. Only the literals differ.
struct CallAlgebra {
  const Resolver& r;
  std::string_view object;  // the evaluator or the support module
  bool python;

  std::string Int(int64_t v) const {
    // -9223372036854775808 is not a C++ literal: it is minus a value that
    // does not fit int64_t.
    if (python) return std::to_string(v);
    if (v == std::numeric_limits<int64_t>::min())
      return "(-int64_t{9223372036854775807} - 1)";
    return fmt::format("int64_t{{{}}}", v);
  }
  std::string Leaf(const Node& n) const { return ResolvedLeaf(n, r); }
  std::string Neg(const std::string& a) const {
    return fmt::format("{}.{}({})", object, python ? "neg" : "Neg", a);
  }
  std::string Binary(Op op, const std::string& a, const std::string& b) const {
    const Spelling& s = SpellingOf(op);
    return fmt::format("{}.{}({}, {})", object, python ? s.python : s.cpp, a,
                       b);
  }
};

// Check: the first misuse of a name.
struct CheckAlgebra {
  const Scope& scope;

  using T = std::optional<ParseError>;
  T Int(int64_t) const { return std::nullopt; }
  T Neg(T a) const { return a; }
  T Binary(Op, T a, T b) const { return a ? a : b; }
  bool Done(const T& a) const { return a.has_value(); }

  NameKind KindOf(const std::string& name) const {
    return scope.kind ? scope.kind(name) : NameKind::kUnknown;
  }

  T Leaf(const Node& n) const {
    const NameKind kind = KindOf(n.name);
    if (kind == NameKind::kUnknown)
      return ParseError{n.begin, fmt::format("unknown name '{}'", n.name)};
    if (n.kind == Node::Kind::kName) {
      if (kind == NameKind::kTensor)
        return ParseError{n.begin, fmt::format("'{0}' is a tensor; use "
                                               "{0}.size, {0}.shape[i] or "
                                               "{0}.rank",
                                               n.name)};
      if (kind == NameKind::kFloatValue)
        return ParseError{n.begin, fmt::format("'{}' is a float scalar; "
                                               "expressions are integer",
                                               n.name)};
      return std::nullopt;
    }
    if (kind != NameKind::kTensor)
      return ParseError{n.begin, fmt::format("'{}' is not a tensor", n.name)};
    if (n.kind == Node::Kind::kShape) {
      const int rank = scope.tensor_rank ? scope.tensor_rank(n.name) : -1;
      if (rank >= 0 && n.value >= rank)
        return ParseError{n.begin, fmt::format("{0}.shape[{1}] is out of "
                                               "range: '{0}' has rank {2}",
                                               n.name, n.value, rank)};
    }
    return std::nullopt;
  }
};

// Evaluate: int64 values, the first fault, or unknown.
struct EvalAlgebra {
  const LeafValues& leaves;

  using T = Evaluation;
  T Int(int64_t v) const { return {v}; }
  T Leaf(const Node& n) const { return {leaves ? leaves(n) : std::nullopt}; }
  T Neg(const T& a) const {
    if (!a.value) return a;
    return Of(kc::arith::Neg(*a.value));
  }
  T Binary(Op op, const T& a, const T& b) const {
    if (!a.value || !b.value) return {};
    return Of(kc::arith::Apply(op, *a.value, *b.value));
  }
  bool Done(const T& a) const { return a.fault != kc::arith::Fault::kNone; }

  static T Of(kc::arith::Checked c) {
    if (!c.ok()) return {std::nullopt, c.fault};
    return {c.value};
  }
};

// Visits the leaves in order, for walks that only read names.
template <typename F>
struct LeafVisitor {
  F f;

  struct Unit {};
  Unit Int(int64_t) { return {}; }
  Unit Leaf(const Node& n) {
    f(n);
    return {};
  }
  Unit Neg(Unit) { return {}; }
  Unit Binary(Op, Unit, Unit) { return {}; }
};

template <typename F>
void ForEachLeaf(const Node& e, F f) {
  Fold(e, LeafVisitor<F>{std::move(f)});
}

}  // namespace

Op OpOf(const Node& n) {
  for (const Spelling& s : kSpellings) {
    if (n.kind == Node::Kind::kBinary && s.symbol == n.op) return s.op;
    if (n.kind == Node::Kind::kCall && s.function && n.name == s.function)
      return s.op;
  }
  return Op::kAdd;  // not an operation: callers fold only parsed trees
}

namespace {

// A text longer than kMaxLength, refused before it is parsed.
std::optional<ParseError> TooLong(std::string_view text) {
  if (text.size() <= static_cast<size_t>(kMaxLength)) return std::nullopt;
  return ParseError{kMaxLength, fmt::format("expression is longer than {} "
                                            "bytes",
                                            kMaxLength)};
}

// FindConstantFault: each node's constant value (none when it depends on a
// name), and the first fault of an operation that always fails.
struct FaultAlgebra {
  struct T {
    std::optional<int64_t> value;
    std::optional<ConstantFault> fault;
  };
  T Int(int64_t v) const { return {v}; }
  T Leaf(const Node&) const { return {}; }
  T Neg(const T& a) const {
    if (!a.value) return {};
    return Of(kc::arith::Neg(*a.value));
  }
  T Binary(Op op, const T& a, const T& b) const {
    if (a.value && b.value) return Of(kc::arith::Apply(op, *a.value, *b.value));
    const bool divides = op == Op::kFloorDiv || op == Op::kFloorMod ||
                         op == Op::kCeilDiv;
    if (divides && b.value == 0)
      return {std::nullopt,
              ConstantFault{0, 0, kc::arith::Fault::kDivisionByZero}};
    return {};
  }
  bool Done(const T& t) const { return t.fault.has_value(); }
  // The node whose operation faulted.
  T At(const Node& n, T t) const {
    if (t.fault && t.fault->end == 0) {
      t.fault->begin = n.begin;
      t.fault->end = n.end;
      t.fault->text = Fold(n, TextAlgebra()).text;
    }
    return t;
  }

  static T Of(kc::arith::Checked c) {
    if (!c.ok()) return {std::nullopt, ConstantFault{0, 0, c.fault}};
    return {c.value};
  }
};

}  // namespace

std::optional<ConstantFault> FindConstantFault(const NodePtr& e) {
  return Fold(*e, FaultAlgebra()).fault;
}

Parsed<NodePtr> Parse(std::string_view text) {
  if (std::optional<ParseError> err = TooLong(text)) return *err;
  Parser p(text);
  Item item;
  if (p.ParseExpr(&item) && !p.error()) {
    const Token& t = p.Peek();
    if (!p.error() && t.kind != Token::Kind::kEnd) {
      p.Fail(t.begin,
             fmt::format("unexpected '{}' after the expression", p.TextOf(t)));
    }
  }
  if (p.error()) return *p.error();
  return item.node;
}

Parsed<std::vector<Dim>> ParseShape(std::string_view text) {
  if (std::optional<ParseError> err = TooLong(text)) return *err;
  Parser p(text);
  std::vector<Dim> dims;
  if (p.Peek().kind == Token::Kind::kEnd) return dims;
  while (!p.error()) {
    const Token t = p.Peek();
    if (p.error()) break;
    if (t.kind == Token::Kind::kEnd ||
        (t.kind == Token::Kind::kPunct && t.punct == ',')) {
      p.Fail(t.begin, "expected a dimension (an expression or '_')");
      break;
    }
    // "...": any number of leading dimensions, as the first dimension
    // only. "_" alone is a wildcard; "_ + 1" is an expression (which then
    // fails to check, '_' being no name in scope).
    const Token after = p.PeekSecond();
    if (t.kind == Token::Kind::kPunct && t.punct == '.' &&
        text.substr(t.begin, 3) == "...") {
      if (!dims.empty()) {
        p.Fail(t.begin, "'...' may only be the first dimension");
        break;
      }
      for (int i = 0; i < 3; ++i) p.Advance();
      Dim d;
      d.leading = true;
      d.begin = t.begin;
      d.end = t.begin + 3;
      dims.push_back(d);
    } else if (t.kind == Token::Kind::kName && p.TextOf(t) == "_" &&
               (after.kind == Token::Kind::kEnd ||
                (after.kind == Token::Kind::kPunct && after.punct == ','))) {
      p.Advance();
      dims.push_back(Dim{true, nullptr, t.begin, t.end});
    } else {
      Item item;
      if (!p.ParseExpr(&item)) break;
      dims.push_back(Dim{false, item.node, item.begin, item.end});
    }
    const Token next = p.Peek();
    if (p.error() || next.kind == Token::Kind::kEnd) break;
    if (next.kind == Token::Kind::kPunct && next.punct == ',') {
      p.Advance();
      continue;
    }
    p.Fail(next.begin,
           fmt::format("unexpected '{}' after the dimension", p.TextOf(next)));
  }
  if (p.error()) return *p.error();
  return dims;
}

std::optional<ParseError> Check(const NodePtr& e, const Scope& scope) {
  return Fold(*e, CheckAlgebra{scope});
}

std::vector<std::string> NamesUsed(const NodePtr& e) {
  std::vector<std::string> names;
  ForEachLeaf(*e, [&names](const Node& n) {
    if (std::find(names.begin(), names.end(), n.name) == names.end())
      names.push_back(n.name);
  });
  return names;
}

int FirstUse(const NodePtr& e, std::string_view name) {
  struct Algebra {
    std::string_view name;
    int Int(int64_t) const { return -1; }
    int Leaf(const Node& n) const { return n.name == name ? n.begin : -1; }
    int Neg(int a) const { return a; }
    int Binary(Op, int a, int b) const { return a >= 0 ? a : b; }
    bool Done(int a) const { return a >= 0; }
  };
  return Fold(*e, Algebra{name});
}

std::string EmitCpp(const NodePtr& e, const Resolver& r,
                    std::string_view evaluator) {
  return Fold(*e, CallAlgebra{r, evaluator, /*python=*/false});
}

std::string EmitPython(const NodePtr& e, const Resolver& r,
                       std::string_view module) {
  return Fold(*e, CallAlgebra{r, module, /*python=*/true});
}

std::string ToString(const NodePtr& e) { return Fold(*e, TextAlgebra()).text; }

Evaluation Evaluate(const NodePtr& e, const LeafValues& leaves) {
  return Fold(*e, EvalAlgebra{leaves});
}

std::optional<int64_t> ConstantValue(const NodePtr& e) {
  return Evaluate(e, nullptr).value;
}

}  // namespace kernelc::expr
