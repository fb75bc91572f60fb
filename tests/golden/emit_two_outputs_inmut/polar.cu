// polar: two outputs from one kernel (radius and angle of 2-D points), and an
// in-place update of a running count.
#include <kernelc.h>

#include <math.h>

KC_GRID("n")
__global__ void polar(KC_IN("n") const float* x,
                      KC_IN("n") const float* y,
                      KC_DERIVED("x.size") int64_t n,
                      KC_OUT("n") float* radius,
                      KC_OUT("n") float* angle) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  radius[i] = sqrtf(x[i] * x[i] + y[i] * y[i]);
  angle[i] = atan2f(y[i], x[i]);
}

KC_GRID("total.size")
__global__ void accumulate(KC_INMUT("n") float* total,
                           KC_IN("n") const float* delta,
                           KC_DERIVED("total.size") int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) total[i] += delta[i];
}
