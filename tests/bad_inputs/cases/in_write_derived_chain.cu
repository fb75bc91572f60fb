#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(KC_IN("n") float* x, KC_OUT("x") float* y) {
  float* p = x;
  float* q = p + 1;
  *q = 3.0f;
}
