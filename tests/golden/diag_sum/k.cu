#include <kernelc.h>

// m is not parallel: a sum over it is not added across shards.
KC_KERNEL
KC_PARALLEL("n")
void row_sum(KC_SHAPE("n, m") kc::In<float, 2> x,
             KC_SHAPE("n") KC_SUM("m") kc::Out<float, 1> s) {}

// s has n: each device writes its slice of it, which is no sum over n.
KC_KERNEL
KC_PARALLEL("n")
void sliced(KC_SHAPE("n, m") kc::In<float, 2> x,
            KC_SHAPE("n") KC_SUM("n") kc::Out<float, 1> s) {}

// An in-place output's initial value would be added once per device.
KC_KERNEL
KC_PARALLEL("n")
void in_place(KC_SHAPE("n") KC_SUM("n") kc::InMut<float, 1> x) {}

// A bool has no sum.
KC_KERNEL
KC_PARALLEL("n")
void any_positive(KC_SHAPE("n") kc::In<float, 1> x,
                  KC_SHAPE("") KC_SUM("n") kc::Out<bool, 0> s) {}

// A column sum over the parallel rows: fine.
KC_KERNEL
KC_PARALLEL("n")
void column_sum(KC_SHAPE("n, m") kc::In<float, 2> x,
                KC_SHAPE("m") KC_SUM("n") kc::Out<float, 1> s) {}
