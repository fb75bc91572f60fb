#include "compiler/expr/expr.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kernelc::expr {
namespace {

NodePtr P(const std::string& text) {
  Parsed<NodePtr> r = Parse(text);
  if (const auto* err = std::get_if<ParseError>(&r)) {
    FAIL("'" << text << "' did not parse: " << err->offset << ": "
             << err->message);
  }
  return std::get<NodePtr>(r);
}

ParseError ParseErr(const std::string& text) {
  Parsed<NodePtr> r = Parse(text);
  if (std::holds_alternative<NodePtr>(r)) {
    FAIL("'" << text << "' parsed as '" << ToString(std::get<NodePtr>(r))
             << "'; expected an error");
  }
  return std::get<ParseError>(r);
}

std::vector<Dim> Shape(const std::string& text) {
  Parsed<std::vector<Dim>> r = ParseShape(text);
  if (const auto* err = std::get_if<ParseError>(&r)) {
    FAIL("shape '" << text << "' did not parse: " << err->offset << ": "
                   << err->message);
  }
  return std::get<std::vector<Dim>>(r);
}

ParseError ShapeErr(const std::string& text) {
  Parsed<std::vector<Dim>> r = ParseShape(text);
  REQUIRE(std::holds_alternative<ParseError>(r));
  return std::get<ParseError>(r);
}

// Marks every use so that the tests see which resolver function ran.
Resolver TestResolver() {
  Resolver r;
  r.value = [](std::string_view n) { return std::string(n); };
  r.size = [](std::string_view t) { return "size(" + std::string(t) + ")"; };
  r.rank = [](std::string_view t) { return "rank(" + std::string(t) + ")"; };
  r.dim = [](std::string_view t, int64_t d) {
    return "dim(" + std::string(t) + ", " + std::to_string(d) + ")";
  };
  return r;
}

// What the Python package does: numpy-like attribute names.
Resolver PythonResolver() {
  Resolver r;
  r.value = [](std::string_view n) { return std::string(n); };
  r.size = [](std::string_view t) { return std::string(t) + ".size"; };
  r.rank = [](std::string_view t) { return std::string(t) + ".ndim"; };
  r.dim = [](std::string_view t, int64_t d) {
    return std::string(t) + ".shape[" + std::to_string(d) + "]";
  };
  return r;
}

// x: a tensor of rank 2; y: a tensor of unknown rank; n: a symbol;
// k: an int scalar; a: a float scalar.
Scope TestScope() {
  Scope s;
  s.kind = [](std::string_view n) {
    if (n == "x" || n == "y") return NameKind::kTensor;
    if (n == "n") return NameKind::kSymbol;
    if (n == "k") return NameKind::kIntValue;
    if (n == "a") return NameKind::kFloatValue;
    return NameKind::kUnknown;
  };
  s.tensor_rank = [](std::string_view n) { return n == "x" ? 2 : -1; };
  return s;
}

TEST_CASE("ToString is canonical and parses back to the same text") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a+b*c", "a + b * c"},
      {"(a + b) * c", "(a + b) * c"},
      {"a - b - c", "a - b - c"},
      {"a - (b - c)", "a - (b - c)"},
      {"(a - b) - c", "a - b - c"},
      {"a / b * c", "a / b * c"},
      {"a * (b / c)", "a * (b / c)"},
      {"a % b % c", "a % b % c"},
      {"a + (b + c)", "a + (b + c)"},
      {"-(a + b)", "-(a + b)"},
      {"- -a", "-(-a)"},
      {"-a * b", "-a * b"},
      {"a * -b", "a * -b"},
      {"a - -1", "a - -1"},
      {"ceil_div( n ,2 )", "ceil_div(n, 2)"},
      {"x . shape [ 0 ]", "x.shape[0]"},
      {"x.size+y.rank", "x.size + y.rank"},
      {"min(a, max(b, 3)) % 4", "min(a, max(b, 3)) % 4"},
      {"((a))", "a"},
      {"007", "7"},
      {"\tn\n*\r2 ", "n * 2"},
      {"9223372036854775807", "9223372036854775807"},
      // C's integer syntax: literals keep their value, not their spelling.
      {"0x10 + 0XfF", "16 + 255"},
      {"0b101", "5"},
      {"256U * 1ull + 2Lu + 3llU + 4l", "256 * 1 + 2 + 3 + 4"},
      {"a<<1>>b", "a << 1 >> b"},
      {"a << (b >> c)", "a << (b >> c)"},
      {"(a << b) + c", "(a << b) + c"},
      {"a << b + c", "a << b + c"},
      {"a & b | c ^ d", "a & b | c ^ d"},
      {"a & (b | c)", "a & (b | c)"},
      {"(a | b) ^ c", "(a | b) ^ c"},
      {"a & b << 2", "a & b << 2"},
      {"~a & ~(b + 1)", "~a & ~(b + 1)"},
      {"~~a", "~~a"},
      {"-~a", "-~a"},
      {"~-a", "~-a"},
      {"(int)n / 2", "(int)n / 2"},
      {"( unsigned  long\tint )-n", "(unsigned long int)-n"},
      {"(size_t)(a + b)", "(size_t)(a + b)"},
      {"(int)(unsigned)a", "(int)(unsigned)a"},
      {"-((int)a)", "-(int)a"},
      {"(int64_t)x.size", "(int64_t)x.size"},
  };
  for (const auto& [text, canonical] : cases) {
    INFO(text);
    const std::string s = ToString(P(text));
    CHECK(s == canonical);
    CHECK(ToString(P(s)) == canonical);
  }
}

TEST_CASE("Precedence and left associativity") {
  NodePtr e = P("a - b - c");  // (a - b) - c
  REQUIRE(e->kind == Node::Kind::kBinary);
  CHECK(e->op == Op::kSub);
  REQUIRE(e->args[0]->kind == Node::Kind::kBinary);
  CHECK(e->args[0]->op == Op::kSub);
  CHECK(e->args[0]->args[0]->name == "a");
  CHECK(e->args[0]->args[1]->name == "b");
  CHECK(e->args[1]->name == "c");

  e = P("a / b * c");  // (a / b) * c
  CHECK(e->op == Op::kMul);
  CHECK(e->args[0]->op == Op::kFloorDiv);
  CHECK(e->args[1]->name == "c");

  e = P("a + b * c");  // a + (b * c)
  CHECK(e->op == Op::kAdd);
  CHECK(e->args[0]->name == "a");
  CHECK(e->args[1]->op == Op::kMul);

  e = P("-a % b");  // (-a) % b: unary minus binds tighter
  CHECK(e->op == Op::kFloorMod);
  CHECK(e->args[0]->kind == Node::Kind::kNeg);

  // C's levels: * / %, then + -, then << >>, then &, then ^, then |.
  e = P("a | b ^ c & d << e + f * g");
  CHECK(ToString(e) == "a | b ^ c & d << e + f * g");
  CHECK(e->op == Op::kOr);
  CHECK(e->args[1]->op == Op::kXor);
  CHECK(e->args[1]->args[1]->op == Op::kAnd);
  CHECK(e->args[1]->args[1]->args[1]->op == Op::kShl);
  CHECK(e->args[1]->args[1]->args[1]->args[1]->op == Op::kAdd);
  e = P("a * b + c << d & e ^ f | g");  // ((((a * b + c) << d) & e) ^ f) | g
  CHECK(e->op == Op::kOr);
  CHECK(e->args[0]->op == Op::kXor);
  CHECK(e->args[0]->args[0]->op == Op::kAnd);
  CHECK(e->args[0]->args[0]->args[0]->op == Op::kShl);
  CHECK(e->args[0]->args[0]->args[0]->args[0]->op == Op::kAdd);
  e = P("a >> b << c");  // (a >> b) << c
  CHECK(e->op == Op::kShl);
  CHECK(e->args[0]->op == Op::kShr);

  // A cast binds as a unary operation: (int)a * b is ((int)a) * b.
  e = P("(int)a * b");
  CHECK(e->op == Op::kMul);
  REQUIRE(e->args[0]->kind == Node::Kind::kCast);
  CHECK(e->args[0]->name == "int");
  CHECK(e->args[0]->cast == UnaryOp::kToInt32);
  CHECK(e->args[0]->begin == 0);
  CHECK(e->args[0]->end == 6);
  e = P("~a + 1");
  CHECK(e->op == Op::kAdd);
  CHECK(e->args[0]->kind == Node::Kind::kNot);
}

TEST_CASE("Casts name C's integer types") {
  const std::vector<std::pair<std::string, UnaryOp>> cases = {
      {"(int)n", UnaryOp::kToInt32},
      {"(signed)n", UnaryOp::kToInt32},
      {"(signed int)n", UnaryOp::kToInt32},
      {"(unsigned)n", UnaryOp::kToUint32},
      {"(unsigned int)n", UnaryOp::kToUint32},
      {"(int unsigned)n", UnaryOp::kToUint32},
      {"(short)n", UnaryOp::kToInt16},
      {"(unsigned short int)n", UnaryOp::kToUint16},
      {"(signed char)n", UnaryOp::kToInt8},
      {"(unsigned char)n", UnaryOp::kToUint8},
      {"(long)n", UnaryOp::kToInt64},
      {"(long long)n", UnaryOp::kToInt64},
      {"(long long int)n", UnaryOp::kToInt64},
      {"(unsigned long)n", UnaryOp::kToUint64},
      {"(long unsigned long)n", UnaryOp::kToUint64},
      {"(unsigned long long)n", UnaryOp::kToUint64},
      {"(size_t)n", UnaryOp::kToUint64},
      {"(ptrdiff_t)n", UnaryOp::kToInt64},
      {"(int8_t)n", UnaryOp::kToInt8},
      {"(uint8_t)n", UnaryOp::kToUint8},
      {"(int16_t)n", UnaryOp::kToInt16},
      {"(uint16_t)n", UnaryOp::kToUint16},
      {"(int32_t)n", UnaryOp::kToInt32},
      {"(uint32_t)n", UnaryOp::kToUint32},
      {"(int64_t)n", UnaryOp::kToInt64},
      {"(uint64_t)n", UnaryOp::kToUint64},
  };
  for (const auto& [text, cast] : cases) {
    INFO(text);
    NodePtr e = P(text);
    REQUIRE(e->kind == Node::Kind::kCast);
    CHECK(e->cast == cast);
    CHECK(UnaryOf(*e) == cast);
  }
}

TEST_CASE("Nodes carry their byte ranges") {
  NodePtr e = P("a + b * c");
  CHECK(e->begin == 0);
  CHECK(e->end == 9);
  CHECK(e->args[1]->begin == 4);
  CHECK(e->args[1]->end == 9);

  // The parentheses belong to the product, not to the sum inside them.
  e = P("(a + b) * c");
  CHECK(e->begin == 0);
  CHECK(e->end == 11);
  CHECK(e->args[0]->begin == 1);
  CHECK(e->args[0]->end == 6);

  e = P("  x.shape[1] ");
  CHECK(e->kind == Node::Kind::kShape);
  CHECK(e->name == "x");
  CHECK(e->value == 1);
  CHECK(e->begin == 2);
  CHECK(e->end == 12);

  e = P("-min(n, 2)");
  CHECK(e->begin == 0);
  CHECK(e->end == 10);
  CHECK(e->args[0]->kind == Node::Kind::kCall);
  CHECK(e->args[0]->op == Op::kMin);
  CHECK(e->args[0]->begin == 1);

  e = P("t.size");
  CHECK(e->kind == Node::Kind::kSize);
  CHECK(e->end == 6);
  e = P("t.rank");
  CHECK(e->kind == Node::Kind::kRank);
  CHECK(e->name == "t");
}

TEST_CASE("Parse errors say what is wrong and where") {
  struct Case {
    std::string text;
    int offset;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", 0, "expected an expression"},
      {"   ", 3, "expected an expression"},
      {"a +", 3, "expected an expression"},
      {"a + )", 4, "expected an expression"},
      {"*a", 0, "expected an expression"},
      {"a $ b", 2, "unexpected character '$'"},
      {"a \xC3\xA9", 2, "unexpected byte 0xC3"},
      {"a b", 2, "unexpected 'b' after the expression"},
      {"a )", 2, "unexpected ')' after the expression"},
      {"(x).size", 3, "unexpected '.' after the expression"},
      // The first problem in the text wins over a later bad character.
      {"a b $", 2, "unexpected 'b' after the expression"},
      {"(a + b", 6, "expected ')'"},
      {"(a b)", 3, "expected ')'"},
      {"x.shape[0", 9, "expected ']'"},
      {"x.shape 0", 8, "expected '[' after 'shape'"},
      {"x.shape[i]", 8, "expected a dimension index (a non-negative integer)"},
      {"x.shape[-1]", 8, "expected a dimension index (a non-negative integer)"},
      {"x.sizes", 2, "unknown member 'sizes' (expected size, shape or rank)"},
      {"x.", 2, "expected a member name after '.'"},
      {"9223372036854775808", 0, "integer literal is too large"},
      {"1 + 99999999999999999999", 4, "integer literal is too large"},
      {"x.shape[99999999999999999999]", 8, "integer literal is too large"},
      {"1.5", 0, "invalid number '1.5'; expressions are integer"},
      {"2x", 0, "invalid number '2x'"},
      {"min(a)", 5, "'min' takes 2 arguments"},
      {"max(a, b, c)", 8, "'max' takes 2 arguments"},
      {"ceil_div()", 9, "'ceil_div' takes 2 arguments"},
      {"min(a b)", 6, "expected ','"},
      {"min(a, b", 8, "expected ')'"},
      {"min + 1", 4, "expected '(' after 'min'"},
      {"0x", 0, "invalid number '0x'"},
      {"0xg1", 0, "invalid number '0xg1'"},
      {"0b12", 0, "invalid number '0b12'"},
      {"1uu", 0, "invalid number '1uu'"},
      {"1lL", 0, "invalid number '1lL'"},
      {"1lul", 0, "invalid number '1lul'"},
      {"1e5", 0, "invalid number '1e5'"},
      {"1.0f", 0, "invalid number '1.0f'; expressions are integer"},
      {"0x8000000000000000", 0, "integer literal is too large"},
      {"18446744073709551615ULL", 0, "integer literal is too large"},
      {"1 + 010", 4,
       "invalid number '010'; C reads a leading 0 as octal: write it without "
       "the 0s, or in hexadecimal"},
      {"08", 0,
       "invalid number '08'; C reads a leading 0 as octal: write it without "
       "the 0s, or in hexadecimal"},
      {"a < b", 2, "unexpected character '<'"},
      {"a > b", 2, "unexpected character '>'"},
      {"a && b", 3, "expected an expression"},
      {"a <<", 4, "expected an expression"},
      {"~", 1, "expected an expression"},
      {"a ~ b", 2, "unexpected '~' after the expression"},
      {"(int)", 5, "expected an expression"},
      {"(int n)", 5, "expected ')' after the type"},
      {"(int", 4, "expected ')' after the type"},
      {"(float)n", 1, "a cast to 'float': expressions are integer"},
      {"(unsigned double)n", 1,
       "a cast to 'unsigned double': expressions are integer"},
      {"(char)n", 1,
       "'char' may be signed or unsigned; write signed char or unsigned char"},
      {"(long long long)n", 1, "'long long long' is not an integer type"},
      {"(signed unsigned)n", 1, "'signed unsigned' is not an integer type"},
      {"(short long)n", 1, "'short long' is not an integer type"},
      {"(unsigned size_t)n", 1, "'unsigned size_t' is not an integer type"},
      {"(int int)n", 1, "'int int' is not an integer type"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const ParseError err = ParseErr(c.text);
    CHECK(err.message == c.message);
    CHECK(err.offset == c.offset);
  }
}

TEST_CASE("Deep nesting is an error, not a stack overflow") {
  const std::string too_deep =
      "expression is too deeply nested: kernelc allows 100 levels of "
      "operations";
  // Parentheses and signs nest the parser up to twice the depth limit.
  P(std::string(200, '(') + "a" + std::string(200, ')'));
  ParseError err =
      ParseErr(std::string(201, '(') + "a" + std::string(201, ')'));
  CHECK(err.message == too_deep);
  CHECK(err.offset == 200);
  err = ParseErr(std::string(1000, '-') + "a");
  CHECK(err.message == too_deep);
  CHECK(err.offset == 200);
  // Within the parser's nesting, the tree is too deep: the sign at offset
  // 50 is the one that makes it 101 levels.
  err = ParseErr(std::string(150, '-') + "a");
  CHECK(err.message == too_deep);
  CHECK(err.offset == 50);

  // A flat chain builds a tree as deep as it is long: a leaf is 1 deep,
  // and each operator adds a level.
  std::string chain = "a";
  for (int i = 0; i < 99; ++i) chain += "+a";
  P(chain);  // 99 operators: 100 deep
  chain += "+a";
  err = ParseErr(chain);  // the 100th '+' is at 2 * 100 - 1
  CHECK(err.message == too_deep);
  CHECK(err.offset == 199);

  // '~' and casts nest as '-' does; each is a level of the tree.
  err = ParseErr(std::string(1000, '~') + "a");
  CHECK(err.message == too_deep);
  CHECK(err.offset == 200);
  std::string casts;
  for (int i = 0; i < 99; ++i) casts += "(int)";
  P(casts + "a");  // 99 casts: 100 deep
  err = ParseErr("(int)" + casts + "a");
  CHECK(err.message == too_deep);
  CHECK(err.offset == 0);
  std::string shifts = "a";
  for (int i = 0; i < 100; ++i) shifts += "<<a";
  err = ParseErr(shifts);  // the 100th "<<" is at 3 * 100 - 2
  CHECK(err.message == too_deep);
  CHECK(err.offset == 298);
}

TEST_CASE("Texts longer than the limit are refused before parsing") {
  std::string text = "a";
  while (text.size() < static_cast<size_t>(kMaxLength)) text += " ";
  P(text);
  ParseError err = ParseErr(text + "b");
  CHECK(err.message == "expression is longer than 4096 bytes");
  CHECK(err.offset == 4096);
  err = ShapeErr(text + ", b");
  CHECK(err.message == "expression is longer than 4096 bytes");
}

// Whether two trees are the same (kinds, values, names, operations and
// operands; not where their text was).
bool SameTree(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.value != b.value || a.name != b.name ||
      a.op != b.op || a.cast != b.cast || a.args.size() != b.args.size())
    return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!SameTree(*a.args[i], *b.args[i])) return false;
  return true;
}

// A random tree `depth` deep, as the parser builds them: literals are not
// negative, and no name is a function's. One operand of each operation is
// as deep as the tree; the other is shallow, so that trees stay small.
NodePtr RandomTree(std::mt19937_64& rng, int depth) {
  auto n = std::make_shared<Node>();
  const char* names[] = {"n", "m", "x", "_", "k2", "abc_def", "shape", "size"};
  const int64_t ints[] = {0, 1, 2, 7, 1000, 9223372036854775807};
  std::uniform_int_distribution<int> pick(depth <= 1 ? 0 : 5,
                                          depth <= 1 ? 4 : 12);
  switch (pick(rng)) {
    case 0:
      n->kind = Node::Kind::kInt;
      n->value = ints[rng() % 6];
      break;
    case 1:
      n->kind = Node::Kind::kName;
      n->name = names[rng() % 8];
      break;
    case 2:
      n->kind = Node::Kind::kSize;
      n->name = names[rng() % 8];
      break;
    case 3:
      n->kind = Node::Kind::kRank;
      n->name = names[rng() % 8];
      break;
    case 4:
      n->kind = Node::Kind::kShape;
      n->name = names[rng() % 8];
      n->value = ints[rng() % 6];
      break;
    case 5:
    case 6:
      n->kind = Node::Kind::kNeg;
      n->args = {RandomTree(rng, depth - 1)};
      break;
    case 11:
      n->kind = Node::Kind::kNot;
      n->args = {RandomTree(rng, depth - 1)};
      break;
    case 12: {
      struct Type {
        const char* name;
        UnaryOp cast;
      };
      const Type types[] = {{"int", UnaryOp::kToInt32},
                            {"unsigned long long", UnaryOp::kToUint64},
                            {"size_t", UnaryOp::kToUint64},
                            {"signed char", UnaryOp::kToInt8}};
      const Type& t = types[rng() % 4];
      n->kind = Node::Kind::kCast;
      n->name = t.name;
      n->cast = t.cast;
      n->args = {RandomTree(rng, depth - 1)};
      break;
    }
    case 7:
    case 8:
    case 9: {
      n->kind = Node::Kind::kBinary;
      const Op ops[] = {Op::kAdd, Op::kSub, Op::kMul, Op::kFloorDiv,
                        Op::kFloorMod, Op::kShl, Op::kShr, Op::kAnd,
                        Op::kXor, Op::kOr};
      n->op = ops[rng() % 10];
      // One operand at full depth, so that deep trees are common.
      NodePtr deep = RandomTree(rng, depth - 1);
      NodePtr other = RandomTree(rng, 1 + static_cast<int>(rng() % 3) %
                                              depth);
      n->args = rng() % 2 ? std::vector<NodePtr>{deep, other}
                          : std::vector<NodePtr>{other, deep};
      break;
    }
    default: {
      n->kind = Node::Kind::kCall;
      const Op fns[] = {Op::kMin, Op::kMax, Op::kCeilDiv};
      n->op = fns[rng() % 3];
      n->args = {RandomTree(rng, depth - 1),
                 RandomTree(rng, 1 + static_cast<int>(rng() % 3) % depth)};
      break;
    }
  }
  return n;
}

int Height(const Node& n) {
  int h = 0;
  for (const NodePtr& a : n.args) h = std::max(h, Height(*a));
  return h + 1;
}

TEST_CASE("ToString's output parses back to the same tree") {
  // A property over random trees up to the depth limit: ToString writes
  // only what Parse reads, and its parentheses keep the tree's shape.
  std::mt19937_64 rng(20240611);
  int deepest = 0;
  for (int i = 0; i < 4000; ++i) {
    NodePtr tree = RandomTree(rng, 1 + static_cast<int>(rng() % kMaxDepth));
    if (Height(*tree) > kMaxDepth) continue;
    deepest = std::max(deepest, Height(*tree));
    const std::string text = ToString(tree);
    INFO(text);
    Parsed<NodePtr> back = Parse(text);
    if (const auto* err = std::get_if<ParseError>(&back)) {
      FAIL_CHECK(err->offset << ": " << err->message);
      continue;
    }
    CHECK(SameTree(*tree, *std::get<NodePtr>(back)));
    CHECK(ToString(std::get<NodePtr>(back)) == text);
  }
  CHECK(deepest == kMaxDepth);
}

TEST_CASE("Operations that always fail are found with their text") {
  struct Case {
    std::string text;
    std::string failing;  // the operation's text; empty for none
    kc::arith::Fault fault;
  };
  using kc::arith::Fault;
  const Case cases[] = {
      {"n / 0", "n / 0", Fault::kDivisionByZero},
      {"n % (2 - 2)", "n % (2 - 2)", Fault::kDivisionByZero},
      {"ceil_div(x.size, 0)", "ceil_div(x.size, 0)", Fault::kDivisionByZero},
      {"n + 9223372036854775807 * 2", "9223372036854775807 * 2",
       Fault::kOverflow},
      {"-(0 - 9223372036854775807 - 1)", "-(0 - 9223372036854775807 - 1)",
       Fault::kOverflow},
      {"min(n, 4 / 0) + 1 / 0", "4 / 0", Fault::kDivisionByZero},
      {"n << 64", "n << 64", Fault::kShiftCount},
      {"n >> -1", "n >> -1", Fault::kShiftCount},
      {"0 << 64", "0 << 64", Fault::kShiftCount},
      {"n + (1 << 63)", "1 << 63", Fault::kOverflow},
      {"n & (uint64_t)-1", "(uint64_t)-1", Fault::kOverflow},
      {"n << 63", "", Fault::kNone},  // n may be 0
      {"64 << n", "", Fault::kNone},
      {"(uint64_t)n", "", Fault::kNone},
      {"n / m", "", Fault::kNone},
      {"n * 9223372036854775807", "", Fault::kNone},  // n may be 0 or 1
      {"0 / n", "", Fault::kNone},
      {"9223372036854775807 + 0", "", Fault::kNone},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    std::optional<ConstantFault> f = FindConstantFault(P(c.text));
    if (c.failing.empty()) {
      CHECK_FALSE(f.has_value());
      continue;
    }
    REQUIRE(f.has_value());
    CHECK(c.text.substr(f->begin, f->end - f->begin) == c.failing);
    CHECK(f->fault == c.fault);
  }
}

TEST_CASE("Check reports misused names with their offsets") {
  struct Case {
    std::string text;
    int offset;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"q + 1", 0, "unknown name 'q'"},
      {"n + x", 4, "'x' is a tensor; use x.size, x.shape[i] or x.rank"},
      {"k * n.size", 4, "'n' is not a tensor"},
      {"k.shape[0]", 0, "'k' is not a tensor"},
      {"-a.rank", 1, "'a' is not a tensor"},
      {"1 + x.shape[2]", 4, "x.shape[2] is out of range: 'x' has rank 2"},
      {"1 + a", 4, "'a' is a float scalar; expressions are integer"},
      {"q.size", 0, "unknown name 'q'"},
      {"min(n, z) + q", 7, "unknown name 'z'"},  // the first in the text
  };
  const Scope scope = TestScope();
  for (const Case& c : cases) {
    INFO(c.text);
    const std::optional<ParseError> err = Check(P(c.text), scope);
    REQUIRE(err.has_value());
    CHECK(err->message == c.message);
    CHECK(err->offset == c.offset);
  }
  // An unknown rank allows any index.
  CHECK_FALSE(Check(P("y.shape[7] + x.shape[1] * x.rank - ceil_div(n, k) % "
                      "y.size"),
                    scope)
                  .has_value());
  // An empty scope knows no names.
  const std::optional<ParseError> err = Check(P("1 + n"), Scope{});
  REQUIRE(err.has_value());
  CHECK(err->message == "unknown name 'n'");
  CHECK(err->offset == 4);
}

TEST_CASE("NamesUsed lists names and tensors in first-use order") {
  CHECK(NamesUsed(P("n * x.shape[0] + k - n + x.size + ceil_div(y.rank, k)")) ==
        std::vector<std::string>{"n", "x", "k", "y"});
  CHECK(NamesUsed(P("1 + 2")).empty());
}

TEST_CASE("EmitCpp goes through the evaluator for every operation") {
  const Resolver r = TestResolver();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"5", "int64_t{5}"},
      {"n", "n"},
      {"a + b * c", "ev.Add(a, ev.Mul(b, c))"},
      {"a - b - c", "ev.Sub(ev.Sub(a, b), c)"},
      {"(a + b) * c", "ev.Mul(ev.Add(a, b), c)"},
      {"-a", "ev.Neg(a)"},
      {"-7 / 2", "ev.FloorDiv(ev.Neg(int64_t{7}), int64_t{2})"},
      {"a % 3", "ev.FloorMod(a, int64_t{3})"},
      {"ceil_div(x.size, 256)", "ev.CeilDiv(size(x), int64_t{256})"},
      {"min(x.shape[0], y.rank)", "ev.Min(dim(x, 0), rank(y))"},
      {"max(1, n)", "ev.Max(int64_t{1}, n)"},
      {"a << 2 >> b", "ev.Shr(ev.Shl(a, int64_t{2}), b)"},
      {"a & b | c ^ 1", "ev.Or(ev.And(a, b), ev.Xor(c, int64_t{1}))"},
      {"~a", "ev.Not(a)"},
      {"(unsigned)a + (size_t)b", "ev.Add(ev.ToUint32(a), ev.ToUint64(b))"},
      {"(signed char)(short)(int64_t)n",
       "ev.ToInt8(ev.ToInt16(ev.ToInt64(n)))"},
  };
  for (const auto& [text, cpp] : cases) {
    INFO(text);
    CHECK(EmitCpp(P(text), r, "ev") == cpp);
  }
  CHECK(EmitCpp(P("a / b"), r, "kc_ev") == "kc_ev.FloorDiv(a, b)");
  // Unset resolver functions fall back to the canonical text.
  CHECK(EmitCpp(P("x.shape[1] + n"), Resolver{}, "ev") ==
        "ev.Add(x.shape[1], n)");
  // INT64_MIN cannot be written as a C++ literal (nor parsed, but a caller
  // may build such a node).
  auto min = std::make_shared<Node>();
  min->kind = Node::Kind::kInt;
  min->value = std::numeric_limits<int64_t>::min();
  CHECK(EmitCpp(min, r, "ev") == "(-int64_t{9223372036854775807} - 1)");
}

TEST_CASE("EmitPython calls the support module's checked helpers") {
  const Resolver r = PythonResolver();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"5", "5"},
      {"n", "n"},
      {"a + b * c", "_kc.add(a, _kc.mul(b, c))"},
      {"a - b - c", "_kc.sub(_kc.sub(a, b), c)"},
      {"a / b * c", "_kc.mul(_kc.floor_div(a, b), c)"},
      {"-a", "_kc.neg(a)"},
      {"-7 % 2", "_kc.floor_mod(_kc.neg(7), 2)"},
      {"ceil_div(x.size + 1, 4)", "_kc.ceil_div(_kc.add(x.size, 1), 4)"},
      {"min(a, b)", "_kc.minimum(a, b)"},
      {"max(x.shape[0], y.rank)", "_kc.maximum(x.shape[0], y.ndim)"},
      {"a << 2 >> b", "_kc.shr(_kc.shl(a, 2), b)"},
      {"a & b | c ^ 1", "_kc.bit_or(_kc.bit_and(a, b), _kc.bit_xor(c, 1))"},
      {"~a", "_kc.bit_not(a)"},
      {"(unsigned)a + (uint8_t)b",
       "_kc.add(_kc.to_uint32(a), _kc.to_uint8(b))"},
      {"(long)(uint16_t)(int16_t)n",
       "_kc.to_int64(_kc.to_uint16(_kc.to_int16(n)))"},
  };
  for (const auto& [text, py] : cases) {
    INFO(text);
    CHECK(EmitPython(P(text), r, "_kc") == py);
  }
  auto min = std::make_shared<Node>();
  min->kind = Node::Kind::kInt;
  min->value = std::numeric_limits<int64_t>::min();
  CHECK(EmitPython(min, r, "m") == "-9223372036854775808");
}

TEST_CASE("Fold visits operands left to right, before their operation") {
  struct Trace {
    std::vector<std::string>& log;
    int Int(int64_t v) {
      log.push_back(std::to_string(v));
      return 0;
    }
    int Leaf(const Node& n) {
      log.push_back(n.name);
      return 0;
    }
    int Unary(UnaryOp op, int) {
      log.push_back("unary" + std::to_string(static_cast<int>(op)));
      return 0;
    }
    int Binary(Op op, int, int) {
      log.push_back("op" + std::to_string(static_cast<int>(op)));
      return 0;
    }
  };
  std::vector<std::string> log;
  Fold(*P("a * -b + min(c, 2)"), Trace{log});
  CHECK(log == std::vector<std::string>{"a", "b", "unary0", "op2", "c", "2",
                                        "op6", "op0"});
}

TEST_CASE("Fold stops at a value that Done marks final") {
  struct FirstLeaf {
    int leaves = 0;
    std::string Int(int64_t) { return ""; }
    std::string Leaf(const Node& n) {
      ++leaves;
      return n.name;
    }
    std::string Unary(UnaryOp, std::string a) { return a; }
    std::string Binary(Op, std::string a, std::string b) {
      return a.empty() ? b : a;
    }
    bool Done(const std::string& a) const { return !a.empty(); }
  };
  FirstLeaf f;
  CHECK(Fold(*P("1 + -(a * b) + c"), f) == "a");
  CHECK(f.leaves == 1);
}

TEST_CASE("Evaluate reports the first fault in evaluation order") {
  const LeafValues leaves = [](const Node& n) -> std::optional<int64_t> {
    if (n.kind == Node::Kind::kShape) return n.value * 10;
    if (n.name == "big") return std::numeric_limits<int64_t>::max();
    if (n.name == "zero") return 0;
    if (n.name == "seven") return 7;
    return std::nullopt;
  };
  using kc::arith::Fault;
  auto eval = [&](const std::string& text) {
    return Evaluate(P(text), leaves);
  };
  CHECK(eval("seven * x.shape[2] - 1").value == 139);
  CHECK(eval("big + 1").fault == Fault::kOverflow);
  CHECK(eval("seven / zero").fault == Fault::kDivisionByZero);
  // The left operand fails first; then the right one is not evaluated.
  CHECK(eval("(big + 1) / zero").fault == Fault::kOverflow);
  CHECK(eval("seven % zero + (big + 1)").fault == Fault::kDivisionByZero);
  // An unknown leaf makes the value unknown, but does not hide a fault.
  const Evaluation unknown = eval("n + seven");
  CHECK_FALSE(unknown.value.has_value());
  CHECK(unknown.fault == Fault::kNone);
  CHECK(eval("n + seven / zero").fault == Fault::kDivisionByZero);
  // min and max never fail, whatever their operands.
  CHECK(eval("min(big, -big - 1)").value ==
        std::numeric_limits<int64_t>::min());
}

TEST_CASE("FirstUse finds a name's first leaf") {
  CHECK(FirstUse(P("1 + x.size + n * x.shape[0]"), "x") == 4);
  CHECK(FirstUse(P("ceil_div(m, n) + n"), "n") == 12);
  CHECK(FirstUse(P("min(a, b)"), "min") == -1);
  CHECK(FirstUse(P("a + b"), "c") == -1);
}

TEST_CASE("ConstantValue folds with floor semantics") {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"42", 42},
      {"(1 + 2) * 3", 9},
      {"-7 / 2", -4},
      {"7 / -2", -4},
      {"-7 % 2", 1},
      {"7 % -2", -1},
      {"-8 / 2", -4},
      {"ceil_div(7, 2)", 4},
      {"ceil_div(-7, 2)", -3},
      {"ceil_div(8, 2)", 4},
      {"min(3, -4) + max(1, 2)", -2},
      {"-9223372036854775807 - 1", std::numeric_limits<int64_t>::min()},
      // The exact results, which fit, where C++'s operators are undefined.
      {"(-9223372036854775807 - 1) % -1", 0},
      {"ceil_div(-9223372036854775807 - 1, 2)", -4611686018427387904},
      // Shifts: exact products and floors; >> of a negative is arithmetic.
      {"1 << 62", int64_t{1} << 62},
      {"-1 << 63", std::numeric_limits<int64_t>::min()},
      {"-3 << 2", -12},
      {"-7 >> 1", -4},
      {"-1 >> 63", -1},
      {"(-9223372036854775807 - 1) >> 63", -1},
      {"9223372036854775807 >> 62", 1},
      {"(1 + (1 << 8) - 1) >> 8", 1},
      {"1000 >> 0 << 0", 1000},
      // Bits of two's complement int64.
      {"~0", -1},
      {"~-1", 0},
      {"1000 & ~3", 1000},
      {"1001 & ~3", 1000},
      {"-1 & 255", 255},
      {"6 ^ 3 | 8", 13},
      {"6 | 3 & 1", 7},
      {"-8 | 3", -5},
      // Casts convert as C does; the result is an int64.
      {"(unsigned)-1", 4294967295},
      {"(uint32_t)4294967296", 0},
      {"(int)4294967295", -1},
      {"(int)2147483648", -2147483648},
      {"(int32_t)-2147483649", 2147483647},
      {"(short)65535", -1},
      {"(unsigned short)-1", 65535},
      {"(signed char)200", -56},
      {"(unsigned char)-1", 255},
      {"(uint8_t)256", 0},
      {"(long long)-5", -5},
      {"(size_t)9223372036854775807", 9223372036854775807},
      {"(int)7 / 2", 3},
      {"(unsigned)-1 >> 31", 1},
  };
  for (const auto& [text, value] : cases) {
    INFO(text);
    const std::optional<int64_t> v = ConstantValue(P(text));
    REQUIRE(v.has_value());
    CHECK(*v == value);
  }
  // Names, division by zero and overflow: not a constant.
  for (const char* text : {"n + 1",
                           "x.size",
                           "1 / 0",
                           "1 % 0",
                           "ceil_div(1, 0)",
                           "9223372036854775807 + 1",
                           "3037000500 * 3037000500",
                           "(-9223372036854775807 - 1) / -1",
                           "-(-9223372036854775807 - 1)",
                           "ceil_div(-9223372036854775807 - 1, -1)",
                           "1 << 64",
                           "1 << -1",
                           "1 >> 64",
                           "0 >> 99",
                           "1 << 63",
                           "2 << 62",
                           "-2 << 63",
                           "4611686018427387904 << 1",
                           "(uint64_t)-1",
                           "(size_t)(0 - 1)",
                           "(unsigned long long)(-9223372036854775807 - 1)"}) {
    INFO(text);
    CHECK_FALSE(ConstantValue(P(text)).has_value());
  }
}

TEST_CASE("ParseShape") {
  std::vector<Dim> dims = Shape("n, m");
  REQUIRE(dims.size() == 2);
  CHECK_FALSE(dims[0].any);
  CHECK(ToString(dims[0].expr) == "n");
  CHECK(dims[0].begin == 0);
  CHECK(dims[0].end == 1);
  CHECK(ToString(dims[1].expr) == "m");
  CHECK(dims[1].begin == 3);
  CHECK(dims[1].end == 4);

  dims = Shape("_");
  REQUIRE(dims.size() == 1);
  CHECK(dims[0].any);
  CHECK(dims[0].expr == nullptr);
  CHECK(dims[0].begin == 0);
  CHECK(dims[0].end == 1);

  CHECK(Shape("").empty());
  CHECK(Shape(" \t ").empty());

  dims = Shape("x");
  REQUIRE(dims.size() == 1);
  REQUIRE(dims[0].expr->kind == Node::Kind::kName);
  CHECK(dims[0].expr->name == "x");

  dims = Shape("n * 2, _");
  REQUIRE(dims.size() == 2);
  CHECK(ToString(dims[0].expr) == "n * 2");
  CHECK(dims[0].begin == 0);
  CHECK(dims[0].end == 5);
  CHECK(dims[1].any);
  CHECK(dims[1].begin == 7);
  CHECK(dims[1].end == 8);

  // Commas inside a call do not separate dimensions; a dimension's range
  // covers its parentheses but not the spaces around it.
  dims = Shape(" ( n ) , min(a, b)");
  REQUIRE(dims.size() == 2);
  CHECK(dims[0].begin == 1);
  CHECK(dims[0].end == 6);
  CHECK(ToString(dims[1].expr) == "min(a, b)");

  // "_" inside an expression is a plain name (which Check then rejects).
  dims = Shape("_ + 1");
  REQUIRE(dims.size() == 1);
  CHECK_FALSE(dims[0].any);
  CHECK(ToString(dims[0].expr) == "_ + 1");
}

TEST_CASE("ParseShape errors") {
  struct Case {
    std::string text;
    int offset;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"n,", 2, "expected a dimension (an expression or '_')"},
      {",n", 0, "expected a dimension (an expression or '_')"},
      {"n,,m", 2, "expected a dimension (an expression or '_')"},
      {"n, ", 3, "expected a dimension (an expression or '_')"},
      {"n m", 2, "unexpected 'm' after the dimension"},
      {"n, $", 3, "unexpected character '$'"},
      {"n, _ $", 5, "unexpected character '$'"},
      {"n, 2 +", 6, "expected an expression"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const ParseError err = ShapeErr(c.text);
    CHECK(err.message == c.message);
    CHECK(err.offset == c.offset);
  }
}

}  // namespace
}  // namespace kernelc::expr
