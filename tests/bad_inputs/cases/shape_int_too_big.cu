#include <kernelc.h>

KC_GRID("out.size")
__global__ void k(KC_IN("99999999999999999999") const float* x,
                  KC_OUT("x") float* out) {}
