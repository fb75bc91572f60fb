#include <kernelc.h>

KC_GRID("1")
__global__ void k(KC_IN("n") kc::In<float> x, KC_OUT("x") float* y) {}
