#include <kernelc.h>

// Declared for a kernel that another file defines.
KC_GRID("x.size")
__global__ void k(KC_IN("n") const float* x, KC_OUT("x") float* y);

__global__ void unannotated(float* y) {}
