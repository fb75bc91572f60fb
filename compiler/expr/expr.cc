#include "compiler/expr/expr.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <utility>
#include <variant>
#include <vector>

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
// The digit's value in base 16, or -1.
int HexDigit(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// How each operation is written: in the expression language (an operator
// or a function), and as the name of the C++ evaluator's method and of the
// Python support module's helper that compute it.
// `precedence` is C's, as binding strength: the higher binds tighter (a
// unary operation binds at 7, an operand at 8).
struct Spelling {
  Op op;
  char token;            // the operator's token (Token::punct), or 0
  const char* symbol;    // the operator as written, or nullptr
  const char* function;  // the function, or nullptr for an operator
  const char* cpp;
  const char* python;
  int precedence;
};

constexpr int kUnaryPrecedence = 7;
constexpr int kOperandPrecedence = 8;

constexpr Spelling kSpellings[] = {
    {Op::kAdd, '+', "+", nullptr, "Add", "add", 5},
    {Op::kSub, '-', "-", nullptr, "Sub", "sub", 5},
    {Op::kMul, '*', "*", nullptr, "Mul", "mul", 6},
    {Op::kFloorDiv, '/', "/", nullptr, "FloorDiv", "floor_div", 6},
    {Op::kFloorMod, '%', "%", nullptr, "FloorMod", "floor_mod", 6},
    {Op::kShl, '<', "<<", nullptr, "Shl", "shl", 4},
    {Op::kShr, '>', ">>", nullptr, "Shr", "shr", 4},
    {Op::kAnd, '&', "&", nullptr, "And", "bit_and", 3},
    {Op::kXor, '^', "^", nullptr, "Xor", "bit_xor", 2},
    {Op::kOr, '|', "|", nullptr, "Or", "bit_or", 1},
    {Op::kCeilDiv, 0, nullptr, "ceil_div", "CeilDiv", "ceil_div",
     kOperandPrecedence},
    {Op::kMin, 0, nullptr, "min", "Min", "minimum", kOperandPrecedence},
    {Op::kMax, 0, nullptr, "max", "Max", "maximum", kOperandPrecedence},
};

// The unary operations: how the C++ evaluator and the Python support
// module name them.
struct UnarySpelling {
  UnaryOp op;
  const char* cpp;
  const char* python;
};

constexpr UnarySpelling kUnarySpellings[] = {
    {UnaryOp::kNeg, "Neg", "neg"},
    {UnaryOp::kNot, "Not", "bit_not"},
    {UnaryOp::kToInt8, "ToInt8", "to_int8"},
    {UnaryOp::kToUint8, "ToUint8", "to_uint8"},
    {UnaryOp::kToInt16, "ToInt16", "to_int16"},
    {UnaryOp::kToUint16, "ToUint16", "to_uint16"},
    {UnaryOp::kToInt32, "ToInt32", "to_int32"},
    {UnaryOp::kToUint32, "ToUint32", "to_uint32"},
    {UnaryOp::kToInt64, "ToInt64", "to_int64"},
    {UnaryOp::kToUint64, "ToUint64", "to_uint64"},
};

const UnarySpelling& SpellingOf(UnaryOp op) {
  for (const UnarySpelling& s : kUnarySpellings)
    if (s.op == op) return s;
  return kUnarySpellings[0];
}

// The integer types a cast may name. The fixed-width and pointer-sized
// ones are those of the LP64 targets that CUDA compiles for; the
// keywords' combinations are resolved by CastType.
struct TypedefName {
  const char* name;
  UnaryOp cast;
};

constexpr TypedefName kTypedefNames[] = {
    {"int8_t", UnaryOp::kToInt8},     {"uint8_t", UnaryOp::kToUint8},
    {"int16_t", UnaryOp::kToInt16},   {"uint16_t", UnaryOp::kToUint16},
    {"int32_t", UnaryOp::kToInt32},   {"uint32_t", UnaryOp::kToUint32},
    {"int64_t", UnaryOp::kToInt64},   {"uint64_t", UnaryOp::kToUint64},
    {"intptr_t", UnaryOp::kToInt64},  {"uintptr_t", UnaryOp::kToUint64},
    {"ptrdiff_t", UnaryOp::kToInt64}, {"ssize_t", UnaryOp::kToInt64},
    {"size_t", UnaryOp::kToUint64},
};

constexpr const char* kTypeKeywords[] = {"signed", "unsigned", "char",
                                         "short",  "int",      "long"};
// Types that are no integer type: a cast to them is an error of its own
// rather than an unknown name.
constexpr const char* kOtherTypes[] = {"float", "double", "bool",  "_Bool",
                                       "void",  "half",   "__half"};

template <typename List>
bool Contains(const List& list, std::string_view word) {
  for (const char* w : list)
    if (word == w) return true;
  return false;
}

bool IsTypeWord(std::string_view word) {
  if (Contains(kTypeKeywords, word) || Contains(kOtherTypes, word)) return true;
  for (const TypedefName& t : kTypedefNames)
    if (word == t.name) return true;
  return false;
}

// The conversion of a cast to the type `words` (one or more of them, in
// any order C allows: "long unsigned int"), or why it is none. Plain
// `char` is refused: its signedness differs between the targets.
std::variant<UnaryOp, std::string> CastType(
    const std::vector<std::string_view>& words, std::string_view spelled) {
  const std::string invalid =
      fmt::format("'{}' is not an integer type", spelled);
  if (words.size() == 1) {
    for (const TypedefName& t : kTypedefNames)
      if (words[0] == t.name) return t.cast;
  }
  int count[6] = {};
  for (std::string_view w : words) {
    if (Contains(kOtherTypes, w))
      return fmt::format("a cast to '{}': expressions are integer", spelled);
    int i = 0;
    while (i < 6 && w != kTypeKeywords[i]) ++i;
    if (i == 6) return invalid;  // a typedef name among other words
    ++count[i];
  }
  const int is_signed = count[0], is_unsigned = count[1], chars = count[2],
            shorts = count[3], ints = count[4], longs = count[5];
  if (is_signed + is_unsigned > 1 || chars > 1 || shorts > 1 || ints > 1 ||
      longs > 2 || (chars && (shorts || ints || longs)) || (shorts && longs))
    return invalid;
  if (chars && !is_signed && !is_unsigned)
    return fmt::format(
        "'{}' may be signed or unsigned; write signed char or "
        "unsigned char",
        spelled);
  const bool u = is_unsigned != 0;
  if (chars) return u ? UnaryOp::kToUint8 : UnaryOp::kToInt8;
  if (shorts) return u ? UnaryOp::kToUint16 : UnaryOp::kToInt16;
  if (longs) return u ? UnaryOp::kToUint64 : UnaryOp::kToInt64;
  return u ? UnaryOp::kToUint32 : UnaryOp::kToInt32;
}

const Spelling& SpellingOf(Op op) {
  for (const Spelling& s : kSpellings)
    if (s.op == op) return s;
  return kSpellings[0];
}

// The function of the language named `name`, if any.
const Spelling* FunctionNamed(std::string_view name) {
  for (const Spelling& s : kSpellings)
    if (s.function && name == s.function) return &s;
  return nullptr;
}

struct Token {
  enum class Kind { kEnd, kInt, kName, kPunct, kError };
  Kind kind = Kind::kEnd;
  int begin = 0;
  int end = 0;
  int64_t value = 0;  // kInt
  char punct = 0;     // kPunct; '<' for <<, '>' for >>
  std::string error;  // kError
};

// Whether `s` is a suffix that C allows on an integer literal: u, l or ll
// in either case (ll not mixed: "lL" is none), alone or with u before or
// after.
bool IsIntegerSuffix(std::string_view s) {
  auto strip_u = [](std::string_view& x, bool front) {
    if (x.empty()) return false;
    const char c = front ? x.front() : x.back();
    if (c != 'u' && c != 'U') return false;
    x = front ? x.substr(1) : x.substr(0, x.size() - 1);
    return true;
  };
  if (!strip_u(s, true)) strip_u(s, false);
  return s.empty() || s == "l" || s == "L" || s == "ll" || s == "LL";
}

// Reads an integer literal at `pos` (a digit): its value, or a kError
// token. Decimal, 0x hexadecimal, 0b binary, with a C suffix, which does
// not change the value: the language has one type, int64. A leading zero
// does not make octal, which only C reads: a literal that C would read as
// a different octal number ("010") is an error rather than a silent
// difference from a macro that holds the same text.
Token LexNumber(std::string_view text, int pos) {
  const int n = static_cast<int>(text.size());
  Token t;
  t.begin = pos;
  int end = pos;
  // The whole word: digits, letters, a suffix, and any '.', so that "2x",
  // "1.5" or "0x1g" is one bad word rather than a number followed by
  // something out of place.
  bool has_dot = false;
  while (end < n && (IsNameChar(text[end]) || text[end] == '.')) {
    has_dot |= text[end] == '.';
    ++end;
  }
  t.end = end;
  const std::string_view word = text.substr(pos, end - pos);
  auto invalid = [&](std::string_view why) {
    t.kind = Token::Kind::kError;
    t.error = fmt::format("invalid number '{}'{}", word, why);
    return t;
  };
  if (has_dot) return invalid("; expressions are integer");
  int base = 10;
  size_t i = 0;
  if (word.size() > 1 && word[0] == '0' && (word[1] == 'x' || word[1] == 'X')) {
    base = 16;
    i = 2;
  } else if (word.size() > 1 && word[0] == '0' &&
             (word[1] == 'b' || word[1] == 'B')) {
    base = 2;
    i = 2;
  }
  const size_t first = i;
  bool too_large = false;
  bool octal_differs = false;
  int64_t value = 0;
  for (; i < word.size(); ++i) {
    const int digit = HexDigit(word[i]);
    if (digit < 0 || digit >= base) break;
    octal_differs |= base == 10 && digit >= 8;
    if (value > (std::numeric_limits<int64_t>::max() - digit) / base) {
      too_large = true;
    } else {
      value = value * base + digit;
    }
  }
  if (i == first || !IsIntegerSuffix(word.substr(i))) return invalid("");
  const std::string_view digits = word.substr(0, i);
  if (base == 10 && digits.size() > 1 && digits[0] == '0') {
    // Equal in both readings when every digit but the last is zero and the
    // last is below 8 ("007"); otherwise C reads another number.
    octal_differs |= digits.find_first_not_of('0') < digits.size() - 1;
    if (octal_differs)
      return invalid(
          "; C reads a leading 0 as octal: write it without the 0s, or in "
          "hexadecimal");
  }
  if (too_large) {
    t.kind = Token::Kind::kError;
    t.error = "integer literal is too large";
    return t;
  }
  t.kind = Token::Kind::kInt;
  t.value = value;
  return t;
}

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
  if (IsDigit(c)) return LexNumber(text, pos);
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
    case '&':
    case '|':
    case '^':
    case '~':
      t.kind = Token::Kind::kPunct;
      t.punct = c;
      t.end = pos + 1;
      return t;
    case '<':
    case '>':
      // Only the shifts: comparisons are not in the language.
      if (pos + 1 < n && text[pos + 1] == c) {
        t.kind = Token::Kind::kPunct;
        t.punct = c;
        t.end = pos + 2;
        return t;
      }
      break;
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

  bool ParseExpr(Item* out) { return ParseBinary(1, out); }

 private:
  // The binary operator that the next token is, if any.
  const Spelling* PeekOperator() {
    const Token& t = Peek();
    if (t.kind != Token::Kind::kPunct) return nullptr;
    for (const Spelling& s : kSpellings)
      if (s.token == t.punct) return &s;
    return nullptr;
  }

  // The operations of precedence `level` and above, left-associative:
  // "a - b - c" is (a - b) - c.
  bool ParseBinary(int level, Item* out) {
    if (level >= kUnaryPrecedence) return ParseUnary(out);
    if (!ParseBinary(level + 1, out)) return false;
    for (const Spelling* s = PeekOperator(); s && s->precedence == level;
         s = PeekOperator()) {
      const Token op = Peek();
      Advance();
      Item right;
      if (!ParseBinary(level + 1, &right)) return false;
      if (!MakeBinary(op, s->op, std::move(*out), std::move(right), out))
        return false;
    }
    return !error_;
  }

  bool MakeBinary(const Token& op, Op operation, Item left, Item right,
                  Item* out) {
    const int depth = 1 + std::max(left.depth, right.depth);
    if (depth > kMaxDepth) return TooDeep(op.begin);
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::kBinary;
    n->op = operation;
    n->begin = left.begin;
    n->end = right.end;
    n->args = {std::move(left.node), std::move(right.node)};
    *out = Item{n, n->begin, n->end, depth};
    return true;
  }

  // "-a", "~a", "(type)a", or an operand.
  bool ParseUnary(Item* out) {
    if (IsPunct('(') && IsCast()) return ParseCast(out);
    if (!IsPunct('-') && !IsPunct('~')) return ParsePrimary(out);
    const Token sign = Peek();
    Advance();
    auto n = std::make_shared<Node>();
    n->kind = sign.punct == '-' ? Node::Kind::kNeg : Node::Kind::kNot;
    return ParseUnaryOperand(sign.begin, std::move(n), out);
  }

  // Whether the '(' next opens a cast: a type's word follows it. The
  // types' names are reserved: no name in scope can be one.
  bool IsCast() {
    const Token second = PeekSecond();
    return second.kind == Token::Kind::kName && IsTypeWord(TextOf(second));
  }

  bool ParseCast(Item* out) {
    const Token open = Peek();
    Advance();
    std::vector<std::string_view> words;
    while (Peek().kind == Token::Kind::kName && IsTypeWord(TextOf(Peek()))) {
      words.push_back(TextOf(Peek()));
      Advance();
    }
    if (error_) return false;
    if (!IsPunct(')')) return Fail(Peek().begin, "expected ')' after the type");
    const std::string spelled = fmt::format("{}", fmt::join(words, " "));
    std::variant<UnaryOp, std::string> type = CastType(words, spelled);
    if (auto* why = std::get_if<std::string>(&type))
      return Fail(PeekSecondOf(open), *why);
    Advance();
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::kCast;
    n->name = spelled;
    n->cast = std::get<UnaryOp>(type);
    return ParseUnaryOperand(open.begin, std::move(n), out);
  }

  // The operand of the unary node `n`, whose text starts at `begin`; then
  // `n` over it.
  bool ParseUnaryOperand(int begin, std::shared_ptr<Node> n, Item* out) {
    if (!Enter(begin)) return false;
    Item operand;
    const bool ok = ParseUnary(&operand);
    --nesting_;
    if (!ok) return false;
    if (operand.depth + 1 > kMaxDepth) return TooDeep(begin);
    n->begin = begin;
    n->end = operand.end;
    n->args = {std::move(operand.node)};
    *out = Item{n, n->begin, n->end, operand.depth + 1};
    return true;
  }

  // Where the token after `t` begins.
  int PeekSecondOf(const Token& t) const { return Lex(text_, t.end).begin; }

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
      if (FunctionNamed(TextOf(t))) return ParseCall(out);
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
    n->op = FunctionNamed(fn)->op;
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
// the parentheses of the operation around it (Spelling::precedence).
struct Text {
  std::string text;
  int precedence = kOperandPrecedence;
};

std::string Wrapped(const Text& t, bool parens) {
  return parens ? "(" + t.text + ")" : t.text;
}

struct TextAlgebra {
  Text Int(int64_t v) {
    // Negative literals are only built by hand, never parsed.
    return {std::to_string(v), v < 0 ? kUnaryPrecedence : kOperandPrecedence};
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
  Text Unary(UnaryOp op, Text a) {
    // "-(-a)" rather than "--a", which reads like a decrement.
    const bool parens = a.precedence < kUnaryPrecedence ||
                        (op == UnaryOp::kNeg && a.text[0] == '-');
    return {(op == UnaryOp::kNeg ? "-" : "~") + Wrapped(a, parens),
            kUnaryPrecedence};
  }
  Text Cast(const Node& n, Text a) {
    return {"(" + n.name + ")" + Wrapped(a, a.precedence < kUnaryPrecedence),
            kUnaryPrecedence};
  }
  Text Binary(Op op, Text a, Text b) {
    const Spelling& s = SpellingOf(op);
    if (s.function)
      return {fmt::format("{}({}, {})", s.function, a.text, b.text)};
    const int p = s.precedence;
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
  std::string Unary(UnaryOp op, const std::string& a) const {
    const UnarySpelling& s = SpellingOf(op);
    return fmt::format("{}.{}({})", object, python ? s.python : s.cpp, a);
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
  T Unary(UnaryOp, T a) const { return a; }
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
  T Unary(UnaryOp op, const T& a) const {
    if (!a.value) return a;
    return Of(kc::arith::Apply(op, *a.value));
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
  Unit Unary(UnaryOp, Unit) { return {}; }
  Unit Binary(Op, Unit, Unit) { return {}; }
};

template <typename F>
void ForEachLeaf(const Node& e, F f) {
  Fold(e, LeafVisitor<F>{std::move(f)});
}

}  // namespace

UnaryOp UnaryOf(const Node& n) {
  switch (n.kind) {
    case Node::Kind::kNot:
      return UnaryOp::kNot;
    case Node::Kind::kCast:
      return n.cast;
    default:
      return UnaryOp::kNeg;
  }
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
  T Unary(UnaryOp op, const T& a) const {
    if (!a.value) return {};
    return Of(kc::arith::Apply(op, *a.value));
  }
  T Binary(Op op, const T& a, const T& b) const {
    if (a.value && b.value) return Of(kc::arith::Apply(op, *a.value, *b.value));
    const bool divides = op == Op::kFloorDiv || op == Op::kFloorMod ||
                         op == Op::kCeilDiv;
    if (divides && b.value == 0)
      return {std::nullopt,
              ConstantFault{0, 0, kc::arith::Fault::kDivisionByZero}};
    // The count is checked before the shifted value (kc::arith::Shl).
    const bool shifts = op == Op::kShl || op == Op::kShr;
    if (shifts && b.value && (*b.value < 0 || *b.value >= 64))
      return {std::nullopt, ConstantFault{0, 0, kc::arith::Fault::kShiftCount}};
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
    int Unary(UnaryOp, int a) const { return a; }
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
