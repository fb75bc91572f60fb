// <math.h> for kernels compiled by NVRTC: the CUDA math functions (sqrtf,
// atan2f, expf, ...) are built into NVRTC, so there is nothing to declare.
#ifndef KERNELC_DEVICE_MATH_H_
#define KERNELC_DEVICE_MATH_H_
#endif  // KERNELC_DEVICE_MATH_H_
