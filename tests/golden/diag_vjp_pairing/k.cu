#include <kernelc.h>

KC_GRID("n")
KC_VJP("scale_bwd")
__global__ void scale(KC_IN("n") const float* x, KC_IN("n") const int32_t* i,
                      float a, KC_OUT("n") float* y, KC_OUT("n") float* z) {}

KC_GRID("n")
__global__ void scale_bwd(KC_IN("n") const double* x, KC_IN("n") const float* d_y,
                          double a, KC_OUT("n") float* d_i) {}

KC_GRID("n")
KC_VJP("missing_bwd")
__global__ void other(KC_IN("n") const float* x, KC_OUT("n") float* y) {}

KC_GRID("n")
KC_PARALLEL("n", "q")
__global__ void twice(KC_IN("n") const float* x, KC_OUT("n * 2") float* y) {}

KC_GRID("n")
KC_JVP("tangent")
__global__ void forward(KC_IN("n") const float* x, KC_OUT("n") float* y) {}

KC_GRID("n")
__global__ void tangent(KC_IN("n") const float* x, KC_IN("n") const float* dx,
                        KC_OUT("n") float* d_y) {}

// The gradient's shape differs from its input's.
KC_GRID("n")
KC_VJP("grow_bwd")
__global__ void grow(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n,
                     KC_OUT("n") float* y) {}

KC_GRID("n")
__global__ void grow_bwd(KC_IN("n") const float* d_y, KC_DERIVED("d_y.size") int64_t n,
                         KC_OUT("n + 1") float* d_x) {}
