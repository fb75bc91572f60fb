#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(KC_IN("n") float* x, KC_OUT("x") float* y) {
  memset(x, 0, 4);
}
