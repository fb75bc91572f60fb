// The host 16-bit float types round like CUDA's conversions.
#include "kernelc/half.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>

namespace {

uint16_t Bits(kc::half h) { return h.bits; }
uint16_t Bits(kc::bfloat16 b) { return b.bits; }

TEST_CASE("half converts exactly representable values both ways") {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 0.000061035156f}) {
    kc::half h(f);
    CHECK(static_cast<float>(h) == Approx(f).epsilon(1e-3));
  }
  CHECK(Bits(kc::half(1.0f)) == 0x3c00);
  CHECK(Bits(kc::half(-2.0f)) == 0xc000);
  CHECK(Bits(kc::half(65504.0f)) == 0x7bff);
  CHECK(Bits(kc::half(5.9604645e-8f)) == 0x0001);  // smallest subnormal
}

TEST_CASE("half rounds to nearest even and saturates to infinity") {
  // 1 + 2^-11 is halfway between 1 and the next half: ties go to even (1).
  CHECK(Bits(kc::half(1.0f + std::ldexp(1.0f, -11))) == 0x3c00);
  // 1 + 3 * 2^-11 is halfway between two odd/even neighbours: up to even.
  CHECK(Bits(kc::half(1.0f + 3 * std::ldexp(1.0f, -11))) == 0x3c02);
  CHECK(Bits(kc::half(1e6f)) == 0x7c00);
  CHECK(std::isinf(static_cast<float>(kc::half(-1e6f))));
  CHECK(std::isnan(
      static_cast<float>(kc::half(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("bfloat16 keeps float's range and rounds to nearest even") {
  CHECK(Bits(kc::bfloat16(1.0f)) == 0x3f80);
  CHECK(static_cast<float>(kc::bfloat16(3e38f)) == Approx(3e38f).epsilon(1e-2));
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to even (1).
  CHECK(Bits(kc::bfloat16(1.0f + std::ldexp(1.0f, -8))) == 0x3f80);
  CHECK(std::isnan(static_cast<float>(
      kc::bfloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST_CASE("arithmetic goes through float") {
  kc::half a(1.5f), b(2.25f);
  CHECK(static_cast<float>(a + b) == 3.75f);
  CHECK(static_cast<float>(a * b) == 3.375f);
  CHECK(a < b);
  kc::bfloat16 c(2.0f);
  c += kc::bfloat16(1.0f);
  CHECK(static_cast<float>(c) == 3.0f);
}

}  // namespace
