#include <kernelc.h>

// KC_SUM names its dimension as a string literal.
KC_KERNEL
KC_PARALLEL("n")
void unquoted(KC_SHAPE("n") kc::In<float, 1> x,
              KC_SHAPE("") KC_SUM(0) kc::Out<float, 0> s) {}
