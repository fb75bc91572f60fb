// out = 2 * x in half precision, for the GPU.
#include <cuda_fp16.h>
#include <kernelc.h>

KC_GRID("out.size")
__global__ void half_scale(KC_IN("n") const __half* x,
                           KC_DERIVED("x.size") int64_t n,
                           KC_OUT("x") __half* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = __half(2.0f * float(x[i]));
}
