#include "compiler/sema/sema.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/diag/diagnostic.h"
#include "compiler/expr/expr.h"
#include "compiler/model/model.h"
#include "compiler/util/status.h"

namespace kernelc::sema {
namespace {

using model::Access;
using model::DType;
using model::Kernel;
using model::KernelKind;
using model::Module;
using model::Param;
using model::Role;
using model::Text;

// Every test kernel lives in one file. Each parameter is declared on its own
// line: its annotation text (shape or derived expression) starts at column
// kTextCol, a KC_INIT value at kInitCol, and its name at kNameCol. The kernel
// name is on line 1; grid expressions are on line 2, kGridStride apart.
constexpr char kFile[] = "k.cu";
constexpr int kKernelLine = 1;
constexpr int kKernelCol = 17;
constexpr int kGridLine = 2;
constexpr int kTextCol = 10;
constexpr int kGridStride = 20;
constexpr int kInitCol = 60;
constexpr int kNameCol = 40;

diag::SourceLoc At(int line, int col) {
  return diag::SourceLoc{kFile, line, col};
}

Param Tensor(Role role, const std::string& name, const std::string& shape,
             int line, DType dtype = DType::kF32) {
  Param p;
  p.name = name;
  p.role = role;
  p.dtype = dtype;
  p.shape = Text{shape, At(line, kTextCol)};
  p.loc = At(line, kNameCol);
  return p;
}

Param In(const std::string& name, const std::string& shape, int line,
         DType dtype = DType::kF32) {
  return Tensor(Role::kIn, name, shape, line, dtype);
}

Param Out(const std::string& name, const std::string& shape, int line,
          DType dtype = DType::kF32) {
  return Tensor(Role::kOut, name, shape, line, dtype);
}

Param OutInit(const std::string& name, DType dtype, const std::string& init,
              int line) {
  Param p = Out(name, "n", line, dtype);
  p.init = Text{init, At(line, kInitCol)};
  return p;
}

// A kc::In / kc::Out view of the given rank, with KC_SHAPE(shape) when
// `shape` is not null.
Param View(Role role, const std::string& name, int rank, const char* shape,
           int line) {
  Param p = Tensor(role, name, shape ? shape : "", line);
  p.access = Access::kView;
  p.rank = rank;
  if (!shape) p.shape.reset();
  return p;
}

Param Scalar(const std::string& name, DType dtype, int line) {
  Param p;
  p.name = name;
  p.role = Role::kScalar;
  p.dtype = dtype;
  p.loc = At(line, kNameCol);
  return p;
}

Param Derived(const std::string& name, const std::string& expr, int line,
              DType dtype = DType::kI64) {
  Param p;
  p.name = name;
  p.role = Role::kDerived;
  p.dtype = dtype;
  p.derived = Text{expr, At(line, kTextCol)};
  p.loc = At(line, kNameCol);
  return p;
}

Kernel Global(const std::string& name, const std::vector<std::string>& grid,
              std::vector<Param> params, int line = kKernelLine) {
  Kernel k;
  k.name = name;
  k.kind = KernelKind::kGlobal;
  for (size_t g = 0; g < grid.size(); ++g) {
    k.grid.push_back(Text{
        grid[g], At(kGridLine, kTextCol + kGridStride * static_cast<int>(g))});
  }
  k.params = std::move(params);
  k.source = kFile;
  k.loc = At(line, kKernelCol);
  return k;
}

Kernel Host(const std::string& name, std::vector<Param> params) {
  Kernel k = Global(name, {}, std::move(params));
  k.kind = KernelKind::kHost;
  return k;
}

// Runs sema over a module of the given kernels and keeps the module alive
// for as long as the plan that points into it.
class Analysis {
 public:
  explicit Analysis(std::vector<Kernel> kernels) {
    module_.sources = {kFile};
    module_.kernels = std::move(kernels);
    result_.emplace(Analyze(module_, diags_));
  }
  explicit Analysis(Kernel kernel)
      : Analysis(std::vector<Kernel>{std::move(kernel)}) {}
  Analysis(const Analysis&) = delete;
  Analysis& operator=(const Analysis&) = delete;

  bool ok() const { return result_->ok(); }
  const Result<ModulePlan>& result() const { return *result_; }

  // The plan of kernel `i`; the analysis must have succeeded.
  const KernelPlan& plan(size_t i = 0) const {
    if (!ok()) FAIL("sema failed:\n" << Joined());
    REQUIRE(i < result_->value().kernels.size());
    return result_->value().kernels[i];
  }

  // Every diagnostic as "file:line:col: severity: message".
  std::vector<std::string> messages() const {
    std::vector<std::string> out;
    for (const diag::Diagnostic& d : diags_.diagnostics()) {
      std::string s = diag::Format(d, nullptr);
      if (!s.empty() && s.back() == '\n') s.pop_back();
      out.push_back(s);
    }
    return out;
  }

 private:
  std::string Joined() const {
    std::string s;
    for (const std::string& m : messages()) s += m + "\n";
    return s;
  }

  Module module_;
  diag::DiagnosticSink diags_;
  std::optional<Result<ModulePlan>> result_;
};

// The diagnostics of a kernel that sema must reject.
std::vector<std::string> Errors(Kernel kernel) {
  Analysis a(std::move(kernel));
  CHECK_FALSE(a.ok());
  if (!a.ok()) {
    CHECK(a.result().error().kind == ErrorKind::kUser);
    CHECK(a.result().error().message == "the kernel model has errors");
  }
  return a.messages();
}

using Strings = std::vector<std::string>;

std::string Str(const expr::NodePtr& e) {
  return e ? expr::ToString(e) : "<null>";
}

Strings Strs(const std::vector<expr::NodePtr>& es) {
  Strings out;
  for (const expr::NodePtr& e : es) out.push_back(Str(e));
  return out;
}

// A symbol as "name=param:dim", a check as "param:dim=text".
Strings SymbolStrs(const KernelPlan& p) {
  Strings out;
  for (const Symbol& s : p.symbols) {
    out.push_back(s.name + "=" + std::to_string(s.param) + ":" +
                  std::to_string(s.dim));
  }
  return out;
}

Strings CheckStrs(const KernelPlan& p) {
  Strings out;
  for (const DimCheck& c : p.checks) {
    out.push_back(std::to_string(c.param) + ":" + std::to_string(c.dim) + "=" +
                  c.text);
    CHECK(Str(c.expr) == c.text);
  }
  return out;
}

// Each parameter of a pairing kernel as "<kind> <index in the forward
// kernel>".
Strings Roles(const Pairing& pairing) {
  Strings out;
  for (const PairedParam& p : pairing.params) {
    const char* kind = "computed";
    if (p.kind == PairedParam::Kind::kStatic) kind = "static";
    if (p.kind == PairedParam::Kind::kValue) kind = "value";
    if (p.kind == PairedParam::Kind::kDerivative) kind = "derivative";
    out.push_back(std::string(kind) + " " + std::to_string(p.of));
  }
  return out;
}

// --- A clean kernel ----------------------------------------------------------

TEST_CASE("sema plans the saxpy kernel of the design") {
  Analysis a(
      Global("saxpy", {"out.size"},
             {In("x", "n", 10), In("y", "n", 11), Scalar("a", DType::kF32, 12),
              Derived("n", "x.size", 13), Out("out", "x", 14)}));
  const KernelPlan& p = a.plan();
  CHECK(a.messages().empty());
  CHECK(p.kernel->name == "saxpy");
  REQUIRE(p.params.size() == 5);
  CHECK(p.params[0].rank == 1);
  CHECK(p.params[1].rank == 1);
  CHECK(p.params[4].rank == 1);
  CHECK(p.params[0].any_dim == std::vector<bool>{false});
  // 'n' names the derived parameter: every use of it is a check.
  CHECK(p.symbols.empty());
  CHECK(CheckStrs(p) == Strings{"0:0=n", "1:0=n"});
  CHECK(p.derived_order == std::vector<int>{3});
  CHECK(Str(p.params[3].derived) == "x.size");
  // The output has the input's shape, read off the input.
  CHECK(Strs(p.params[4].out_dims) == Strings{"x.shape[0]"});
  CHECK(p.params[4].out_dim_texts == Strings{"x.shape[0]"});
  CHECK(Strs(p.grid) == Strings{"out.size"});
  CHECK(p.block == std::vector<int64_t>{256});
  CHECK_FALSE(p.params[4].init.has_value());

  CHECK(p.KindOf("x") == expr::NameKind::kTensor);
  CHECK(p.KindOf("out") == expr::NameKind::kTensor);
  CHECK(p.KindOf("a") == expr::NameKind::kFloatValue);
  CHECK(p.KindOf("n") == expr::NameKind::kIntValue);
  CHECK(p.KindOf("m") == expr::NameKind::kUnknown);
}

// --- Symbols and checks ------------------------------------------------------

TEST_CASE("symbols bind at their first plain use in an input shape") {
  Analysis a(Global("matmul", {"m", "n"},
                    {In("a", "m, k", 10), In("b", "k, n", 11),
                     In("c", "n, m", 12), Out("out", "m, n", 13)}));
  const KernelPlan& p = a.plan();
  CHECK(SymbolStrs(p) == Strings{"m=0:0", "k=0:1", "n=1:1"});
  // Later uses are checks, in declaration order.
  CHECK(CheckStrs(p) == Strings{"1:0=k", "2:0=n", "2:1=m"});
  CHECK(p.KindOf("k") == expr::NameKind::kSymbol);
  CHECK(Strs(p.params[3].out_dims) == Strings{"m", "n"});
  CHECK(p.params[3].out_dim_texts == Strings{"m", "n"});
  CHECK(p.params[3].rank == 2);
  CHECK(Strs(p.grid) == Strings{"m", "n"});
  CHECK(p.block == std::vector<int64_t>{16, 16});
}

TEST_CASE("outputs never bind symbols; in-place inputs do") {
  Analysis a(Global("k", {"n"},
                    {Out("out", "n", 10), Tensor(Role::kInMut, "acc", "n", 11),
                     In("x", "n", 12)}));
  const KernelPlan& p = a.plan();
  CHECK(SymbolStrs(p) == Strings{"n=1:0"});
  CHECK(CheckStrs(p) == Strings{"2:0=n"});
  // Outputs get dimension expressions, inputs get any_dim flags.
  CHECK(p.params[0].any_dim.empty());
  CHECK(Strs(p.params[0].out_dims) == Strings{"n"});
  CHECK(p.params[1].out_dims.empty());
}

TEST_CASE("literals, expressions and later-bound symbols become checks") {
  Analysis a(Global("k", {"n"},
                    {In("y", "n + 1, _", 10), In("x", "n, 3", 11),
                     In("z", "_, ceil_div(n, 2)", 12)}));
  const KernelPlan& p = a.plan();
  // 'n' in the expression of y does not bind it: x's plain use does.
  CHECK(SymbolStrs(p) == Strings{"n=1:0"});
  CHECK(CheckStrs(p) == Strings{"0:0=n + 1", "1:1=3", "2:1=ceil_div(n, 2)"});
  REQUIRE(p.checks.size() == 3);
  CHECK(expr::ConstantValue(p.checks[1].expr) == 3);
  CHECK(p.params[0].any_dim == std::vector<bool>{false, true});
  CHECK(p.params[1].any_dim == std::vector<bool>{false, false});
  CHECK(p.params[2].any_dim == std::vector<bool>{true, false});
}

TEST_CASE("a symbol repeated within one shape is checked against itself") {
  Analysis a(Global("k", {"n"}, {In("x", "n, n", 10)}));
  const KernelPlan& p = a.plan();
  CHECK(SymbolStrs(p) == Strings{"n=0:0"});
  CHECK(CheckStrs(p) == Strings{"0:1=n"});
}

TEST_CASE("a shape symbol named like a scalar or derived value is a check") {
  Analysis a(Global("k", {"x.size"},
                    {In("x", "k, d", 10), Scalar("k", DType::kI64, 11),
                     Derived("d", "x.shape[0] * 2", 12), Out("out", "k", 13)}));
  const KernelPlan& p = a.plan();
  CHECK(p.symbols.empty());
  CHECK(CheckStrs(p) == Strings{"0:0=k", "0:1=d"});
  CHECK(p.KindOf("k") == expr::NameKind::kIntValue);
  CHECK(p.KindOf("d") == expr::NameKind::kIntValue);
  // A scalar sizes an output.
  CHECK(Strs(p.params[3].out_dims) == Strings{"k"});
}

TEST_CASE("an input view without KC_SHAPE accepts any extents of its rank") {
  Analysis a(
      Global("k", {"x.size"},
             {View(Role::kIn, "x", 3, nullptr, 10), Out("out", "x", 11)}));
  const KernelPlan& p = a.plan();
  CHECK(p.params[0].rank == 3);
  CHECK(p.params[0].any_dim == std::vector<bool>{true, true, true});
  CHECK(p.symbols.empty());
  CHECK(p.checks.empty());
  CHECK(Strs(p.params[1].out_dims) ==
        Strings{"x.shape[0]", "x.shape[1]", "x.shape[2]"});
}

TEST_CASE("an empty shape is a scalar tensor of rank 0") {
  Analysis a(Global("k", {"1"}, {In("x", "", 10), Out("out", "", 11)}));
  const KernelPlan& p = a.plan();
  CHECK(p.params[0].rank == 0);
  CHECK(p.params[1].rank == 0);
  CHECK(p.params[1].out_dims.empty());
}

// --- Same-shape references ---------------------------------------------------

TEST_CASE("an input with the shape of another input checks every dimension") {
  Analysis a(Global("k", {"y.size"}, {In("x", "n, _", 10), In("y", "x", 11)}));
  const KernelPlan& p = a.plan();
  CHECK(p.params[1].rank == 2);
  CHECK(p.params[1].any_dim == std::vector<bool>{false, false});
  CHECK(SymbolStrs(p) == Strings{"n=0:0"});
  CHECK(CheckStrs(p) == Strings{"1:0=x.shape[0]", "1:1=x.shape[1]"});
  REQUIRE(p.checks.size() == 2);
  CHECK(p.checks[1].expr->kind == expr::Node::Kind::kShape);
  CHECK(p.checks[1].expr->name == "x");
  CHECK(p.checks[1].expr->value == 1);
}

TEST_CASE("an output with the shape of an input reads the input's dims") {
  Analysis a(
      Global("k", {"out.size"}, {In("x", "n, 4", 10), Out("out", "x", 11)}));
  const KernelPlan& p = a.plan();
  CHECK(p.params[1].rank == 2);
  CHECK(Strs(p.params[1].out_dims) == Strings{"x.shape[0]", "x.shape[1]"});
  CHECK(p.params[1].out_dim_texts == Strings{"x.shape[0]", "x.shape[1]"});
}

TEST_CASE("an output with the shape of another output copies its dims") {
  // o1 refers to o2, which is declared after it.
  Analysis a(Global("k", {"o1.size"},
                    {In("x", "n, m", 10), Out("o1", "o2", 11),
                     Out("o2", "n * 2, m", 12), Out("o3", "o1", 13)}));
  const KernelPlan& p = a.plan();
  CHECK(p.params[1].rank == 2);
  CHECK(Strs(p.params[1].out_dims) == Strings{"n * 2", "m"});
  CHECK(p.params[1].out_dim_texts == Strings{"n * 2", "m"});
  CHECK(Strs(p.params[3].out_dims) == Strings{"n * 2", "m"});
  CHECK(p.params[3].out_dim_texts == Strings{"n * 2", "m"});
}

TEST_CASE("an input with the shape of an output takes its dim expressions") {
  Analysis a(Global(
      "k", {"n"},
      {Scalar("n", DType::kI32, 10), Out("o", "n, 2", 11), In("x", "o", 12)}));
  const KernelPlan& p = a.plan();
  CHECK(p.params[2].rank == 2);
  CHECK(CheckStrs(p) == Strings{"2:0=n", "2:1=2"});
}

TEST_CASE("a shape that refers to itself is an error") {
  CHECK(Errors(Global("k", {"1"}, {In("x", "x", 10)})) ==
        Strings{"k.cu:10:10: error: the shape of 'x' refers to itself"});
  CHECK(Errors(Global("k", {"1"}, {In("a", "b", 10), Out("b", "a", 11)})) ==
        Strings{"k.cu:10:10: error: the shape of 'a' refers to itself "
                "through other tensors' shapes"});
}

TEST_CASE("a view's rank must match its shape's dimension count") {
  CHECK(Errors(Global("k", {"1"}, {View(Role::kIn, "x", 2, "n", 10)})) ==
        Strings{"k.cu:10:10: error: the shape of 'x' has 1 dimension but its "
                "type has rank 2"});
  CHECK(Errors(Global("k", {"1"}, {View(Role::kOut, "o", 1, "2, 3", 10)})) ==
        Strings{"k.cu:10:10: error: the shape of 'o' has 2 dimensions but its "
                "type has rank 1"});
  // Through a same-shape reference.
  CHECK(Errors(
            Global("k", {"1"},
                   {In("x", "n, m", 10), View(Role::kOut, "o", 3, "x", 11)})) ==
        Strings{"k.cu:11:10: error: the shape of 'o' has 2 dimensions but its "
                "type has rank 3"});
}

TEST_CASE("a view whose shape matches its rank resolves") {
  Analysis a(Global("k", {"o.size"},
                    {View(Role::kIn, "x", 2, "n, m", 10),
                     View(Role::kOut, "o", 2, "x", 11)}));
  const KernelPlan& p = a.plan();
  CHECK(p.params[0].rank == 2);
  CHECK(p.params[1].rank == 2);
  CHECK(SymbolStrs(p) == Strings{"n=0:0", "m=0:1"});
}

// --- Derived values ----------------------------------------------------------

TEST_CASE("derived values are evaluated after the values they use") {
  Analysis a(Global("k", {"a"},
                    {In("x", "_, _", 10), Derived("d", "x.size", 11),
                     Derived("a", "b * 2", 12), Derived("b", "c + 1", 13),
                     Derived("c", "x.shape[1]", 14)}));
  const KernelPlan& p = a.plan();
  CHECK(p.derived_order == std::vector<int>{1, 4, 3, 2});
  CHECK(Str(p.params[2].derived) == "b * 2");
  CHECK(Str(p.params[3].derived) == "c + 1");
  CHECK(Str(p.params[4].derived) == "x.shape[1]");
}

TEST_CASE("derived values may use symbols and integer scalars") {
  Analysis a(Global("k", {"t"},
                    {In("x", "n, m", 10), Scalar("s", DType::kI32, 11),
                     Derived("t", "n * m + s", 12, DType::kI32)}));
  const KernelPlan& p = a.plan();
  CHECK(p.derived_order == std::vector<int>{2});
  CHECK(Str(p.params[2].derived) == "n * m + s");
}

TEST_CASE("a cycle among derived values is an error") {
  CHECK(Errors(Global("k", {"1"},
                      {In("x", "n", 10), Derived("a", "b + 1", 11),
                       Derived("b", "a * 2", 12)})) ==
        Strings{"k.cu:11:10: error: derived value 'a' depends on itself"});
  CHECK(Errors(Global("k", {"1"},
                      {In("x", "n", 10), Derived("a", "x.size + a", 11)})) ==
        Strings{"k.cu:11:10: error: derived value 'a' depends on itself"});
}

TEST_CASE("derived parameters need an integer type and an expression") {
  CHECK(Errors(Global(
            "k", {"1"},
            {In("x", "n", 10), Derived("d", "x.size", 11, DType::kF32)})) ==
        Strings{"k.cu:11:40: error: derived parameter 'd' must have an integer "
                "type, not float32"});
  Param no_expr = Derived("d", "", 11);
  no_expr.derived.reset();
  CHECK(Errors(Global("k", {"1"}, {In("x", "n", 10), no_expr})) ==
        Strings{"k.cu:11:40: error: derived parameter 'd' has no expression"});
}

TEST_CASE("a derived expression that does not parse points at the error") {
  CHECK(Errors(Global("k", {"1"},
                      {In("x", "n", 10), Derived("d", "x.size + ", 11)})) ==
        Strings{"k.cu:11:19: error: in derived value 'd': expected an "
                "expression"});
}

// --- Names in expressions ----------------------------------------------------

TEST_CASE("an out-of-range shape index is an error at the index expression") {
  CHECK(
      Errors(Global("k", {"1"},
                    {In("x", "n", 10), Derived("d", "n + x.shape[1]", 11)})) ==
      Strings{"k.cu:11:14: error: in derived value 'd': x.shape[1] is out of "
              "range: 'x' has rank 1"});
  CHECK(Errors(Global("k", {"n", "x.shape[2]"}, {In("x", "n, m", 10)})) ==
        Strings{"k.cu:2:30: error: in the grid of 'k': x.shape[2] is out of "
                "range: 'x' has rank 2"});
}

TEST_CASE("a float scalar cannot be used in an expression") {
  CHECK(Errors(Global("k", {"x.size * a"},
                      {In("x", "n", 10), Scalar("a", DType::kF32, 11)})) ==
        Strings{"k.cu:2:19: error: in the grid of 'k': 'a' is a float scalar; "
                "expressions are integer"});
  // As a shape symbol named like the scalar.
  CHECK(Errors(Global("k", {"1"},
                      {In("x", "a", 10), Scalar("a", DType::kF64, 11)})) ==
        Strings{"k.cu:10:10: error: in the shape of 'x': 'a' is a float "
                "scalar; expressions are integer"});
}

TEST_CASE("a tensor cannot be used as a value") {
  CHECK(Errors(Global("k", {"x"}, {In("x", "n", 10)})) ==
        Strings{"k.cu:2:10: error: in the grid of 'k': 'x' is a tensor; use "
                "x.size, x.shape[i] or x.rank"});
  CHECK(Errors(Global("k", {"1"},
                      {In("x", "n", 10), Derived("d", "1 + x", 11)})) ==
        Strings{"k.cu:11:14: error: in derived value 'd': 'x' is a tensor; use "
                "x.size, x.shape[i] or x.rank"});
  CHECK(Errors(Global("k", {"1"}, {In("x", "n", 10), In("y", "x * 2", 11)})) ==
        Strings{"k.cu:11:10: error: in the shape of 'y': 'x' is a tensor; use "
                "x.size, x.shape[i] or x.rank"});
}

TEST_CASE("a value cannot be used as a tensor") {
  CHECK(Errors(Global("k", {"s.size"},
                      {In("x", "n", 10), Scalar("s", DType::kI32, 11)})) ==
        Strings{"k.cu:2:10: error: in the grid of 'k': 's' is not a tensor"});
  CHECK(Errors(Global("k", {"n.rank"}, {In("x", "n", 10)})) ==
        Strings{"k.cu:2:10: error: in the grid of 'k': 'n' is not a tensor"});
}

TEST_CASE("an unknown name is an error that says nothing binds it") {
  CHECK(Errors(Global("k", {"n + q"}, {In("x", "n", 10)})) ==
        Strings{"k.cu:2:14: error: in the grid of 'k': unknown name 'q': not a "
                "parameter, and no input shape binds it"});
  CHECK(Errors(Global("k", {"1"}, {In("x", "q * 2", 10)})) ==
        Strings{"k.cu:10:10: error: in the shape of 'x': unknown name 'q': not "
                "a parameter, and no input shape binds it"});
}

TEST_CASE("outputs cannot be read where only inputs exist") {
  CHECK(Errors(Global("k", {"1"},
                      {In("x", "n", 10), Out("o", "x", 11),
                       Derived("d", "o.size", 12)})) ==
        Strings{"k.cu:12:10: error: in derived value 'd': 'o' is an output; "
                "only inputs, symbols and scalars can be used here"});
  CHECK(Errors(Global("k", {"1"},
                      {In("x", "n", 10), Out("o", "x", 11),
                       Out("p", "o.shape[0]", 12)})) ==
        Strings{"k.cu:12:10: error: in the shape of output 'p': 'o' is an "
                "output; only inputs, symbols and scalars can be used here"});
  // The grid runs in the handler, where outputs exist.
  Analysis a(Global("k", {"o.size"}, {In("x", "n", 10), Out("o", "x", 11)}));
  CHECK(a.ok());
}

TEST_CASE("an error about an output points at the output's name") {
  // CheckExpr reports the use of an output at the start of the expression,
  // not at the output's name inside it.
  CHECK(Errors(Global("k", {"1"},
                      {In("x", "n", 10), Out("o", "x", 11),
                       Derived("d", "x.size + o.size", 12)})) ==
        Strings{"k.cu:12:19: error: in derived value 'd': 'o' is an output; "
                "only inputs, symbols and scalars can be used here"});
}

// --- Output shapes -----------------------------------------------------------

TEST_CASE("an output's shape cannot contain '_'") {
  CHECK(Errors(Global("k", {"1"}, {In("x", "n", 10), Out("o", "n, _", 11)})) ==
        Strings{"k.cu:11:13: error: the shape of output 'o' cannot contain "
                "'_': its dimensions must be computable from inputs and "
                "scalars"});
}

TEST_CASE("an output's shape cannot use an unbound symbol") {
  CHECK(Errors(Global("k", {"1"}, {In("x", "n", 10), Out("o", "m", 11)})) ==
        Strings{"k.cu:11:10: error: in the shape of output 'o': unknown name "
                "'m': not a parameter, and no input shape binds it"});
  // Every bad dimension is reported.
  CHECK(Errors(
            Global("k", {"1"},
                   {In("x", "n", 10), Out("o", "m", 11), Out("p", "_", 12)})) ==
        Strings{"k.cu:11:10: error: in the shape of output 'o': unknown name "
                "'m': not a parameter, and no input shape binds it",
                "k.cu:12:10: error: the shape of output 'p' cannot contain "
                "'_': its dimensions must be computable from inputs and "
                "scalars"});
}

TEST_CASE("an error in a later dimension points at the offending byte") {
  // Expression nodes carry offsets into the whole shape text, but the
  // location they are added to is already shifted to the dimension's start,
  // so the column is off by the dimension's offset.
  CHECK(Errors(Global("k", {"1"}, {In("x", "n", 10), Out("o", "n, m", 11)})) ==
        Strings{"k.cu:11:13: error: in the shape of output 'o': unknown name "
                "'m': not a parameter, and no input shape binds it"});
  CHECK(Errors(Global("k", {"1"}, {In("x", "n, 2 * q", 10)})) ==
        Strings{"k.cu:10:17: error: in the shape of 'x': unknown name 'q': not "
                "a parameter, and no input shape binds it"});
}

TEST_CASE("a shape that does not parse points at the error") {
  CHECK(Errors(Global("k", {"1"}, {In("x", "n, m +", 10)})) ==
        Strings{"k.cu:10:16: error: in the shape of 'x': expected an "
                "expression"});
  CHECK(Errors(Global("k", {"1"}, {In("x", "n, 1.5", 10)})) ==
        Strings{"k.cu:10:13: error: in the shape of 'x': invalid number '1.5'; "
                "expressions are integer"});
}

// --- KC_INIT -----------------------------------------------------------------

// The init value sema plans for one output of `dtype` filled with `text`.
std::optional<InitValue> PlannedInit(DType dtype, const std::string& text) {
  Analysis a(
      Global("k", {"n"}, {In("x", "n", 10), OutInit("o", dtype, text, 11)}));
  const KernelPlan& p = a.plan();
  return p.params[1].init;
}

TEST_CASE("KC_INIT values are parsed by the output's type") {
  SECTION("zero") {
    auto v = PlannedInit(DType::kF32, "0");
    REQUIRE(v);
    CHECK(v->is_integer);
    CHECK(v->integer == 0);
    CHECK(v->real == 0.0);
    CHECK_FALSE(v->is_unsigned_large);
    CHECK(v->text == "0");
  }
  SECTION("a negative integer") {
    auto v = PlannedInit(DType::kI32, "-1");
    REQUIRE(v);
    CHECK(v->is_integer);
    CHECK(v->integer == -1);
    CHECK(v->real == -1.0);
    CHECK(v->text == "-1");
  }
  SECTION("a float") {
    auto v = PlannedInit(DType::kF32, "1.5");
    REQUIRE(v);
    CHECK_FALSE(v->is_integer);
    CHECK(v->real == 1.5);
    CHECK(v->text == "1.5");
  }
  SECTION("infinity") {
    auto v = PlannedInit(DType::kBF16, "inf");
    REQUIRE(v);
    CHECK_FALSE(v->is_integer);
    CHECK(std::isinf(v->real));
    CHECK(v->real > 0);
  }
  SECTION("negative infinity") {
    auto v = PlannedInit(DType::kF16, "-inf");
    REQUIRE(v);
    CHECK_FALSE(v->is_integer);
    CHECK(std::isinf(v->real));
    CHECK(v->real < 0);
  }
  SECTION("not a number") {
    auto v = PlannedInit(DType::kF64, "nan");
    REQUIRE(v);
    CHECK_FALSE(v->is_integer);
    CHECK(std::isnan(v->real));
  }
  SECTION("the largest uint64") {
    auto v = PlannedInit(DType::kU64, "18446744073709551615");
    REQUIRE(v);
    CHECK(v->is_integer);
    CHECK(v->is_unsigned_large);
    CHECK(v->unsigned_integer == std::numeric_limits<uint64_t>::max());
    CHECK(v->text == "18446744073709551615");
  }
  SECTION("the smallest int64") {
    auto v = PlannedInit(DType::kI64, "-9223372036854775808");
    REQUIRE(v);
    CHECK(v->is_integer);
    CHECK_FALSE(v->is_unsigned_large);
    CHECK(v->integer == std::numeric_limits<int64_t>::min());
  }
  SECTION("the ends of the small integer types") {
    auto v = PlannedInit(DType::kI8, "-128");
    REQUIRE(v);
    CHECK(v->integer == -128);
    v = PlannedInit(DType::kU8, "255");
    REQUIRE(v);
    CHECK(v->integer == 255);
    v = PlannedInit(DType::kU32, "4294967295");
    REQUIRE(v);
    CHECK(v->integer == 4294967295);
  }
  SECTION("bool") {
    auto v = PlannedInit(DType::kBool, "1");
    REQUIRE(v);
    CHECK(v->is_integer);
    CHECK(v->integer == 1);
  }
}

TEST_CASE("an output without KC_INIT has no init value") {
  Analysis a(Global("k", {"n"}, {In("x", "n", 10), Out("o", "n", 11)}));
  CHECK_FALSE(a.plan().params[1].init.has_value());
}

// The diagnostics for an output of `dtype` filled with `text`.
Strings InitErrors(DType dtype, const std::string& text) {
  return Errors(
      Global("k", {"n"}, {In("x", "n", 10), OutInit("o", dtype, text, 11)}));
}

TEST_CASE("KC_INIT values must fit the output's type") {
  CHECK(InitErrors(DType::kU8, "-1") ==
        Strings{"k.cu:11:60: error: KC_INIT value -1 does not fit output 'o' "
                "of type uint8"});
  CHECK(InitErrors(DType::kI32, "1.5") ==
        Strings{"k.cu:11:60: error: KC_INIT value 1.5 does not fit output 'o' "
                "of type int32"});
  CHECK(InitErrors(DType::kBool, "2") ==
        Strings{"k.cu:11:60: error: KC_INIT value 2 does not fit output 'o' "
                "of type bool"});
  CHECK(InitErrors(DType::kI8, "128") ==
        Strings{"k.cu:11:60: error: KC_INIT value 128 does not fit output 'o' "
                "of type int8"});
  CHECK(InitErrors(DType::kI32, "2147483648") ==
        Strings{"k.cu:11:60: error: KC_INIT value 2147483648 does not fit "
                "output 'o' of type int32"});
  CHECK(InitErrors(DType::kI64, "9223372036854775808") ==
        Strings{"k.cu:11:60: error: KC_INIT value 9223372036854775808 does not "
                "fit output 'o' of type int64"});
  CHECK(InitErrors(DType::kU64, "18446744073709551616") ==
        Strings{"k.cu:11:60: error: KC_INIT value 18446744073709551616 does "
                "not fit output 'o' of type uint64"});
  CHECK(InitErrors(DType::kI16, "inf") ==
        Strings{"k.cu:11:60: error: KC_INIT value inf does not fit output 'o' "
                "of type int16"});
}

TEST_CASE("KC_INIT values must be numbers") {
  CHECK(InitErrors(DType::kF32, "one") ==
        Strings{"k.cu:11:60: error: KC_INIT value 'one' of 'o' is not a "
                "number"});
  CHECK(InitErrors(DType::kI32, "") ==
        Strings{"k.cu:11:60: error: KC_INIT value '' of 'o' is not a number"});
  CHECK(InitErrors(DType::kF32, "1.5x") ==
        Strings{"k.cu:11:60: error: KC_INIT value '1.5x' of 'o' is not a "
                "number"});
}

TEST_CASE("KC_INIT applies only to outputs") {
  Param x = In("x", "n", 10);
  x.init = Text{"0", At(10, kInitCol)};
  CHECK(Errors(Global("k", {"n"}, {x})) ==
        Strings{"k.cu:10:60: error: KC_INIT applies to outputs; 'x' is not "
                "one"});
}

// --- Parameters and kernels --------------------------------------------------

TEST_CASE("a parameter declared twice is an error") {
  CHECK(Errors(Global("k", {"n"}, {In("x", "n", 10), In("x", "n", 11)})) ==
        Strings{"k.cu:11:40: error: parameter 'x' of kernel 'k' is declared "
                "twice"});
}

TEST_CASE("a kernel defined twice is an error with a note") {
  Analysis a({Global("k", {"n"}, {In("x", "n", 10)}),
              Global("other", {"n"}, {In("x", "n", 20)}, 19),
              Global("k", {"n"}, {In("x", "n", 30)}, 29)});
  CHECK_FALSE(a.ok());
  CHECK(a.messages() ==
        Strings{"k.cu:29:17: error: kernel 'k' is defined twice",
                "k.cu:1:17: note: first defined here"});
}

TEST_CASE("kernel and parameter names must be identifiers") {
  CHECK(Errors(Global("my-kernel", {"1"}, {})) ==
        Strings{"k.cu:1:17: error: kernel name 'my-kernel' is not an "
                "identifier"});
  CHECK(Errors(Global("k", {"1"}, {In("1x", "n", 10)})) ==
        Strings{"k.cu:10:40: error: parameter name '1x' of kernel 'k' is not "
                "an identifier"});
}

TEST_CASE("pointer tensors and outputs need a shape") {
  Param x = In("x", "", 10);
  x.shape.reset();
  CHECK(Errors(Global("k", {"1"}, {x})) ==
        Strings{"k.cu:10:40: error: tensor parameter 'x' of kernel 'k' needs "
                "a shape"});
  CHECK(Errors(Global("k", {"1"}, {View(Role::kOut, "o", 1, nullptr, 10)})) ==
        Strings{"k.cu:10:40: error: tensor parameter 'o' of kernel 'k' needs "
                "a shape"});
}

TEST_CASE("a view of unknown rank without KC_SHAPE is diagnosed") {
  // A JSON spec may leave out a view's rank (-1). With no shape either,
  // sema sizes the view's dimension list by that rank and throws
  // std::length_error instead of reporting the missing rank.
  Param x = View(Role::kIn, "x", -1, nullptr, 10);
  Strings messages;
  CHECK_NOTHROW(messages = Errors(Global("k", {"1"}, {x})));
  REQUIRE(messages.size() == 1);
  CHECK(messages[0].rfind("k.cu:10:40: error: ", 0) == 0);
}

TEST_CASE("16-bit float scalars are rejected") {
  CHECK(Errors(Global("k", {"1"}, {Scalar("h", DType::kF16, 10)})) ==
        Strings{"k.cu:10:40: error: scalar 'h' has type float16: XLA "
                "attributes cannot carry 16-bit floats; use float"});
}

// --- Grid and block ----------------------------------------------------------

TEST_CASE("a __global__ kernel needs 1 to 3 grid expressions") {
  CHECK(Errors(Global("k", {}, {In("x", "n", 10)})) ==
        Strings{"k.cu:1:17: error: __global__ kernel 'k' needs a grid of 1 to "
                "3 expressions, has 0"});
  CHECK(Errors(Global("k", {"n", "n", "n", "n"}, {In("x", "n", 10)})) ==
        Strings{"k.cu:1:17: error: __global__ kernel 'k' needs a grid of 1 to "
                "3 expressions, has 4"});
}

TEST_CASE("the grid is analysed per expression") {
  Analysis a(
      Global("k", {"ceil_div(n, 4)", "m", "x.rank"}, {In("x", "n, m", 10)}));
  CHECK(Strs(a.plan().grid) == Strings{"ceil_div(n, 4)", "m", "x.rank"});
  CHECK(Errors(Global("k", {"n", "m +"}, {In("x", "n, m", 10)})) ==
        Strings{"k.cu:2:33: error: in the grid of 'k': expected an "
                "expression"});
}

TEST_CASE("the default block follows the grid's rank") {
  CHECK(Analysis(Global("k", {"n"}, {In("x", "n", 10)})).plan().block ==
        std::vector<int64_t>{256});
  CHECK(Analysis(Global("k", {"n", "n"}, {In("x", "n", 10)})).plan().block ==
        std::vector<int64_t>{16, 16});
  CHECK(
      Analysis(Global("k", {"n", "n", "n"}, {In("x", "n", 10)})).plan().block ==
      std::vector<int64_t>{8, 8, 4});
}

TEST_CASE("an explicit block is kept") {
  Kernel k = Global("k", {"n", "n"}, {In("x", "n", 10)});
  k.block = {32, 32};
  CHECK(Analysis(k).plan().block == std::vector<int64_t>{32, 32});
}

TEST_CASE("the block must match the grid's rank") {
  Kernel k = Global("k", {"n"}, {In("x", "n", 10)});
  k.block = {16, 16};
  CHECK(Errors(k) == Strings{"k.cu:1:17: error: kernel 'k' has a "
                             "1-dimensional grid but a 2-dimensional block"});
}

TEST_CASE("the block must have 1 to 1024 positive threads") {
  Kernel k = Global("k", {"n", "n"}, {In("x", "n", 10)});
  const Strings error{
      "k.cu:1:17: error: kernel 'k': block dimensions must be "
      "positive with at most 1024 threads in all"};
  k.block = {64, 32};
  CHECK(Errors(k) == error);
  k.block = {0, 32};
  CHECK(Errors(k) == error);
  k.block = {-4, 4};
  CHECK(Errors(k) == error);
}

TEST_CASE("a huge block is rejected without overflowing") {
  // The thread count is a running int64 product: 2^32 * 2^32 overflows
  // (undefined behaviour; in practice it wraps to 0) and passes the check.
  Kernel k = Global("k", {"n", "n"}, {In("x", "n", 10)});
  k.block = {int64_t{1} << 32, int64_t{1} << 32};
  CHECK(Errors(k) ==
        Strings{"k.cu:1:17: error: kernel 'k': block dimensions must be "
                "positive with at most 1024 threads in all"});
}

TEST_CASE("a host kernel takes no grid or block") {
  Analysis a(Host("h", {In("x", "n", 10), Out("o", "x", 11)}));
  const KernelPlan& p = a.plan();
  CHECK(p.grid.empty());
  CHECK(p.block.empty());
  CHECK(SymbolStrs(p) == Strings{"n=0:0"});

  const Strings error{
      "k.cu:1:17: error: host kernel 'h' runs once per call "
      "and takes no grid or block"};
  Kernel with_grid = Host("h", {In("x", "n", 10)});
  with_grid.grid = {Text{"n", At(kGridLine, kTextCol)}};
  CHECK(Errors(with_grid) == error);
  Kernel with_block = Host("h", {In("x", "n", 10)});
  with_block.block = {128};
  CHECK(Errors(with_block) == error);
}

TEST_CASE("every kernel of a module is planned, in order") {
  Analysis a({Global("a", {"n"}, {In("x", "n", 10)}),
              Host("b", {In("y", "m, _", 20)})});
  REQUIRE(a.ok());
  REQUIRE(a.result().value().kernels.size() == 2);
  CHECK(a.plan(0).kernel->name == "a");
  CHECK(a.plan(1).kernel->name == "b");
  CHECK(SymbolStrs(a.plan(1)) == Strings{"m=0:0"});
  CHECK(a.plan(1).params[0].any_dim == std::vector<bool>{false, true});
}

TEST_CASE("errors in several kernels are all reported") {
  Analysis a({Global("a", {"q"}, {In("x", "n", 10)}),
              Global("b", {"1"}, {In("y", "n", 20), Out("o", "_", 21)})});
  CHECK_FALSE(a.ok());
  CHECK(a.messages() ==
        Strings{"k.cu:2:10: error: in the grid of 'a': unknown name 'q': not a "
                "parameter, and no input shape binds it",
                "k.cu:21:10: error: the shape of output 'o' cannot contain "
                "'_': its dimensions must be computable from inputs and "
                "scalars"});
}

}  // namespace
}  // namespace kernelc::sema

namespace kernelc::sema {
namespace {

// KC_VJP: the text "bwd" of the forward kernel starts at line 3, kTextCol.
Kernel Forward(std::vector<Param> params, const std::string& vjp = "bwd") {
  Kernel k = Global("fwd", {"n"}, std::move(params));
  k.vjp = Text{vjp, At(3, kTextCol)};
  return k;
}

Kernel Backward(std::vector<Param> params) {
  return Global("bwd", {"n"}, std::move(params), 20);
}

TEST_CASE("sema: a well-paired backward kernel") {
  Analysis a({Forward({In("x", "n", 4), In("i", "n", 5, DType::kI32),
                       Scalar("a", DType::kF32, 6), Out("y", "n", 7),
                       Out("c", "n", 8, DType::kI32)}),
              Backward({In("x", "n", 21), In("y", "n", 22),
                        In("i", "n", 23, DType::kI32), In("d_y", "n", 24),
                        Scalar("a", DType::kF32, 25),
                        Derived("m", "x.size", 26), Out("d_x", "n", 27)})});
  REQUIRE(a.ok());
  REQUIRE(a.plan(0).pairing.has_value());
  const Pairing& pairing = *a.plan(0).pairing;
  CHECK(pairing.mode == Pairing::Mode::kVjp);
  CHECK(pairing.kernel == &a.result().value().module->kernels[1]);
  // x, y (an output: a residual), i, d_y, a, m, d_x.
  CHECK(Roles(pairing) == Strings{"value 0", "value 3", "value 1",
                                  "derivative 3", "static 2", "computed -1",
                                  "derivative 0"});
  CHECK_FALSE(a.plan(1).pairing.has_value());
}

TEST_CASE("sema: KC_VJP names a kernel that exists and is another") {
  Analysis a(Forward({In("x", "n", 4), Out("y", "n", 5)}, "nope"));
  CHECK(a.messages() ==
        Strings{"k.cu:3:10: error: KC_VJP of kernel 'fwd' names 'nope', which "
                "is not a kernel in these sources"});
  Analysis self(Forward({In("x", "n", 4), Out("y", "n", 5)}, "fwd"));
  CHECK(self.messages() ==
        Strings{"k.cu:3:10: error: KC_VJP of kernel 'fwd' names the kernel "
                "itself; name its backward kernel"});
}

TEST_CASE("sema: VJP pairing errors name the parameter") {
  Analysis a(
      {Forward({In("x", "n", 4), In("i", "n", 5, DType::kI32),
                Scalar("a", DType::kF32, 6), Out("y", "n", 7),
                Out("c", "n", 8, DType::kI32),
                Tensor(Role::kInMut, "u", "n", 9, DType::kF32)}),
       Backward({In("x", "n", 21, DType::kF64), In("y", "n, n", 22),
                 In("d_c", "n", 23), In("zz", "n", 24),
                 Scalar("a", DType::kF64, 25), Scalar("b", DType::kF32, 26),
                 Tensor(Role::kInMut, "w", "n", 27), Out("d_i", "n", 28),
                 Out("g", "n", 29), Out("d_x", "n", 30, DType::kF16)})});
  CHECK(a.messages() ==
        Strings{
            "k.cu:9:40: error: kernel 'fwd' has KC_VJP and in-place parameter "
            "'u'; a differentiable kernel takes inputs and returns outputs",
            "k.cu:21:40: error: parameter 'x' of backward kernel 'bwd' is the "
            "residual 'x' of kernel 'fwd' and must be float32, not float64",
            "k.cu:22:40: error: parameter 'y' of backward kernel 'bwd' is the "
            "residual 'y' of kernel 'fwd' and must have rank 1, not 2",
            "k.cu:23:40: error: parameter 'd_c' of backward kernel 'bwd' would "
            "be the cotangent of int32 output 'c' of kernel 'fwd', which has "
            "none",
            "k.cu:24:40: error: parameter 'zz' of backward kernel 'bwd' names "
            "no input or output of kernel 'fwd', nor the cotangent d_<output> "
            "of one",
            "k.cu:25:40: error: scalar 'a' of backward kernel 'bwd' is float32 "
            "in kernel 'fwd' and must have that type, not float64",
            "k.cu:26:40: error: scalar 'b' of backward kernel 'bwd' is not a "
            "scalar of kernel 'fwd'",
            "k.cu:27:40: error: backward kernel 'bwd' cannot have in-place "
            "parameter 'w'",
            "k.cu:28:40: error: output 'd_i' of backward kernel 'bwd' would be "
            "the gradient of int32 input 'i' of kernel 'fwd', which gets no "
            "gradient",
            "k.cu:29:40: error: output 'g' of backward kernel 'bwd' must be "
            "named d_<input> for an input of kernel 'fwd'",
            "k.cu:30:40: error: parameter 'd_x' of backward kernel 'bwd' is "
            "the gradient of input 'x' of kernel 'fwd' and must be float32, "
            "not float16",
            "k.cu:3:10: error: backward kernel 'bwd' takes no cotangent for "
            "float output 'y' of kernel 'fwd'; add an input 'd_y'",
        });
}

TEST_CASE("sema: a cotangent matches its output") {
  Analysis a({Forward({In("x", "n", 4), Out("y", "n", 5)}),
              Backward({In("d_y", "n, n", 21), Out("d_x", "n", 22)})});
  CHECK(a.messages() ==
        Strings{"k.cu:21:40: error: parameter 'd_y' of backward kernel 'bwd' "
                "is the cotangent of output 'y' of kernel 'fwd' and must have "
                "rank 1, not 2"});
}

TEST_CASE("sema: every float input needs a gradient") {
  Analysis a({Forward({In("x", "n", 4), In("z", "n", 5), Out("y", "n", 6)}),
              Backward({In("d_y", "n", 21), Out("d_x", "n", 22)})});
  CHECK(a.messages() ==
        Strings{"k.cu:3:10: error: backward kernel 'bwd' gives no gradient "
                "for float input 'z' of kernel 'fwd'; add an output 'd_z'"});
}

TEST_CASE("sema: KC_PARALLEL symbols are whole dimensions") {
  Kernel k = Global("k", {"n"},
                    {In("x", "m, n", 4), In("y", "x", 5), Out("o", "m, n", 6)});
  k.parallel = {Text{"m", At(3, 10)}};
  Analysis ok(k);
  REQUIRE(ok.ok());
  CHECK(ok.plan().parallel == Strings{"m"});
  CHECK(ok.plan().params[1].dim_symbols == Strings{"m", "n"});

  Kernel bad = Global(
      "k", {"n"},
      {In("x", "m, n", 4), Scalar("s", DType::kI64, 5), Out("o", "m * 2", 6)});
  bad.parallel = {Text{"m", At(3, 10)}, Text{"q", At(3, 20)},
                  Text{"s", At(3, 30)}, Text{"m", At(3, 40)}};
  CHECK(Errors(bad) ==
        Strings{"k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', but "
                "the shape of 'o' uses it in 'm * 2'; a parallel symbol must "
                "be a whole dimension",
                "k.cu:3:20: error: KC_PARALLEL of kernel 'k' names 'q', which "
                "is not a dimension of an input: name a shape symbol or "
                "derived value that an input shape uses",
                "k.cu:3:30: error: KC_PARALLEL of kernel 'k' names 's', which "
                "is not a dimension of an input: name a shape symbol or "
                "derived value that an input shape uses",
                "k.cu:3:40: error: KC_PARALLEL of kernel 'k' names 'm' twice"});
}

}  // namespace
}  // namespace kernelc::sema

namespace kernelc::sema {
namespace {

TEST_CASE("sema: KC_ELEMENTWISE tensors share one shape") {
  Kernel k = Global("k", {"n"},
                    {In("x", "n", 4), In("y", "x", 5),
                     Derived("c", "x.size", 6), Out("o", "n", 7)});
  k.elementwise = true;
  Analysis ok(k);
  REQUIRE(ok.ok());
  CHECK(ok.plan().params[1].dim_texts == Strings{"n"});

  Kernel other = Global("k", {"n"}, {In("x", "n", 4), Out("o", "n * 2", 5)});
  other.elementwise = true;
  CHECK(Errors(other) ==
        Strings{"k.cu:5:40: error: KC_ELEMENTWISE kernel 'k' needs every "
                "tensor to have one shape: 'o' has shape (n * 2), 'x' has "
                "(n)"});
  Kernel scalar = Global("k", {"1"}, {In("x", "", 4), Out("o", "x", 5)});
  scalar.elementwise = true;
  CHECK(Errors(scalar) ==
        Strings{"k.cu:4:40: error: KC_ELEMENTWISE kernel 'k' needs tensors of "
                "known extents and rank 1 or more; 'x' has shape ()"});
}

}  // namespace
}  // namespace kernelc::sema

namespace kernelc::sema {
namespace {

TEST_CASE("sema: KC_JVP pairs a tangent kernel") {
  Kernel f = Global("fwd", {"n"},
                    {In("x", "n", 4), In("i", "n", 5, DType::kI32),
                     Scalar("a", DType::kF32, 6), Out("y", "n", 7),
                     Out("c", "n", 8, DType::kI32)});
  f.jvp = Text{"tan", At(3, kTextCol)};
  Kernel t = Global(
      "tan", {"n"},
      {In("x", "n", 21), In("i", "n", 22, DType::kI32), In("d_x", "n", 23),
       Scalar("a", DType::kF32, 24), Out("d_y", "n", 25)},
      20);
  Analysis ok({f, t});
  REQUIRE(ok.ok());
  REQUIRE(ok.plan(0).pairing.has_value());
  const Pairing& pairing = *ok.plan(0).pairing;
  CHECK(pairing.mode == Pairing::Mode::kJvp);
  CHECK(pairing.kernel == &ok.result().value().module->kernels[1]);
  // x, i, d_x (the tangent of input x), a, d_y (the tangent of output y).
  CHECK(Roles(pairing) == Strings{"value 0", "value 1", "derivative 0",
                                  "static 2", "derivative 3"});

  Kernel bad_t = Global(
      "tan", {"n"},
      {In("x", "n, n", 21), In("d_i", "n", 22, DType::kI32), In("y", "n", 23),
       Out("d_c", "n", 24, DType::kI32), Out("z", "n", 25)},
      20);
  Analysis bad({f, bad_t});
  CHECK(bad.messages() ==
        Strings{
            "k.cu:21:40: error: parameter 'x' of tangent kernel 'tan' is the "
            "input 'x' of kernel 'fwd' and must have rank 1, not 2",
            "k.cu:22:40: error: parameter 'd_i' of tangent kernel 'tan' would "
            "be the tangent of int32 input 'i' of kernel 'fwd', which has "
            "none",
            "k.cu:23:40: error: parameter 'y' of tangent kernel 'tan' names no "
            "input of kernel 'fwd', nor the tangent d_<input> of one",
            "k.cu:24:40: error: parameter 'd_c' of tangent kernel 'tan' would "
            "be the tangent of int32 output 'c' of kernel 'fwd', which has "
            "none",
            "k.cu:25:40: error: output 'z' of tangent kernel 'tan' must be "
            "named d_<output> for an output of kernel 'fwd'",
            "k.cu:3:10: error: tangent kernel 'tan' takes no tangent for float "
            "input 'x' of kernel 'fwd'; add an input 'd_x'",
            "k.cu:3:10: error: tangent kernel 'tan' gives no tangent for float "
            "output 'y' of kernel 'fwd'; add an output 'd_y'"});

  f.vjp = Text{"tan", At(3, 30)};
  Analysis both({f, t});
  CHECK(both.messages().back() ==
        "k.cu:3:10: error: kernel 'fwd' has both KC_VJP and KC_JVP; give one");
}

// KC_JVP: the text of the forward kernel starts at line 3, kTextCol.
Kernel JvpForward(std::vector<Param> params, const std::string& jvp = "tan") {
  Kernel k = Global("fwd", {"n"}, std::move(params));
  k.jvp = Text{jvp, At(3, kTextCol)};
  return k;
}

Kernel Tangent(std::vector<Param> params) {
  return Global("tan", {"n"}, std::move(params), 20);
}

TEST_CASE("sema: KC_JVP names a kernel that exists and is another") {
  Analysis a(JvpForward({In("x", "n", 4), Out("y", "n", 5)}, "nope"));
  CHECK(a.messages() ==
        Strings{"k.cu:3:10: error: KC_JVP of kernel 'fwd' names 'nope', which "
                "is not a kernel in these sources"});
  Analysis self(JvpForward({In("x", "n", 4), Out("y", "n", 5)}, "fwd"));
  CHECK(self.messages() ==
        Strings{"k.cu:3:10: error: KC_JVP of kernel 'fwd' names the kernel "
                "itself; name its tangent kernel"});
}

TEST_CASE("sema: KC_JVP with KC_VJP is an error after the VJP pairing's") {
  Kernel f = JvpForward({In("x", "n", 4), Out("y", "n", 5)});
  f.vjp = Text{"tan", At(3, 30)};
  Analysis both({f, Tangent({In("x", "n", 21), In("d_x", "n", 22),
                             Out("d_y", "n", 23)})});
  CHECK(
      both.messages() ==
      Strings{"k.cu:22:40: error: parameter 'd_x' of backward kernel 'tan' "
              "names no input or output of kernel 'fwd', nor the cotangent "
              "d_<output> of one",
              "k.cu:23:40: error: output 'd_y' of backward kernel 'tan' must "
              "be named d_<input> for an input of kernel 'fwd'",
              "k.cu:3:30: error: backward kernel 'tan' gives no gradient for "
              "float input 'x' of kernel 'fwd'; add an output 'd_x'",
              "k.cu:3:30: error: backward kernel 'tan' takes no cotangent for "
              "float output 'y' of kernel 'fwd'; add an input 'd_y'",
              "k.cu:3:10: error: kernel 'fwd' has both KC_VJP and KC_JVP; "
              "give one"});
}

TEST_CASE("sema: JVP pairing errors name the parameter") {
  Analysis a(
      {JvpForward({In("x", "n", 4), In("z", "n", 5),
                   Scalar("a", DType::kF32, 6), Out("y", "n", 7),
                   Out("w", "n", 8),
                   Tensor(Role::kInMut, "u", "n", 9, DType::kF32)}),
       Tangent({In("x", "n", 21, DType::kF64), In("d_x", "n", 22, DType::kF64),
                In("d_z", "n, n", 23), Scalar("a", DType::kF64, 24),
                Scalar("b", DType::kF32, 25), Derived("m", "x.size", 26),
                Tensor(Role::kInMut, "v", "n", 27), Out("d_y", "n, n", 28),
                Out("d_w", "n", 29, DType::kF16)})});
  CHECK(a.messages() ==
        Strings{
            "k.cu:9:40: error: kernel 'fwd' has KC_JVP and in-place parameter "
            "'u'; a differentiable kernel takes inputs and returns outputs",
            "k.cu:21:40: error: parameter 'x' of tangent kernel 'tan' is the "
            "input 'x' of kernel 'fwd' and must be float32, not float64",
            "k.cu:22:40: error: parameter 'd_x' of tangent kernel 'tan' is the "
            "tangent of input 'x' of kernel 'fwd' and must be float32, not "
            "float64",
            "k.cu:23:40: error: parameter 'd_z' of tangent kernel 'tan' is the "
            "tangent of input 'z' of kernel 'fwd' and must have rank 1, not 2",
            "k.cu:24:40: error: scalar 'a' of tangent kernel 'tan' is float32 "
            "in kernel 'fwd' and must have that type, not float64",
            "k.cu:25:40: error: scalar 'b' of tangent kernel 'tan' is not a "
            "scalar of kernel 'fwd'",
            "k.cu:27:40: error: tangent kernel 'tan' cannot have in-place "
            "parameter 'v'",
            "k.cu:28:40: error: parameter 'd_y' of tangent kernel 'tan' is the "
            "tangent of output 'y' of kernel 'fwd' and must have rank 1, not 2",
            "k.cu:29:40: error: parameter 'd_w' of tangent kernel 'tan' is the "
            "tangent of output 'w' of kernel 'fwd' and must be float32, not "
            "float16",
        });
}

}  // namespace
}  // namespace kernelc::sema

namespace kernelc::sema {
namespace {

// KC_PARALLEL("m") of kernel "k", its text at line 3, kTextCol.
Kernel Parallel(std::vector<Param> params,
                std::vector<std::string> names = {"m"}) {
  Kernel k = Host("k", std::move(params));
  for (size_t i = 0; i < names.size(); ++i)
    k.parallel.push_back(
        Text{names[i], At(3, kTextCol + 10 * static_cast<int>(i))});
  return k;
}

TEST_CASE("sema: every output of a KC_PARALLEL kernel has its dimensions") {
  Analysis ok(Parallel({In("x", "m, k", 4), In("w", "k", 5),
                        Tensor(Role::kInMut, "t", "m", 6), Out("y", "x", 7),
                        Out("s", "m", 8)}));
  REQUIRE(ok.ok());
  CHECK(ok.plan().parallel == Strings{"m"});

  // A count of the whole input, and an in-place parameter without 'm'.
  CHECK(Errors(Parallel({In("x", "m", 4), Tensor(Role::kInMut, "t", "k", 5),
                         Out("y", "m", 6), Out("count", "", 7)})) ==
        Strings{"k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', but "
                "in-place output 't' has no dimension 'm'; each device writes "
                "only its slice of every output, so every output needs each "
                "parallel symbol as a whole dimension",
                "k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', but "
                "output 'count' has no dimension 'm'; each device writes only "
                "its slice of every output, so every output needs each "
                "parallel symbol as a whole dimension"});
}

TEST_CASE("sema: a parallel symbol is at most one dimension of a tensor") {
  CHECK(Errors(Parallel({In("a", "m, m", 4), Out("d", "m", 5)})) ==
        Strings{"k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', which "
                "is 2 dimensions of 'a'; a parallel symbol can be at most one "
                "dimension of each tensor"});
}

TEST_CASE(
    "sema: a dimension that depends on a parallel symbol is that symbol") {
  // The shard sees its own extents: a derived value or size computed from
  // them is local, and fine where no dimension depends on it.
  Analysis ok(Parallel(
      {In("x", "n", 4), Derived("n", "x.size", 5), Derived("count", "n * 2", 6),
       Out("y", "n", 7), Out("z", "x", 8)},
      {"n"}));
  REQUIRE(ok.ok());
  CHECK(ok.plan().parallel == Strings{"n"});

  // x flattened: n = m * k is replicated but computed from the shard.
  CHECK(Errors(Parallel({In("x", "m, k", 4), Derived("n", "x.size", 5),
                         Out("out", "n, m", 6)})) ==
        Strings{"k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', and "
                "dimension 'n' of 'out' depends on it, so each device would "
                "compute that dimension from its own shard; a dimension that "
                "depends on a parallel symbol must be that symbol"});
  // Through a size, a shape and a chain of derived values, on an input too.
  CHECK(Errors(Parallel({In("x", "m", 4), In("y", "x.size", 5),
                         Derived("a", "x.shape[0] + 1", 6),
                         Derived("b", "a * 2", 7), Out("o", "m, b", 8)})) ==
        Strings{"k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', and "
                "dimension 'x.size' of 'y' depends on it, so each device "
                "would compute that dimension from its own shard; a dimension "
                "that depends on a parallel symbol must be that symbol",
                "k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'm', and "
                "dimension 'b' of 'o' depends on it, so each device would "
                "compute that dimension from its own shard; a dimension that "
                "depends on a parallel symbol must be that symbol"});
}

TEST_CASE("sema: a derived parallel symbol depends on a parallel dimension") {
  CHECK(Errors(Parallel({In("x", "m", 4), In("y", "n", 5),
                         Derived("n", "x.size * 2", 6), Out("o", "n", 7)},
                        {"n"})) ==
        Strings{"k.cu:3:10: error: KC_PARALLEL of kernel 'k' names 'n', a "
                "derived value ('x.size * 2') that depends on no parallel "
                "dimension; on a shard it would keep its whole value: derive "
                "it from a tensor that 'n' is a dimension of"});
  // Derived from a tensor that has the dimension: the shard's extent.
  Analysis ok(Parallel(
      {In("x", "n, k", 4), Derived("n", "x.shape[0]", 5), Out("o", "n", 6)},
      {"n"}));
  CHECK(ok.messages() == Strings{});
}

TEST_CASE("sema: a backward kernel's shapes match the forward kernel's") {
  // Symbols resolve through the values the kernels share: bwd's k and m are
  // fwd's m and k.
  Analysis renamed({Forward({In("x", "m, n", 4), Out("s", "m", 5)}),
                    Backward({In("x", "n, m", 21), In("d_s", "n", 22),
                              Out("d_x", "x", 23)})});
  CHECK(renamed.messages() == Strings{});
  // A derived size on both sides, and opaque expressions that agree or
  // cannot be compared.
  Analysis derived(
      {Forward({In("x", "n", 4), Derived("n", "x.size", 5),
                In("h", "ceil_div(n, 2)", 6), Out("y", "n / 2", 7)}),
       Backward({In("d_y", "x.shape[0] / 2", 21), In("x", "n", 22),
                 Derived("n", "x.size", 23), Out("d_x", "n", 24),
                 Out("d_h", "n / 2 + n % 2", 25)})});
  CHECK(derived.messages() == Strings{});

  Analysis bad({Forward({In("x", "n", 4), Derived("n", "x.size", 5),
                         In("z", "m, k", 6), In("w", "4", 7),
                         Scalar("c", DType::kI64, 8), Out("y", "n", 9)}),
                Backward({In("d_y", "n", 21), In("z", "m, m", 22),
                          Derived("n", "d_y.size", 23), Out("d_x", "n + 1", 24),
                          Out("d_z", "m, m", 25), Out("d_w", "c", 26),
                          Scalar("c", DType::kI64, 27)})});
  CHECK(bad.messages() ==
        Strings{
            "k.cu:22:40: error: parameter 'z' of backward kernel 'bwd' is the "
            "residual 'z' of kernel 'fwd' and must have its shape, but "
            "dimension 1 is 'm' here and 'k' in kernel 'fwd'",
            "k.cu:24:40: error: parameter 'd_x' of backward kernel 'bwd' is "
            "the gradient of input 'x' of kernel 'fwd' and must have its "
            "shape, but dimension 0 is 'n + 1' here and 'n' in kernel 'fwd'",
            "k.cu:25:40: error: parameter 'd_z' of backward kernel 'bwd' is "
            "the gradient of input 'z' of kernel 'fwd' and must have its "
            "shape, but dimension 1 is 'm' here and 'k' in kernel 'fwd'",
            "k.cu:26:40: error: parameter 'd_w' of backward kernel 'bwd' is "
            "the gradient of input 'w' of kernel 'fwd' and must have its "
            "shape, but dimension 0 is 'c' here and '4' in kernel 'fwd'"});
}

TEST_CASE("sema: a tangent kernel's shapes match the forward kernel's") {
  Analysis bad(
      {JvpForward({In("x", "n", 4), In("y", "n", 5), Out("o", "n, 3", 6)}),
       Tangent({In("x", "n", 21), In("d_x", "n", 22), In("d_y", "2", 23),
                Out("d_o", "n, 2", 24)})});
  CHECK(bad.messages() ==
        Strings{"k.cu:23:40: error: parameter 'd_y' of tangent kernel 'tan' "
                "is the tangent of input 'y' of kernel 'fwd' and must have "
                "its shape, but dimension 0 is '2' here and 'n' in kernel "
                "'fwd'",
                "k.cu:24:40: error: parameter 'd_o' of tangent kernel 'tan' "
                "is the tangent of output 'o' of kernel 'fwd' and must have "
                "its shape, but dimension 1 is '2' here and '3' in kernel "
                "'fwd'"});
}

}  // namespace
}  // namespace kernelc::sema
