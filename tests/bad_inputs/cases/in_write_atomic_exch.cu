#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(KC_IN("n") float* x, KC_OUT("x") float* y) {
  atomicExch(&x[3], 1.0f);
}
