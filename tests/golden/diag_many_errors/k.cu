#include <kernelc.h>

struct Options { int level; };

KC_GRID("n")
__global__ void first(KC_IN("n") const char* text, Options opts,
                      KC_OUT("n") const float* out) {}

KC_KERNEL int second(KC_SHAPE("n") kc::In<float, 1> x, KC_IN("n") float a) {
  return 0;
}
