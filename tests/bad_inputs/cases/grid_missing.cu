#include <kernelc.h>

__global__ void k(KC_IN("n") const float* x, KC_OUT("x") float* y) {}
KC_GRID("x.size") __global__ void j(KC_IN("n") const float* x) {}
