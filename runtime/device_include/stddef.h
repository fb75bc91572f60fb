// <stddef.h> for kernels compiled by NVRTC, which ships no C library
// headers; size_t and ptrdiff_t are built into NVRTC.
#ifndef KERNELC_DEVICE_STDDEF_H_
#define KERNELC_DEVICE_STDDEF_H_

#if __has_include(<cuda/std/cstddef>)
// CCCL's, as for <stdint.h>.
#include <cuda/std/cstddef>
#endif
#ifndef NULL
#define NULL 0
#endif
#ifndef offsetof
#define offsetof(type, member) __builtin_offsetof(type, member)
#endif

#endif  // KERNELC_DEVICE_STDDEF_H_
