// A source that the C++ frontend accepts but NVRTC rejects: a __host__
// function, which does not exist on the GPU, called from the kernels.
#include <kernelc.h>

#include <cuda_fp16.h>

__host__ float twice(float v) { return 2.0f * v; }

KC_GRID("n")
__global__ void scale(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n,
                      KC_OUT("x") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = twice(x[i]);
}

KC_GRID("n")
__global__ void wrap(KC_IN("n") const __half* x, KC_DERIVED("x.size") int64_t n,
                     KC_OUT("x") __half* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2half(twice(__half2float(x[i])));
}
