#include <kernelc.h>

KC_GRID("a")
__global__ void k(KC_IN("n") const float* x,
                  KC_DERIVED("b + 1") int64_t a,
                  KC_DERIVED("a * x.size") int64_t b,
                  KC_OUT("n") float* out) {}
