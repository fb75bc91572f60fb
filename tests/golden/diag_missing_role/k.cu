#include <kernelc.h>

KC_GRID("n")
__global__ void k(const float* x, KC_DERIVED("x.size") int64_t n,
                  KC_OUT("x") float* out) {}
