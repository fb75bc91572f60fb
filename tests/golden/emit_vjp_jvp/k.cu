#include <kernelc.h>

// KC_VJP beside KC_JVP, and a backward kernel with a tangent kernel of its
// own: what jax.hessian needs of a nonlinear kernel (y = x * x).
KC_GRID("n")
KC_VJP("square_bwd")
KC_JVP("square_jvp")
__global__ void square(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n,
                       KC_OUT("n") float* y) {}

KC_GRID("n")
__global__ void square_jvp(KC_IN("n") const float* x, KC_IN("n") const float* d_x,
                           KC_DERIVED("x.size") int64_t n, KC_OUT("n") float* d_y) {}

KC_GRID("n")
KC_JVP("square_bwd_jvp")
__global__ void square_bwd(KC_IN("n") const float* x, KC_IN("n") const float* d_y,
                           KC_DERIVED("x.size") int64_t n, KC_OUT("n") float* d_x) {}

KC_GRID("n")
__global__ void square_bwd_jvp(KC_IN("n") const float* x, KC_IN("n") const float* d_y,
                               KC_IN("n") const float* d_x,
                               KC_IN("n") const float* d_d_y,
                               KC_DERIVED("x.size") int64_t n,
                               KC_OUT("n") float* d_d_x) {}
