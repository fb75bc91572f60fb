#include "compiler/sema/sema.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/sema/sema_test_util.h"

// The fixtures (sema_test_util.h) are in scope.
namespace kernelc::sema::testing {
namespace {

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

TEST_CASE("a kernel needs a result: an Out or an InMut") {
  Analysis none(
      Global("k", {"n"}, {In("x", "n", 10), Scalar("s", DType::kI32, 11)}),
      /*add_result=*/false);
  CHECK_FALSE(none.ok());
  CHECK(none.messages() ==
        Strings{
            "k.cu:1:17: error: kernel 'k' has no output: an op returns the "
            "kernel's KC_OUT and KC_INMUT tensors, so it needs at least one"});
  // Each kernel is reported, beside its other problems.
  Analysis two({Global("a", {"n"}, {In("x", "n", 10)}),
                Global("b", {"q"}, {In("y", "n", 11)})},
               /*add_result=*/false);
  CHECK(two.messages().size() == 3);
  Analysis inmut(Global("k", {"n"}, {Tensor(Role::kInMut, "x", "n", 10)}),
                 /*add_result=*/false);
  CHECK(inmut.ok());
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

TEST_CASE("sema: the batch broadcasts for in-place and elementwise kernels") {
  using Batching = KernelPlan::Batching;
  Kernel plain = Global("k", {"n"}, {In("x", "n", 4), Out("o", "n", 5)});
  CHECK(Analysis(plain).plan().batching == Batching::kExpandDims);
  Kernel elementwise = plain;
  elementwise.elementwise = true;
  CHECK(Analysis(elementwise).plan().batching == Batching::kBroadcastAll);
  Kernel inplace =
      Global("k", {"n"}, {Tensor(Role::kInMut, "acc", "n", 4), In("x", "n", 5)});
  CHECK(Analysis(inplace).plan().batching == Batching::kBroadcastAll);
}

}  // namespace
}  // namespace kernelc::sema::testing
