#include <kernelc.h>

KC_GRID("x.size / 0")
__global__ void k(KC_IN("n, m") const float* x,
                  KC_OUT("n") float* out) {}
