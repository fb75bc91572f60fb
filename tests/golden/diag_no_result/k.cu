#include <kernelc.h>

// Nothing is returned: an op needs a KC_OUT or KC_INMUT tensor.
KC_GRID("x.size")
__global__ void log_only(KC_IN("n") const float* x, int64_t flag) {}

// Only KC_INMUT: the mutated tensor is the op's result.
KC_GRID("x.size")
__global__ void scale(KC_INMUT("n") float* x, float a) {}
