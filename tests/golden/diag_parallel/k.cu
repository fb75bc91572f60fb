#include <kernelc.h>

// A count of the whole input cannot be written slice by slice.
KC_KERNEL
KC_PARALLEL("n")
void relu_count(KC_SHAPE("n") kc::In<float, 1> x, KC_SHAPE("n") kc::Out<float, 1> y,
                KC_SHAPE("") KC_INIT(0) kc::Out<int32_t, 0> count) {}

// On a shard, n would be the shard's m times k.
KC_GRID("n")
KC_PARALLEL("m")
__global__ void flatten(KC_IN("m, k") const float* x, KC_DERIVED("x.size") int64_t n,
                        KC_OUT("n") float* out) {}

// n keeps its whole value on a shard of y.
KC_GRID("n")
KC_PARALLEL("n")
__global__ void spread(KC_IN("m") const float* x, KC_IN("n") const float* y,
                       KC_DERIVED("x.size * 2") int64_t n, KC_OUT("n") float* out) {}

// A diagonal: n cannot split both dimensions of a.
KC_KERNEL
KC_PARALLEL("n")
void diagonal(KC_SHAPE("n, n") kc::In<float, 2> a, KC_SHAPE("n") kc::Out<float, 1> d) {}

// Parallel, in place, and a derived size that sees the shard: fine.
KC_GRID("n")
KC_PARALLEL("n")
__global__ void accumulate(KC_INMUT("n") float* total, KC_IN("n") const float* d,
                           KC_DERIVED("total.size") int64_t n) {}
