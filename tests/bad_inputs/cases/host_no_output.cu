#include <kernelc.h>

KC_KERNEL void k(KC_IN("n") const float* x, int64_t n) {}
