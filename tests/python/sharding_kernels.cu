// Kernels with KC_PARALLEL, for the sharding tests.
#include <kernelc.h>

// Rows are independent: each is divided by its sum (plus eps).
KC_KERNEL
KC_PARALLEL("m")
void rownorm(KC_SHAPE("m, n") kc::In<float, 2> x, float eps,
             KC_SHAPE("m, n") kc::Out<float, 2> out,
             KC_SHAPE("m") kc::Out<float, 1> total) {
  for (int64_t r = 0; r < x.shape[0]; ++r) {
    float s = eps;
    for (int64_t c = 0; c < x.shape[1]; ++c) s += x(r, c);
    for (int64_t c = 0; c < x.shape[1]; ++c) out(r, c) = x(r, c) / s;
    total(r) = s;
  }
}

// Elementwise, with a backward kernel that is parallel too.
KC_GRID("n")
KC_PARALLEL("n")
KC_VJP("square_add_bwd")
__global__ void square_add(KC_IN("n") const float* x, KC_IN("n") const float* y,
                           float a, KC_DERIVED("x.size") int64_t count,
                           KC_OUT("n") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < count) out[i] = a * x[i] * x[i] + y[i];
}

KC_GRID("n")
KC_PARALLEL("n")
__global__ void square_add_bwd(KC_IN("n") const float* x, float a,
                               KC_IN("n") const float* d_out,
                               KC_DERIVED("x.size") int64_t count,
                               KC_OUT("n") float* d_x, KC_OUT("n") float* d_y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < count) {
    d_x[i] = 2.0f * a * x[i] * d_out[i];
    d_y[i] = d_out[i];
  }
}

// Parallel along rows of `a` only: b is needed whole on every device.
KC_GRID("c.shape[1]", "c.shape[0]")
KC_BLOCK(16, 16)
KC_PARALLEL("m")
__global__ void matmul(KC_SHAPE("m, k") kc::In<float, 2> a,
                       KC_SHAPE("k, n") kc::In<float, 2> b,
                       KC_SHAPE("m, n") kc::Out<float, 2> c) {
  int64_t col = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int64_t row = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
  if (row >= c.shape[0] || col >= c.shape[1]) return;
  float acc = 0.0f;
  for (int64_t i = 0; i < a.shape[1]; ++i) acc += a(row, i) * b(i, col);
  c(row, col) = acc;
}

// Updated in place, parallel along its only dimension.
KC_GRID("n")
KC_PARALLEL("n")
__global__ void accumulate(KC_INMUT("n") float* total, KC_IN("n") const float* d,
                           float s, KC_DERIVED("total.size") int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) total[i] += s * d[i];
}

// A template kernel with a traced scalar, parallel along rows, and a
// template backward paired variant by variant.
template <typename T>
KC_GRID("size")
KC_PARALLEL("m")
KC_VJP("scaled_square_bwd")
__global__ void scaled_square(KC_IN("m, n") const T* x, KC_TRACED T s,
                              KC_DERIVED("x.size") int64_t size,
                              KC_OUT("m, n") T* y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < size) y[i] = s * x[i] * x[i];
}
template __global__ void scaled_square<float>(const float*, float, int64_t,
                                              float*);
template __global__ void scaled_square<double>(const double*, double,
                                               int64_t, double*);

template <typename T>
KC_GRID("size")
KC_PARALLEL("m")
__global__ void scaled_square_bwd(KC_IN("m, n") const T* x, KC_TRACED T s,
                                  KC_IN("m, n") const T* d_y,
                                  KC_DERIVED("x.size") int64_t size,
                                  KC_OUT("m, n") T* d_x) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < size) d_x[i] = T(2) * s * x[i] * d_y[i];
}
template __global__ void scaled_square_bwd<float>(const float*, float,
                                                  const float*, int64_t,
                                                  float*);
template __global__ void scaled_square_bwd<double>(const double*, double,
                                                   const double*, int64_t,
                                                   double*);
