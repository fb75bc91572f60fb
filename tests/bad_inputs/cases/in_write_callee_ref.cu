#include <kernelc.h>

__device__ void bump(float& v) { v += 1.0f; }
KC_GRID("x.size")
__global__ void k(KC_IN("n") float* x, KC_OUT("x") float* y) {
  bump(x[0]);
}
