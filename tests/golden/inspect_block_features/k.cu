#include <kernelc.h>

KC_GRID("out.size")
KC_BLOCK(128)
__global__ void block_sum(KC_IN("n") const float* x,
                          KC_OUT("ceil_div(n, 128)") float* out) {
  __shared__ float partial[128];
  partial[threadIdx.x] = x[blockIdx.x * 128 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
