// The launch ABI between a generated handler and the kernel code it calls.
// Plain C structs; their layout is part of the runtime ABI and is held by
// runtime/abi_layout_test.cc.
#ifndef KERNELC_LAUNCH_H_
#define KERNELC_LAUNCH_H_

#include <stdint.h>

// Bumped whenever a struct here or a generated entry point's signature
// changes. Generated code checks it with #error.
#define KC_RUNTIME_ABI_VERSION 2

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kc_dim3 {
  uint32_t x, y, z;
} kc_dim3;

// A grid launch: blocks per grid and threads per block, as in CUDA.
typedef struct kc_launch {
  kc_dim3 grid;
  kc_dim3 block;
} kc_launch;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KERNELC_LAUNCH_H_
