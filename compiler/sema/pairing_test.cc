#include "compiler/sema/pairing.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "compiler/sema/sema_test_util.h"

// The fixtures (sema_test_util.h) are in scope.
namespace kernelc::sema::testing {
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

TEST_CASE("sema: KC_JVP beside KC_VJP records both pairings") {
  Kernel f = JvpForward({In("x", "n", 4), Out("y", "n", 5)});
  f.vjp = Text{"bwd", At(3, 30)};
  Analysis both({f,
                 Tangent({In("x", "n", 21), In("d_x", "n", 22),
                          Out("d_y", "n", 23)}),
                 Global("bwd", {"n"}, {In("d_y", "n", 31), Out("d_x", "n", 32)},
                        30)});
  REQUIRE(both.ok());
  REQUIRE(both.plan(0).pairing.has_value());
  REQUIRE(both.plan(0).tangent.has_value());
  const model::Module& m = *both.result().value().module;
  CHECK(both.plan(0).pairing->mode == Pairing::Mode::kVjp);
  CHECK(both.plan(0).pairing->kernel == &m.kernels[2]);
  CHECK(both.plan(0).tangent->mode == Pairing::Mode::kJvp);
  CHECK(both.plan(0).tangent->kernel == &m.kernels[1]);
  CHECK(Roles(*both.plan(0).tangent) ==
        Strings{"value 0", "derivative 0", "derivative 1"});
  // Each is checked as it would be alone.
  Kernel g = f;
  g.vjp = Text{"tan", At(3, 30)};
  Analysis wrong({g, Tangent({In("x", "n", 21), In("d_x", "n", 22),
                              Out("d_y", "n", 23)})});
  CHECK(wrong.messages().front() ==
        "k.cu:22:40: error: parameter 'd_x' of backward kernel 'tan' names no "
        "input or output of kernel 'fwd', nor the cotangent d_<output> of one");
  CHECK_FALSE(wrong.ok());
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
}  // namespace kernelc::sema::testing
