// Kernels for several sources to include.
#include <kernelc.h>

KC_GRID("x.size")
__global__ void in_header(KC_IN("n") const float* x, KC_OUT("x") float* y) {}
