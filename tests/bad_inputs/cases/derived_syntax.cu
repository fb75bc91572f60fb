#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(KC_IN("n") const float* x, KC_DERIVED("x.size +") int64_t a, KC_OUT("x") float* y) {}
