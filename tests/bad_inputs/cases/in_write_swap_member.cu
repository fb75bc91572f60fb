#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(KC_IN("n") float* x, KC_OUT("x") float* y) {
  struct S { float* p; } s{x};
  s.p[0] = 1.0f;
}
