// <math.h> for kernels compiled by NVRTC: the CUDA math functions (sqrtf,
// atan2f, expf, ...) are built into NVRTC, so there is nothing to declare
// but the macros of the C library that CUDA code uses (nvcc takes them
// from the host's <math.h>): INFINITY and NAN as floats, through the bit
// patterns of CUDA's __int_as_float (NVRTC has no __builtin_huge_valf).
#ifndef KERNELC_DEVICE_MATH_H_
#define KERNELC_DEVICE_MATH_H_
#ifndef INFINITY
#define INFINITY (__int_as_float(0x7f800000))
#endif
#ifndef NAN
#define NAN (__int_as_float(0x7fffffff))
#endif
#endif  // KERNELC_DEVICE_MATH_H_
