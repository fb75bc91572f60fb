#include <kernelc.h>

// A KC_IN array belongs to the caller and is immutable: each kernel here
// writes through one, directly or through a pointer derived from it.
KC_GRID("x.size")
__global__ void store(KC_IN("n") float* x, KC_OUT("n") float* y) {
  y[0] = x[0];
  x[0] = 1.0f;
}

KC_GRID("x.size")
__global__ void derived(KC_IN("n") float* x, KC_OUT("n") float* y) {
  float* p = x + 1;
  p[0] += 2.0f;
}

__device__ void clear(float* p) { *p = 0.0f; }

KC_GRID("x.size")
__global__ void callee(KC_IN("n") float* x, KC_OUT("n") float* y) {
  clear(x);
}

KC_GRID("x.size")
__global__ void atomic(KC_IN("n") float* x, KC_OUT("n") float* y) {
  atomicAdd(&x[0], 1.0f);
}

// Read only: a non-const KC_IN pointer is accepted.
KC_GRID("x.size")
__global__ void reads(KC_IN("n") float* x, KC_OUT("n") float* y) {
  const float* p = x;
  y[0] = p[0] + x[1];
}
