__device__ void clear(float* p) { *p = 0.0f; }
KC_GRID("x.size")
__global__ void k(KC_IN("n") float* x, KC_OUT("x") float* y) {
  float* q = x + 1;
  clear(q);
  atomicAdd(&y[0], x[0]);
}
