// saxpy: out = a * x + y, with raw pointers and a derived length.
#include <kernelc.h>

KC_GRID("out.size")
KC_BLOCK(256)
__global__ void saxpy(KC_IN("n") const float* x,
                      KC_IN("n") const float* y,
                      float a,
                      KC_DERIVED("x.size") int64_t n,
                      KC_OUT("x") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
