#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(KC_IN("n") const float* x, KC_DERIVED("b") int64_t a, KC_DERIVED("a") int64_t b, KC_OUT("x") float* y) {}
