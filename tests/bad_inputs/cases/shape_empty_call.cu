#include <kernelc.h>

KC_GRID("out.size")
__global__ void k(KC_IN("max()") const float* x,
                  KC_OUT("x") float* out) {}
