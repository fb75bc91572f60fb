// <stdint.h> for kernels compiled by NVRTC, which ships no C library
// headers. Where CCCL is on the include path (CUDA 13 puts cooperative
// groups, CUB and cuda::std there), its definitions are the ones: CCCL
// declares these names itself under NVRTC, and two different sets would
// clash whichever came first. Otherwise the widths are those of the Linux
// x86-64 and aarch64 hosts (LP64); either way they match the generated
// handler's.
#ifndef KERNELC_DEVICE_STDINT_H_
#define KERNELC_DEVICE_STDINT_H_

#if __has_include(<cuda/std/cstdint>)
#include <cuda/std/cstdint>
#else

typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;

#define INT8_MIN (-128)
#define INT16_MIN (-32767 - 1)
#define INT32_MIN (-2147483647 - 1)
#define INT64_MIN (-9223372036854775807L - 1)
#define INT8_MAX 127
#define INT16_MAX 32767
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807L
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295U
#define UINT64_MAX 18446744073709551615UL
#define INT64_C(c) c##L
#define UINT64_C(c) c##UL

#endif  // __has_include(<cuda/std/cstdint>)
#endif  // KERNELC_DEVICE_STDINT_H_
