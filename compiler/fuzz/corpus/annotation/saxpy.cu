KC_GRID("ceil_div(n, 256)") KC_BLOCK(256)
__global__ void saxpy(KC_IN("n") const float* x, KC_INMUT("x") float* y,
                      float a, KC_DERIVED("x.size") int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
