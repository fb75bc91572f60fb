// saxpy: out = a * x + y, with raw pointers and a derived length. It is
// elementwise (under vmap the batch runs as one launch), its work splits
// along n with no communication (sharded inputs stay sharded), and its
// gradient comes from saxpy_bwd.
#include <kernelc.h>

KC_GRID("out.size")
KC_BLOCK(256)
KC_ELEMENTWISE
KC_PARALLEL("n")
KC_VJP("saxpy_bwd")
__global__ void saxpy(KC_IN("n") const float* x,
                      KC_IN("n") const float* y,
                      float a,
                      KC_DERIVED("x.size") int64_t n,
                      KC_OUT("x") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}

// The vector-Jacobian product of saxpy: d_out is the cotangent of `out`,
// d_x and d_y the gradients of x and y; `a` is saxpy's scalar.
KC_GRID("n")
KC_ELEMENTWISE
KC_PARALLEL("n")
__global__ void saxpy_bwd(KC_IN("n") const float* d_out,
                          float a,
                          KC_DERIVED("d_out.size") int64_t n,
                          KC_OUT("n") float* d_x,
                          KC_OUT("n") float* d_y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    d_x[i] = a * d_out[i];
    d_y[i] = d_out[i];
  }
}
