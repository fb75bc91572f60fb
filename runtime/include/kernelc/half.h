// 16-bit floating-point element types for host code: kc::half (IEEE binary16,
// CUDA's __half) and kc::bfloat16 (CUDA's __nv_bfloat16). Storage is the
// 16-bit pattern; arithmetic converts to float. Conversions round to nearest
// even, as CUDA's __float2half_rn and __float2bfloat16_rn do.
#ifndef KERNELC_HALF_H_
#define KERNELC_HALF_H_

#include <stdint.h>
#include <string.h>

namespace kc {
namespace detail {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
inline float BitsFloat(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

inline uint16_t FloatToHalfBits(float f) {
  uint32_t x = FloatBits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xffu) {  // inf or nan (keep nan quiet)
    return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0u));
  }
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow
  if (e <= 0) {  // subnormal half or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half_man = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (half_man & 1u))) ++half_man;
    return static_cast<uint16_t>(sign | half_man);
  }
  uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry to inf
  return static_cast<uint16_t>(h);
}

inline float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1fu) return BitsFloat(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    if (man == 0) return BitsFloat(sign);
    // Subnormal: value = man * 2^-24.
    float v = static_cast<float>(man) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return BitsFloat(sign | ((exp + 112u) << 23) | (man << 13));
}

inline uint16_t FloatToBf16Bits(float f) {
  uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {  // nan: keep it quiet
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  }
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

inline float Bf16BitsToFloat(uint16_t b) {
  return BitsFloat(static_cast<uint32_t>(b) << 16);
}

// Arithmetic through float, shared by both types.
template <typename H>
struct FloatArith {
  friend H operator+(H a, H b) { return H(float(a) + float(b)); }
  friend H operator-(H a, H b) { return H(float(a) - float(b)); }
  friend H operator*(H a, H b) { return H(float(a) * float(b)); }
  friend H operator/(H a, H b) { return H(float(a) / float(b)); }
  friend H operator-(H a) { return H(-float(a)); }
  friend bool operator==(H a, H b) { return float(a) == float(b); }
  friend bool operator!=(H a, H b) { return float(a) != float(b); }
  friend bool operator<(H a, H b) { return float(a) < float(b); }
  friend bool operator<=(H a, H b) { return float(a) <= float(b); }
  friend bool operator>(H a, H b) { return float(a) > float(b); }
  friend bool operator>=(H a, H b) { return float(a) >= float(b); }
  H& operator+=(H b) { return Self() = Self() + b; }
  H& operator-=(H b) { return Self() = Self() - b; }
  H& operator*=(H b) { return Self() = Self() * b; }
  H& operator/=(H b) { return Self() = Self() / b; }

 private:
  H& Self() { return static_cast<H&>(*this); }
};

}  // namespace detail

struct half : detail::FloatArith<half> {
  uint16_t bits;
  half() = default;
  half(float f) : bits(detail::FloatToHalfBits(f)) {}               // NOLINT
  half(double f) : half(static_cast<float>(f)) {}                   // NOLINT
  half(int i) : half(static_cast<float>(i)) {}                      // NOLINT
  operator float() const { return detail::HalfBitsToFloat(bits); }  // NOLINT
};

struct bfloat16 : detail::FloatArith<bfloat16> {
  uint16_t bits;
  bfloat16() = default;
  bfloat16(float f) : bits(detail::FloatToBf16Bits(f)) {}           // NOLINT
  bfloat16(double f) : bfloat16(static_cast<float>(f)) {}           // NOLINT
  bfloat16(int i) : bfloat16(static_cast<float>(i)) {}              // NOLINT
  operator float() const { return detail::Bf16BitsToFloat(bits); }  // NOLINT
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2, "16-bit storage");

}  // namespace kc

#if defined(__KERNELC_FRONTEND__) || defined(__KERNELC_HOST__)
// CUDA's names for the same types and conversions, for sources written for
// the GPU (cuda_fp16.h / cuda_bf16.h are not used on the CPU).
using __half = ::kc::half;
using __nv_bfloat16 = ::kc::bfloat16;
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline float __half2float(__half h) { return float(h); }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 b) { return float(b); }
#endif

#endif  // KERNELC_HALF_H_
