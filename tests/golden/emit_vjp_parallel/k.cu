#include <kernelc.h>

// A differentiable, row-parallel, elementwise kernel: out = a * x * x + y.
KC_GRID("x.size")
KC_ELEMENTWISE
KC_PARALLEL("m")
KC_VJP("square_add_bwd")
__global__ void square_add(KC_IN("m, n") const float* x, KC_IN("x") const float* y,
                           float a, KC_OUT("x") float* out) {}

KC_KERNEL
KC_PARALLEL("m")
void square_add_bwd(KC_SHAPE("m, n") kc::In<float, 2> x, float a,
                    KC_SHAPE("m, n") kc::In<float, 2> d_out,
                    KC_SHAPE("m, n") kc::Out<float, 2> d_x,
                    KC_SHAPE("m, n") kc::Out<float, 2> d_y) {}
