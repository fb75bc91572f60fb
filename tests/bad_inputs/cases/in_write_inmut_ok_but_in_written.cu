#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(KC_IN("n") float* x, KC_INMUT("n") float* z) {
  z[0] = x[0];
  x[0] = z[1];
}
