#include "compiler/sema/init_value.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "compiler/sema/sema_test_util.h"

// The fixtures (sema_test_util.h) are in scope.
namespace kernelc::sema::testing {
namespace {

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

}  // namespace
}  // namespace kernelc::sema::testing
