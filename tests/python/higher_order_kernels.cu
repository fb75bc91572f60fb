// Kernels for derivatives of higher order (test_higher_order.py).
#include <kernelc.h>

#include <math.h>

// Linear, with a backward kernel that takes no forward value: second and
// higher derivatives need no further annotation.
KC_GRID("n")
KC_VJP("saxpy_bwd")
__global__ void saxpy(KC_IN("n") const double* x, KC_IN("n") const double* y,
                      double a, KC_DERIVED("x.size") int64_t n,
                      KC_OUT("n") double* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}

KC_GRID("n")
__global__ void saxpy_bwd(KC_IN("n") const double* d_out, double a,
                          KC_DERIVED("d_out.size") int64_t n,
                          KC_OUT("n") double* d_x, KC_OUT("n") double* d_y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    d_x[i] = a * d_out[i];
    d_y[i] = d_out[i];
  }
}

// Linear with two outputs: (x, y) rotated by a static angle.
KC_GRID("n")
KC_VJP("rotate_bwd")
__global__ void rotate(KC_IN("n") const double* x, KC_IN("n") const double* y,
                       double angle, KC_DERIVED("x.size") int64_t n,
                       KC_OUT("n") double* u, KC_OUT("n") double* v) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  double c = cos(angle), s = sin(angle);
  u[i] = c * x[i] - s * y[i];
  v[i] = s * x[i] + c * y[i];
}

KC_GRID("n")
__global__ void rotate_bwd(KC_IN("n") const double* d_u,
                           KC_IN("n") const double* d_v, double angle,
                           KC_DERIVED("d_u.size") int64_t n,
                           KC_OUT("n") double* d_x, KC_OUT("n") double* d_y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  double c = cos(angle), s = sin(angle);
  d_x[i] = c * d_u[i] + s * d_v[i];
  d_y[i] = -s * d_u[i] + c * d_v[i];
}

// Nonlinear: out = a * x^3 + y. Reverse mode from KC_VJP, forward mode
// from KC_JVP; the backward kernel takes x, so its own forward mode (for
// jax.hessian) comes from its KC_JVP.
KC_GRID("n")
KC_VJP("cube_add_bwd")
KC_JVP("cube_add_jvp")
__global__ void cube_add(KC_IN("n") const double* x, KC_IN("n") const double* y,
                         double a, KC_DERIVED("x.size") int64_t n,
                         KC_OUT("n") double* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] * x[i] * x[i] + y[i];
}

KC_GRID("n")
__global__ void cube_add_jvp(KC_IN("n") const double* x,
                             KC_IN("n") const double* d_x,
                             KC_IN("n") const double* d_y, double a,
                             KC_DERIVED("x.size") int64_t n,
                             KC_OUT("n") double* d_out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) d_out[i] = 3.0 * a * x[i] * x[i] * d_x[i] + d_y[i];
}

KC_GRID("n")
KC_JVP("cube_add_bwd_jvp")
__global__ void cube_add_bwd(KC_IN("n") const double* x, double a,
                             KC_IN("n") const double* d_out,
                             KC_DERIVED("x.size") int64_t n,
                             KC_OUT("n") double* d_x, KC_OUT("n") double* d_y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  d_x[i] = 3.0 * a * x[i] * x[i] * d_out[i];
  d_y[i] = d_out[i];
}

KC_GRID("n")
__global__ void cube_add_bwd_jvp(KC_IN("n") const double* x,
                                 KC_IN("n") const double* d_out,
                                 KC_IN("n") const double* d_x,
                                 KC_IN("n") const double* d_d_out, double a,
                                 KC_DERIVED("x.size") int64_t n,
                                 KC_OUT("n") double* d_d_x,
                                 KC_OUT("n") double* d_d_y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  d_d_x[i] = 3.0 * a * x[i] * (2.0 * d_x[i] * d_out[i] + x[i] * d_d_out[i]);
  d_d_y[i] = d_d_out[i];
}

// Nonlinear with two outputs: (sin x, cos x), annotated like cube_add.
KC_GRID("n")
KC_VJP("sincos_bwd")
KC_JVP("sincos_jvp")
__global__ void sincos(KC_IN("n") const double* x,
                       KC_DERIVED("x.size") int64_t n, KC_OUT("n") double* s,
                       KC_OUT("n") double* c) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  s[i] = sin(x[i]);
  c[i] = cos(x[i]);
}

KC_GRID("n")
__global__ void sincos_jvp(KC_IN("n") const double* x,
                           KC_IN("n") const double* d_x,
                           KC_DERIVED("x.size") int64_t n,
                           KC_OUT("n") double* d_s, KC_OUT("n") double* d_c) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  d_s[i] = cos(x[i]) * d_x[i];
  d_c[i] = -sin(x[i]) * d_x[i];
}

KC_GRID("n")
KC_JVP("sincos_bwd_jvp")
__global__ void sincos_bwd(KC_IN("n") const double* x,
                           KC_IN("n") const double* d_s,
                           KC_IN("n") const double* d_c,
                           KC_DERIVED("x.size") int64_t n,
                           KC_OUT("n") double* d_x) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) d_x[i] = cos(x[i]) * d_s[i] - sin(x[i]) * d_c[i];
}

KC_GRID("n")
__global__ void sincos_bwd_jvp(KC_IN("n") const double* x,
                               KC_IN("n") const double* d_s,
                               KC_IN("n") const double* d_c,
                               KC_IN("n") const double* d_x,
                               KC_IN("n") const double* d_d_s,
                               KC_IN("n") const double* d_d_c,
                               KC_DERIVED("x.size") int64_t n,
                               KC_OUT("n") double* d_d_x) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  double sx = sin(x[i]), cx = cos(x[i]);
  d_d_x[i] = (-sx * d_s[i] - cx * d_c[i]) * d_x[i] + cx * d_d_s[i] -
             sx * d_d_c[i];
}

// Forward mode only, with a tangent kernel that takes no forward value.
KC_GRID("n")
KC_JVP("double_it_jvp")
__global__ void double_it(KC_IN("n") const double* x,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("n") double* y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0 * x[i];
}

KC_GRID("n")
__global__ void double_it_jvp(KC_IN("n") const double* d_x,
                              KC_DERIVED("d_x.size") int64_t n,
                              KC_OUT("n") double* d_y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) d_y[i] = 2.0 * d_x[i];
}

// Nonlinear: out = x * y. Its backward kernel takes x and y, and declares a
// backward kernel of its own: forward mode and reverse over reverse follow,
// jax.hessian (forward over reverse) does not.
KC_GRID("n")
KC_VJP("mul_bwd")
__global__ void mul(KC_IN("n") const double* x, KC_IN("n") const double* y,
                    KC_DERIVED("x.size") int64_t n, KC_OUT("n") double* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * y[i];
}

KC_GRID("n")
KC_VJP("mul_bwd_bwd")
__global__ void mul_bwd(KC_IN("n") const double* x, KC_IN("n") const double* y,
                        KC_IN("n") const double* d_out,
                        KC_DERIVED("x.size") int64_t n, KC_OUT("n") double* d_x,
                        KC_OUT("n") double* d_y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  d_x[i] = y[i] * d_out[i];
  d_y[i] = x[i] * d_out[i];
}

KC_GRID("n")
__global__ void mul_bwd_bwd(KC_IN("n") const double* x,
                            KC_IN("n") const double* y,
                            KC_IN("n") const double* d_out,
                            KC_IN("n") const double* d_d_x,
                            KC_IN("n") const double* d_d_y,
                            KC_DERIVED("x.size") int64_t n,
                            KC_OUT("n") double* d_x, KC_OUT("n") double* d_y,
                            KC_OUT("n") double* d_d_out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  d_x[i] = d_out[i] * d_d_y[i];
  d_y[i] = d_out[i] * d_d_x[i];
  d_d_out[i] = y[i] * d_d_x[i] + x[i] * d_d_y[i];
}
