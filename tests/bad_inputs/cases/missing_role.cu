#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(const float* x, KC_OUT("n") float* out) {}
