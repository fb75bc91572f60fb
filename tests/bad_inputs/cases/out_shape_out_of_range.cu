#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(KC_IN("n, m") const float* x,
                  KC_OUT("x.shape[5]") float* out) {}
