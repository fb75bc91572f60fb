#include <kernelc.h>

KC_GRID("x.size") KC_ELEMENTWISE
__global__ void k(KC_IN("n") const float* x, KC_OUT("2 * n") float* y) {}
