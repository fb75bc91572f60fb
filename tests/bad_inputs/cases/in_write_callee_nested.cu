#include <kernelc.h>

__device__ void inner(float* p) { *p = 0.0f; }
__device__ void outer(float* p) { inner(p + 1); }
KC_GRID("x.size")
__global__ void k(KC_IN("n") float* x, KC_OUT("x") float* y) {
  outer(x);
}
