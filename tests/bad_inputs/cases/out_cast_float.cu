#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(KC_IN("n") const float* x,
                  KC_OUT("(double)n / 2") float* out) {}
