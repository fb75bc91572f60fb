// A kernel with an output that sums over its parallel dimension (KC_SUM),
// for the sharding tests.
#include <kernelc.h>

// The sum of each column of x: a sum over the rows n, which are parallel.
// The count of positive entries is an integer sum, beside the row-parallel
// doubled x.
KC_KERNEL
KC_PARALLEL("n")
void column_sum(KC_SHAPE("n, m") kc::In<float, 2> x,
                KC_SHAPE("m") KC_SUM("n") kc::Out<float, 1> sums,
                KC_SHAPE("") KC_SUM("n") kc::Out<int32_t, 0> positive,
                KC_SHAPE("n, m") kc::Out<float, 2> twice) {
  positive() = 0;
  for (int64_t c = 0; c < x.shape[1]; ++c) sums(c) = 0.0f;
  for (int64_t r = 0; r < x.shape[0]; ++r) {
    for (int64_t c = 0; c < x.shape[1]; ++c) {
      sums(c) += x(r, c);
      positive() += x(r, c) > 0.0f ? 1 : 0;
      twice(r, c) = 2.0f * x(r, c);
    }
  }
}

// A half-precision sum: each device writes its partial sum as a float16;
// the partial sums are added in float32, rounded once, as one kernel
// summing all rows would round its float sum.
KC_KERNEL
KC_PARALLEL("n")
void half_sum(KC_SHAPE("n") kc::In<__half, 1> x,
              KC_SHAPE("") KC_SUM("n") kc::Out<__half, 0> total) {
  float s = 0.0f;
  for (int64_t r = 0; r < x.shape[0]; ++r) s += __half2float(x(r));
  total() = __float2half(s);
}
