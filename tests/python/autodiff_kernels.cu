// Kernels with declared backward kernels (KC_VJP), for the autodiff tests.
#include <kernelc.h>

#include <math.h>

// out = a * x * x + y, with a static scalar a.
KC_GRID("n")
KC_VJP("square_add_bwd")
__global__ void square_add(KC_IN("n") const double* x,
                           KC_IN("n") const double* y, double a,
                           KC_DERIVED("x.size") int64_t n,
                           KC_OUT("n") double* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] * x[i] + y[i];
}

KC_GRID("n")
__global__ void square_add_bwd(KC_IN("n") const double* x, double a,
                               KC_IN("n") const double* d_out,
                               KC_DERIVED("x.size") int64_t n,
                               KC_OUT("n") double* d_x,
                               KC_OUT("n") double* d_y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    d_x[i] = 2.0 * a * x[i] * d_out[i];
    d_y[i] = d_out[i];
  }
}

// Two outputs: the polar coordinates of points (x, y). The backward kernel
// takes the forward output `radius` as a residual.
KC_GRID("n")
KC_VJP("polar_bwd")
__global__ void polar(KC_IN("n") const double* x, KC_IN("n") const double* y,
                      KC_DERIVED("x.size") int64_t n,
                      KC_OUT("n") double* radius, KC_OUT("n") double* angle) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  radius[i] = sqrt(x[i] * x[i] + y[i] * y[i]);
  angle[i] = atan2(y[i], x[i]);
}

KC_GRID("n")
__global__ void polar_bwd(KC_IN("n") const double* x, KC_IN("n") const double* y,
                          KC_IN("n") const double* radius,
                          KC_IN("n") const double* d_radius,
                          KC_IN("n") const double* d_angle,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("n") double* d_x, KC_OUT("n") double* d_y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  double r = radius[i], r2 = r * r;
  d_x[i] = d_radius[i] * x[i] / r - d_angle[i] * y[i] / r2;
  d_y[i] = d_radius[i] * y[i] / r + d_angle[i] * x[i] / r2;
}

// An integer input (no gradient): out[i] = table[index[i]]; the backward
// kernel scatters the cotangent into the table's gradient.
KC_GRID("n")
KC_VJP("gather_bwd")
__global__ void gather(KC_IN("t") const double* table,
                       KC_IN("n") const int32_t* index,
                       KC_DERIVED("index.size") int64_t n,
                       KC_OUT("n") double* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = table[index[i]];
}

KC_GRID("n")
__global__ void gather_bwd(KC_IN("t") const double* table,
                           KC_IN("n") const int32_t* index,
                           KC_IN("n") const double* d_out,
                           KC_DERIVED("index.size") int64_t n,
                           KC_OUT("t") KC_INIT(0) double* d_table) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&d_table[index[i]], d_out[i]);
}

// Views: c = a @ b, and its host-kernel backward.
KC_GRID("c.shape[1]", "c.shape[0]")
KC_BLOCK(16, 16)
KC_VJP("matmul_bwd")
__global__ void matmul(KC_SHAPE("m, k") kc::In<double, 2> a,
                       KC_SHAPE("k, n") kc::In<double, 2> b,
                       KC_SHAPE("m, n") kc::Out<double, 2> c) {
  int64_t col = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int64_t row = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
  if (row >= c.shape[0] || col >= c.shape[1]) return;
  double acc = 0.0;
  for (int64_t i = 0; i < a.shape[1]; ++i) acc += a(row, i) * b(i, col);
  c(row, col) = acc;
}

KC_KERNEL void matmul_bwd(KC_SHAPE("m, k") kc::In<double, 2> a,
                          KC_SHAPE("k, n") kc::In<double, 2> b,
                          KC_SHAPE("m, n") kc::In<double, 2> d_c,
                          KC_SHAPE("m, k") KC_INIT(0) kc::Out<double, 2> d_a,
                          KC_SHAPE("k, n") KC_INIT(0) kc::Out<double, 2> d_b) {
  for (int64_t i = 0; i < a.shape[0]; ++i)
    for (int64_t j = 0; j < b.shape[1]; ++j)
      for (int64_t p = 0; p < a.shape[1]; ++p) {
        d_a(i, p) += d_c(i, j) * b(p, j);
        d_b(p, j) += a(i, p) * d_c(i, j);
      }
}
