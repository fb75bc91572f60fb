#include <kernelc.h>

__device__ void opaque(float* p);
KC_GRID("x.size")
__global__ void k(KC_IN("n") float* x, KC_OUT("x") float* y) {
  opaque(x);
}
