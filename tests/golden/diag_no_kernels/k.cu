#include <kernelc.h>

#include "kernels.cuh"

// A prototype, for a kernel that is defined elsewhere.
KC_GRID("x.size")
__global__ void declared(KC_IN("n") const float* x, KC_OUT("x") float* y);
