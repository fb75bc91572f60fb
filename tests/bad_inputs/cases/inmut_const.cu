#include <kernelc.h>

KC_GRID("x.size")
__global__ void k(KC_INMUT("n") const float* x) {}
