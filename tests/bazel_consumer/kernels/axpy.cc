// out = a * x + y + AXPY_OFFSET, a host kernel over whole tensors.
#include <kernelc.h>

KC_KERNEL void axpy(KC_SHAPE("n") kc::In<float, 1> x,
                    KC_SHAPE("n") kc::In<float, 1> y, float a,
                    KC_SHAPE("n") kc::Out<float, 1> out) {
  for (int64_t i = 0; i < x.size(); ++i) out(i) = a * x(i) + y(i) + AXPY_OFFSET;
}
