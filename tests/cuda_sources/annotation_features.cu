// The annotations real kernels need: scalars that change every step
// (KC_TRACED), an optional bias (KC_OPTIONAL), tensors of any rank ("..."),
// grids counted in blocks (KC_BLOCKS), macros in annotation expressions with
// the integer syntax they carry, and the math macros.
#include <kernelc.h>

#define ELEMS_PER_THREAD 4
#define THREADS (1u << 7)
#define TILE ((int)16UL)

// One AdamW-style update; lr and the bias correction change every step.
KC_GRID("n")
KC_ELEMENTWISE
__global__ void sgd_step(KC_INMUT("n") float* p, KC_IN("n") const float* g,
                         KC_TRACED float lr, KC_TRACED float correction,
                         float weight_decay, KC_DERIVED("p.size") int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) p[i] -= lr * (g[i] / correction + weight_decay * p[i]);
}

// y = x w (+ bias): bias may be None.
KC_BLOCKS("(n + TILE - 1) / TILE", "(m + TILE - 1) / TILE")
KC_BLOCK("TILE", "TILE")
__global__ void linear(KC_IN("m, k") const float* x,
                       KC_IN("k, n") const float* w,
                       KC_OPTIONAL KC_IN("n") const float* bias,
                       KC_DERIVED("x.shape[0]") int m,
                       KC_DERIVED("x.shape[1]") int k,
                       KC_DERIVED("w.shape[1]") int n,
                       KC_OUT("m, n") float* y) {
  int col = blockIdx.x * TILE + threadIdx.x;
  int row = blockIdx.y * TILE + threadIdx.y;
  if (row >= m || col >= n) return;
  float acc = bias != NULL ? bias[col] : 0.0f;
  for (int j = 0; j < k; ++j) acc += x[row * k + j] * w[j * n + col];
  y[row * n + col] = acc;
}

// tanh-approximated GELU of a tensor of any rank, ELEMS_PER_THREAD
// elements per thread.
KC_BLOCKS("(x.size + ELEMS_PER_THREAD * THREADS - 1) / (ELEMS_PER_THREAD * THREADS)")
KC_BLOCK("THREADS")
__global__ void gelu(KC_IN("...") const float* x, KC_OUT("x") float* y,
                     KC_DERIVED("x.size") int64_t n) {
  int64_t i = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) *
              ELEMS_PER_THREAD;
  for (int e = 0; e < ELEMS_PER_THREAD && i + e < n; ++e) {
    float v = x[i + e];
    float c = sqrtf(2.0f / (float)M_PI);
    y[i + e] = 0.5f * v * (1.0f + tanhf(c * (v + 0.044715f * v * v * v)));
  }
}

// Each row (the last dimension) divided by its maximum; any number of
// leading dimensions. Rows whose values are all -inf give NAN.
KC_GRID("rows")
__global__ void row_max_normalize(KC_IN("..., c") const float* x,
                                  KC_DERIVED("x.size / c") int64_t rows,
                                  KC_DERIVED("c") int64_t width,
                                  KC_OUT("..., c") float* y) {
  int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float m = -INFINITY;
  for (int64_t j = 0; j < width; ++j) m = fmaxf(m, x[r * width + j]);
  for (int64_t j = 0; j < width; ++j)
    y[r * width + j] = m == -INFINITY ? NAN : x[r * width + j] / m;
}

// The math macros the CPU's <math.h> gives, the same under NVRTC.
KC_GRID("1")
__global__ void math_constants(KC_OUT("8") float* f, KC_OUT("2") double* d) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  f[0] = (float)M_PI;
  f[1] = M_PIf;
  f[2] = (float)M_SQRT2;
  f[3] = (float)M_E;
  f[4] = INFINITY;
  f[5] = -HUGE_VALF;
  f[6] = NAN;
  f[7] = (float)M_LN2;
  d[0] = M_PI;
  d[1] = HUGE_VAL;
}
