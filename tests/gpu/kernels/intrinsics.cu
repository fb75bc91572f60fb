// CUDA intrinsics that one source uses on the CPU and on the GPU: 16-bit
// float arithmetic (cuda_fp16.h, cuda_bf16.h), half2 pairs, integer bit
// intrinsics, CUDA's min/max overloads, rounding-mode float intrinsics.
#include <kernelc.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

KC_GRID("n")
__global__ void half_ops(KC_IN("n") const __half* a, KC_IN("n") const __half* b,
                         KC_DERIVED("a.size") int64_t n,
                         KC_OUT("n") __half* sum, KC_OUT("n") __half* fma,
                         KC_OUT("n") __nv_bfloat16* bsum,
                         KC_OUT("n") float* pair) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  sum[i] = __hadd(a[i], b[i]);
  fma[i] = __hneg(__hfma(a[i], b[i], __float2half(1.0f)));
  __nv_bfloat16 x = __float2bfloat16(__half2float(a[i]));
  bsum[i] = __hmul(x, __float2bfloat16(2.0f));
  __half2 p = __halves2half2(a[i], b[i]);
  pair[i] = __low2float(p) - __high2float(p);
}

KC_GRID("n")
__global__ void int_ops(KC_IN("n") const uint32_t* x,
                        KC_DERIVED("x.size") int64_t n,
                        KC_OUT("n") int32_t* popc, KC_OUT("n") int32_t* clz,
                        KC_OUT("n") int32_t* ffs, KC_OUT("n") uint32_t* brev,
                        KC_OUT("n") uint32_t* mulhi, KC_OUT("n") uint32_t* lo) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  popc[i] = __popc(x[i]);
  clz[i] = __clz((int)x[i]);
  ffs[i] = __ffs((int)x[i]);
  brev[i] = __brev(x[i]);
  mulhi[i] = __umulhi(x[i], 0x9e3779b9u);
  lo[i] = min(x[i], 1000u) + max(x[i] & 7u, 3u);
}

KC_GRID("n")
__global__ void float_ops(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n,
                          KC_OUT("n") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = __fmaf_rn(x[i], 2.0f, __fmul_rn(x[i], x[i])) + min(x[i], 0.5f) +
             max(x[i], -0.5f);
}
