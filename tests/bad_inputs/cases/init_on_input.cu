#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(KC_IN("n") KC_INIT(0) const float* x, KC_OUT("x") float* y) {}
