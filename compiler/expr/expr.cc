#include "compiler/expr/expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

namespace kernelc::expr {

namespace {

// Expressions nested deeper than this are rejected, so that the recursive
// parser and the recursive walkers below cannot exhaust the stack.
constexpr int kMaxDepth = 1000;

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

bool IsFunction(std::string_view name) {
  return name == "ceil_div" || name == "min" || name == "max";
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
    if (++nesting_ > kMaxDepth) {
      --nesting_;
      return TooDeep(offset);
    }
    return true;
  }
  bool TooDeep(int offset) {
    return Fail(offset, "expression is too deeply nested");
  }

  std::string_view text_;
  int pos_ = 0;  // where the next token's lexing starts
  bool peeked_ = false;
  Token next_;
  int nesting_ = 0;
  std::optional<ParseError> error_;
};

// Binding strength, for ToString's parentheses: sum < product < unary <
// primary.
int Precedence(const Node& n) {
  switch (n.kind) {
    case Node::Kind::kBinary:
      return n.op == '+' || n.op == '-' ? 1 : 2;
    case Node::Kind::kNeg:
      return 3;
    case Node::Kind::kInt:
      return n.value < 0 ? 3 : 4;  // only built by hand, never parsed
    default:
      return 4;
  }
}

void Write(const Node& n, std::string& out);

void WriteWrapped(const Node& n, bool parens, std::string& out) {
  if (parens) out += '(';
  Write(n, out);
  if (parens) out += ')';
}

void Write(const Node& n, std::string& out) {
  switch (n.kind) {
    case Node::Kind::kInt:
      out += std::to_string(n.value);
      return;
    case Node::Kind::kName:
      out += n.name;
      return;
    case Node::Kind::kSize:
      out += n.name + ".size";
      return;
    case Node::Kind::kRank:
      out += n.name + ".rank";
      return;
    case Node::Kind::kShape:
      out += fmt::format("{}.shape[{}]", n.name, n.value);
      return;
    case Node::Kind::kNeg:
      out += '-';
      // "-(-a)" rather than "--a", which reads like a decrement.
      WriteWrapped(*n.args[0], Precedence(*n.args[0]) <= 3, out);
      return;
    case Node::Kind::kBinary: {
      const int p = Precedence(n);
      // Left-associative: a right operand of equal precedence keeps its
      // parentheses ("a - (b - c)"), a left one does not need them.
      WriteWrapped(*n.args[0], Precedence(*n.args[0]) < p, out);
      out += ' ';
      out += n.op;
      out += ' ';
      WriteWrapped(*n.args[1], Precedence(*n.args[1]) <= p, out);
      return;
    }
    case Node::Kind::kCall:
      out += n.name;
      out += '(';
      Write(*n.args[0], out);
      out += ", ";
      Write(*n.args[1], out);
      out += ')';
      return;
  }
}

enum class Target { kCpp, kPython };

class Emitter {
 public:
  Emitter(const Resolver& r, Target target, std::string_view evaluator)
      : r_(r), target_(target), ev_(evaluator) {}

  std::string Emit(const Node& n) const {
    switch (n.kind) {
      case Node::Kind::kInt:
        return Literal(n.value);
      case Node::Kind::kName:
        return r_.value ? r_.value(n.name) : n.name;
      case Node::Kind::kSize:
        return r_.size ? r_.size(n.name) : ToString(n);
      case Node::Kind::kRank:
        return r_.rank ? r_.rank(n.name) : ToString(n);
      case Node::Kind::kShape:
        return r_.dim ? r_.dim(n.name, n.value) : ToString(n);
      case Node::Kind::kNeg: {
        const std::string a = Emit(*n.args[0]);
        if (target_ == Target::kCpp) return fmt::format("{}.Neg({})", ev_, a);
        return "(-" + a + ")";
      }
      case Node::Kind::kBinary:
        return Binary(n.op, Emit(*n.args[0]), Emit(*n.args[1]));
      case Node::Kind::kCall:
        return Call(n.name, Emit(*n.args[0]), Emit(*n.args[1]));
    }
    return "";
  }

 private:
  static std::string ToString(const Node& n) {
    std::string s;
    Write(n, s);
    return s;
  }

  std::string Literal(int64_t v) const {
    if (target_ == Target::kPython) {
      return v < 0 ? fmt::format("({})", v) : std::to_string(v);
    }
    // -9223372036854775808 is not a C++ literal: it is minus a value that
    // does not fit int64_t.
    if (v == std::numeric_limits<int64_t>::min()) {
      return "(-int64_t{9223372036854775807} - 1)";
    }
    return fmt::format("int64_t{{{}}}", v);
  }

  std::string Binary(char op, const std::string& a,
                     const std::string& b) const {
    if (target_ == Target::kPython) {
      if (op == '/') return fmt::format("({} // {})", a, b);
      return fmt::format("({} {} {})", a, op, b);
    }
    switch (op) {
      case '/':
        return fmt::format("{}.FloorDiv({}, {})", ev_, a, b);
      case '%':
        return fmt::format("{}.FloorMod({}, {})", ev_, a, b);
      case '+':
        return fmt::format("{}.Add({}, {})", ev_, a, b);
      case '-':
        return fmt::format("{}.Sub({}, {})", ev_, a, b);
      default:
        return fmt::format("{}.Mul({}, {})", ev_, a, b);
    }
  }

  std::string Call(const std::string& fn, const std::string& a,
                   const std::string& b) const {
    if (target_ == Target::kPython) {
      if (fn == "ceil_div") return fmt::format("(-((-{}) // {}))", a, b);
      return fmt::format("{}({}, {})", fn, a, b);
    }
    if (fn == "ceil_div") return fmt::format("{}.CeilDiv({}, {})", ev_, a, b);
    return fmt::format("std::{}<int64_t>({}, {})", fn, a, b);
  }

  const Resolver& r_;
  Target target_;
  std::string_view ev_;
};

std::optional<ParseError> CheckNode(const Node& n, const Scope& scope) {
  auto kind_of = [&](const std::string& name) {
    return scope.kind ? scope.kind(name) : NameKind::kUnknown;
  };
  switch (n.kind) {
    case Node::Kind::kInt:
      return std::nullopt;
    case Node::Kind::kName:
      switch (kind_of(n.name)) {
        case NameKind::kUnknown:
          return ParseError{n.begin, fmt::format("unknown name '{}'", n.name)};
        case NameKind::kTensor:
          return ParseError{n.begin,
                            fmt::format("'{0}' is a tensor; use {0}.size, "
                                        "{0}.shape[i] or {0}.rank",
                                        n.name)};
        case NameKind::kFloatValue:
          return ParseError{n.begin,
                            fmt::format("'{}' is a float scalar; expressions "
                                        "are integer",
                                        n.name)};
        case NameKind::kSymbol:
        case NameKind::kIntValue:
          return std::nullopt;
      }
      return std::nullopt;
    case Node::Kind::kSize:
    case Node::Kind::kRank:
    case Node::Kind::kShape: {
      const NameKind kind = kind_of(n.name);
      if (kind == NameKind::kUnknown) {
        return ParseError{n.begin, fmt::format("unknown name '{}'", n.name)};
      }
      if (kind != NameKind::kTensor) {
        return ParseError{n.begin, fmt::format("'{}' is not a tensor", n.name)};
      }
      if (n.kind == Node::Kind::kShape) {
        const int rank = scope.tensor_rank ? scope.tensor_rank(n.name) : -1;
        if (rank >= 0 && n.value >= rank) {
          return ParseError{
              n.begin, fmt::format("{0}.shape[{1}] is out of range: '{0}' has "
                                   "rank {2}",
                                   n.name, n.value, rank)};
        }
      }
      return std::nullopt;
    }
    case Node::Kind::kNeg:
    case Node::Kind::kBinary:
    case Node::Kind::kCall:
      for (const NodePtr& a : n.args) {
        if (auto err = CheckNode(*a, scope)) return err;
      }
      return std::nullopt;
  }
  return std::nullopt;
}

void CollectNames(const Node& n, std::vector<std::string>& names) {
  switch (n.kind) {
    case Node::Kind::kName:
    case Node::Kind::kSize:
    case Node::Kind::kRank:
    case Node::Kind::kShape:
      if (std::find(names.begin(), names.end(), n.name) == names.end()) {
        names.push_back(n.name);
      }
      return;
    default:
      for (const NodePtr& a : n.args) CollectNames(*a, names);
      return;
  }
}

// Floor division and modulo as the runtime evaluator computes them; nullopt
// where it would report failure.
std::optional<int64_t> FloorDiv(int64_t a, int64_t b) {
  if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) {
    return std::nullopt;
  }
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

std::optional<int64_t> FloorMod(int64_t a, int64_t b) {
  if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) {
    return std::nullopt;
  }
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

std::optional<int64_t> Evaluate(const Node& n) {
  switch (n.kind) {
    case Node::Kind::kInt:
      return n.value;
    case Node::Kind::kName:
    case Node::Kind::kSize:
    case Node::Kind::kRank:
    case Node::Kind::kShape:
      return std::nullopt;
    case Node::Kind::kNeg: {
      const std::optional<int64_t> a = Evaluate(*n.args[0]);
      if (!a || *a == std::numeric_limits<int64_t>::min()) return std::nullopt;
      return -*a;
    }
    case Node::Kind::kBinary:
    case Node::Kind::kCall:
      break;
  }
  const std::optional<int64_t> a = Evaluate(*n.args[0]);
  if (!a) return std::nullopt;
  const std::optional<int64_t> b = Evaluate(*n.args[1]);
  if (!b) return std::nullopt;
  int64_t r = 0;
  if (n.kind == Node::Kind::kCall) {
    if (n.name == "min") return std::min(*a, *b);
    if (n.name == "max") return std::max(*a, *b);
    // ceil(a / b) == -floor(-a / b); -a overflows only for INT64_MIN.
    if (*a == std::numeric_limits<int64_t>::min()) return std::nullopt;
    const std::optional<int64_t> q = FloorDiv(-*a, *b);
    if (!q || *q == std::numeric_limits<int64_t>::min()) return std::nullopt;
    return -*q;
  }
  switch (n.op) {
    case '+':
      if (__builtin_add_overflow(*a, *b, &r)) return std::nullopt;
      return r;
    case '-':
      if (__builtin_sub_overflow(*a, *b, &r)) return std::nullopt;
      return r;
    case '*':
      if (__builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
      return r;
    case '/':
      return FloorDiv(*a, *b);
    case '%':
      return FloorMod(*a, *b);
    default:
      return std::nullopt;
  }
}

}  // namespace

Parsed<NodePtr> Parse(std::string_view text) {
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
    // "_" alone is a wildcard; "_ + 1" is an expression (which then fails
    // to check, '_' being no name in scope).
    const Token after = p.PeekSecond();
    if (t.kind == Token::Kind::kName && p.TextOf(t) == "_" &&
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
  return CheckNode(*e, scope);
}

std::vector<std::string> NamesUsed(const NodePtr& e) {
  std::vector<std::string> names;
  CollectNames(*e, names);
  return names;
}

std::string EmitCpp(const NodePtr& e, const Resolver& r,
                    std::string_view evaluator) {
  return Emitter(r, Target::kCpp, evaluator).Emit(*e);
}

std::string EmitPython(const NodePtr& e, const Resolver& r) {
  return Emitter(r, Target::kPython, "").Emit(*e);
}

std::string ToString(const NodePtr& e) {
  std::string s;
  Write(*e, s);
  return s;
}

std::optional<int64_t> ConstantValue(const NodePtr& e) { return Evaluate(*e); }

}  // namespace kernelc::expr
