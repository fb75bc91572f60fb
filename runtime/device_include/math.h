// <math.h> for kernels compiled by NVRTC: the CUDA math functions (sqrtf,
// atan2f, expf, ...) are built into NVRTC, so there is nothing to declare.
// The macros are those of the CPU target's <math.h> (glibc's, with the GNU
// extensions that C++ compilers enable): the same source means the same
// constants on both targets. kernelc.h includes this header under NVRTC, as
// kernelc/host.h includes <math.h> for the CPU.
#ifndef KERNELC_DEVICE_MATH_H_
#define KERNELC_DEVICE_MATH_H_

// NVRTC has none of the compiler builtins (__builtin_inff) that glibc's
// macros expand to, and folds no overflowing constant (1e300 * 1e300), so
// the special values come from their bit patterns, through CUDA's
// reinterpreting intrinsics: usable in device code, not in constant
// expressions. NAN is glibc's, the quiet NaN with no payload.
// libcu++'s <cuda/std/cmath> defines INFINITY and NAN under NVRTC too
// (through cuda::std::numeric_limits); where it came first, its stand.
#define HUGE_VAL (__longlong_as_double(0x7ff0000000000000LL))
#define HUGE_VALF (__int_as_float(0x7f800000))
#ifndef INFINITY
#define INFINITY (__int_as_float(0x7f800000))
#endif
#ifndef NAN
#define NAN (__int_as_float(0x7fc00000))
#endif

#define M_E 2.718281828459045235360287471352662498
#define M_LOG2E 1.442695040888963407359924681001892137
#define M_LOG10E 0.434294481903251827651128918916605082
#define M_LN2 0.693147180559945309417232121458176568
#define M_LN10 2.302585092994045684017991454684364208
#define M_PI 3.141592653589793238462643383279502884
#define M_PI_2 1.570796326794896619231321691639751442
#define M_PI_4 0.785398163397448309615660845819875721
#define M_1_PI 0.318309886183790671537767526745028724
#define M_2_PI 0.636619772367581343075535053882419109
#define M_2_SQRTPI 1.128379167095512573896158903121545172
#define M_SQRT2 1.414213562373095048801688724209698079
#define M_SQRT1_2 0.707106781186547524400844362104849039

#define M_Ef 2.718281828459045235360287471352662498f
#define M_LOG2Ef 1.442695040888963407359924681001892137f
#define M_LOG10Ef 0.434294481903251827651128918916605082f
#define M_LN2f 0.693147180559945309417232121458176568f
#define M_LN10f 2.302585092994045684017991454684364208f
#define M_PIf 3.141592653589793238462643383279502884f
#define M_PI_2f 1.570796326794896619231321691639751442f
#define M_PI_4f 0.785398163397448309615660845819875721f
#define M_1_PIf 0.318309886183790671537767526745028724f
#define M_2_PIf 0.636619772367581343075535053882419109f
#define M_2_SQRTPIf 1.128379167095512573896158903121545172f
#define M_SQRT2f 1.414213562373095048801688724209698079f
#define M_SQRT1_2f 0.707106781186547524400844362104849039f

#endif  // KERNELC_DEVICE_MATH_H_
