#include <kernelc.h>

KC_GRID("q")
__global__ void k(KC_IN("n, m") const float* x,
                  KC_OUT("n") float* out) {}
