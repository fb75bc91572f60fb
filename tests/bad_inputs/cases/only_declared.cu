#include <kernelc.h>

KC_GRID("n")
__global__ void k(KC_IN("n") const float* x, KC_OUT("n") float* y);
