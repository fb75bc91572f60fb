// Kernels whose guard bounds their threads by exactly the grid's total, so
// that the CPU runs only the threads below the bound (sema's guard
// elision), each beside a twin whose grid kernelc cannot prove equal to the
// bound ("n + 0"), which runs every thread of every block and the guard.
#include <kernelc.h>

// One body, two grids: each kernel and its twin are the same code.
#define ADD_ONE(name, grid)                                                  \
  KC_GRID(grid)                                                              \
  __global__ void name(KC_IN("n") const float* x,                            \
                       KC_DERIVED("x.size") int64_t n, KC_OUT("x") float* out) { \
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;              \
    if (i < n) out[i] = x[i] + 1.0f;                                         \
  }
ADD_ONE(add_one, "n")
ADD_ONE(add_one_padded, "n + 0")

// A 32-bit index and an early return.
#define SAXPY(name, grid)                                                    \
  KC_GRID(grid)                                                              \
  KC_BLOCK(128)                                                              \
  __global__ void name(KC_IN("n") const float* x, KC_IN("n") const float* y, \
                       float a, KC_DERIVED("x.size") int32_t n,              \
                       KC_OUT("x") float* out) {                             \
    int i = blockIdx.x * blockDim.x + threadIdx.x;                           \
    if (i >= n) return;                                                      \
    out[i] = a * x[i] + y[i];                                                \
  }
SAXPY(saxpy, "out.size")
SAXPY(saxpy_padded, "out.size + 0")

// Elementwise: a vmap folds the batch into one launch.
KC_GRID("n")
KC_ELEMENTWISE
__global__ void twice_plus(KC_IN("n") const double* x, KC_IN("n") const double* y,
                           KC_DERIVED("x.size") int64_t n, KC_OUT("x") double* out) {
  uint64_t i = threadIdx.x + blockIdx.x * (uint64_t)blockDim.x;
  if (n > i) out[i] = 2.0 * x[i] + y[i];
}

// Every thread counts itself before its guard: nothing may be elided, and
// the threads of the last block past n run too.
// Each thread's own block and thread index: blocks of a power of two
// threads run as one loop over all threads, which must still give each
// thread its own; blocks of 96 run one loop per block.
#define WHERE(name, block)                                                   \
  KC_GRID("n")                                                               \
  KC_BLOCK(block)                                                            \
  __global__ void name(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n, \
                       KC_OUT("x") int32_t* out) {                           \
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;              \
    if (i < n) out[i] = blockIdx.x * 1024 + threadIdx.x;                     \
  }
WHERE(where, 256)
WHERE(where_96, 96)

KC_GRID("n")
__global__ void count_threads(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n,
                              KC_OUT("1") KC_INIT(0) int32_t* count) {
  atomicAdd(count, 1);
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) return;
}
