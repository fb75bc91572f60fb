#include <kernelc.h>

KC_GRID("1")
__global__ void k(KC_IN("n") int64_t x, KC_OUT("1") float* y) {}
