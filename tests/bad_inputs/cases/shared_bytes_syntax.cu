#include <kernelc.h>

KC_GRID("x.size") KC_SHARED_BYTES("x.size *")
__global__ void k(KC_IN("n") const float* x, KC_OUT("x") float* y) {}
