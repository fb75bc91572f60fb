// A kernel without annotations: its spec.json describes it.
#include <stdint.h>

__global__ void scale(const float* x, float s, int64_t n, float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = s * x[i];
}
