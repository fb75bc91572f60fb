// <limits.h> for kernels compiled by NVRTC, which ships no C library
// headers: the limits of the integer types on the Linux x86-64 and aarch64
// hosts (LP64), as the CPU target's <limits.h> gives them.
#ifndef KERNELC_DEVICE_LIMITS_H_
#define KERNELC_DEVICE_LIMITS_H_

#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX SCHAR_MAX
#define SHRT_MIN (-32768)
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MIN (-INT_MAX - 1)
#define INT_MAX 2147483647
#define UINT_MAX 4294967295U
#define LONG_MIN (-LONG_MAX - 1L)
#define LONG_MAX 9223372036854775807L
#define ULONG_MAX 18446744073709551615UL
#define LLONG_MIN (-LLONG_MAX - 1LL)
#define LLONG_MAX 9223372036854775807LL
#define ULLONG_MAX 18446744073709551615ULL

#endif  // KERNELC_DEVICE_LIMITS_H_
