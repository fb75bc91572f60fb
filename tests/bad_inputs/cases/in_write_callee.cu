#include <kernelc.h>

__device__ void zero(float* p) { p[0] = 0.0f; }
KC_GRID("x.size")
__global__ void k(KC_IN("n") float* x, KC_OUT("x") float* y) {
  zero(x);
}
