#include <kernelc.h>

KC_GRID("out.size")
__global__ void k(KC_IN("1.5") const float* x,
                  KC_OUT("x") float* out) {}
