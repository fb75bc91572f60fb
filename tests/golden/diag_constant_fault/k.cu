#include <kernelc.h>

KC_GRID("ceil_div(x.size, 0)")
__global__ void k(KC_IN("n") const float* x,
                  KC_OUT("n * (9223372036854775807 + 1)") float* y,
                  KC_OUT("n / (4 - 4), 2") float* z) {}
