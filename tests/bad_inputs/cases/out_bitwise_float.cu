#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(KC_IN("n") const float* x, float mask,
                  KC_OUT("n & ~mask") float* out) {}
