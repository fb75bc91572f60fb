#include <kernelc.h>

KC_GRID("n")
KC_VJP("a_bwd")
KC_VJP("b_bwd")
__global__ void twice(KC_IN("n") const float* x, KC_OUT("n") float* y) {}

KC_GRID("n")
KC_VJP(3)
KC_PARALLEL("n", 4)
__global__ void numbers(KC_IN("n") const float* x, KC_OUT("n") float* y) {}

KC_GRID("n")
__global__ void on_param(KC_VJP("g") KC_IN("n") const float* x, KC_OUT("n") float* y) {}
