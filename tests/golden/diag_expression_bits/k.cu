#include <kernelc.h>

// C's integer syntax in annotations: what it refuses, and where.
KC_GRID("x.size << 64")
__global__ void k(KC_IN("n") const float* x, float scale, int32_t s,
                  KC_OUT("n & (uint64_t)-1") float* a,
                  KC_OUT("(int)n | scale") float* b,
                  KC_OUT("n >> (char)s") float* c,
                  KC_OUT("n & 010") float* d) {}
