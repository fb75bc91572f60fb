#include <kernelc.h>

KC_GRID("1", "1", "1", "1")
__global__ void k(KC_IN("n") const float* x, KC_OUT("x") float* y) {}
