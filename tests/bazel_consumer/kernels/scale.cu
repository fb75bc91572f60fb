// out = FACTOR * x, FACTOR from a header.
#include <kernelc.h>

#include "factor.h"

KC_GRID("out.size")
__global__ void scale(KC_IN("n") const float* x,
                      KC_DERIVED("x.size") int64_t n,
                      KC_OUT("x") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = FACTOR * x[i];
}
