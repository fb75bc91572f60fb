// The kernels the GPU benchmark times: a tiny op (one add per element, for
// the per-call overhead) and a copy (for bandwidth).
#include <kernelc.h>

KC_GRID("n")
__global__ void tiny(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n,
                     KC_OUT("x") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + 1.0f;
}

// Copies 16 bytes per thread.
KC_GRID("ceil_div(n, 4)")
__global__ void copy(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n,
                     KC_OUT("x") float* out) {
  int64_t i = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) * 4;
  if (i + 4 <= n && (n % 4) == 0) {
    *reinterpret_cast<float4*>(out + i) =
        *reinterpret_cast<const float4*>(x + i);
  } else {
    for (int64_t j = i; j < n && j < i + 4; ++j) out[j] = x[j];
  }
}
