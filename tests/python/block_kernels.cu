// Block-level kernels through kernelc's CPU target: the battery the block
// executor's own tests run (runtime/testdata), each template instantiated
// for float and double (and 16-bit floats where a kernel computes in
// float) behind an annotated kernel. The kernels call the templates, which
// are __global__ functions themselves: a call CUDA allows only on the CPU,
// so this source is for the cpu target.
#include <kernelc.h>

#include "../../runtime/testdata/cg_kernels.cu"
#include "../../runtime/testdata/dynamic_shared.cu"
#include "../../runtime/testdata/histogram.cu"
#include "../../runtime/testdata/layernorm.cu"
#include "../../runtime/testdata/matmul.cu"
#include "../../runtime/testdata/reduce.cu"
#include "../../runtime/testdata/scan.cu"
#include "../../runtime/testdata/softmax.cu"
#include "../../runtime/testdata/transpose.cu"

// Block reductions, three ways; each block writes the sum of its
// grid-stride slice of x.
#define REDUCTIONS(T, S, BYTES)                                              \
  KC_GRID("blocks * 256") KC_BLOCK(256)                                     \
  __global__ void reduce_tree_##S(KC_IN("n") const T* x,                    \
                                  KC_DERIVED("x.size") int64_t n,           \
                                  int32_t blocks,                           \
                                  KC_OUT("blocks") T* partial) {            \
    reduce_tree<T, 256>(x, n, partial);                                     \
  }                                                                         \
  KC_GRID("blocks * 192") KC_BLOCK(192)                                     \
  __global__ void reduce_shuffle_##S(KC_IN("n") const T* x,                 \
                                     KC_DERIVED("x.size") int64_t n,        \
                                     int32_t blocks,                        \
                                     KC_OUT("blocks") T* partial) {         \
    reduce_shuffle<T>(x, n, partial);                                       \
  }                                                                         \
  KC_GRID("blocks * 128") KC_BLOCK(128) KC_SHARED_BYTES("128 * " #BYTES)     \
  __global__ void reduce_samples_##S(KC_IN("n") const T* x,                 \
                                     KC_DERIVED("x.size") int64_t n,        \
                                     int32_t blocks,                        \
                                     KC_OUT("blocks") T* partial) {         \
    reduce_samples<T>(x, n, partial);                                       \
  }
REDUCTIONS(float, f32, 4)
REDUCTIONS(double, f64, 8)

// Inclusive scans within warps (shuffles) and within blocks of 512.
#define SCANS(T, S)                                                          \
  KC_GRID("n") KC_BLOCK(128)                                                \
  __global__ void warp_scan_##S(KC_IN("n") const T* x,                      \
                                KC_DERIVED("x.size") int64_t n,             \
                                KC_OUT("x") T* out) {                       \
    warp_scan<T>(x, n, out);                                                \
  }                                                                         \
  KC_GRID("n") KC_BLOCK(512)                                                \
  __global__ void block_scan_##S(KC_IN("n") const T* x,                     \
                                 KC_DERIVED("x.size") int64_t n,            \
                                 KC_OUT("x") T* out) {                      \
    block_scan<T>(x, n, out);                                               \
  }
SCANS(float, f32)
SCANS(double, f64)
SCANS(int32_t, i32)

// C = A B through 16 x 16 tiles in shared memory.
#define MATMUL(T, S)                                                         \
  KC_GRID("n", "m") KC_BLOCK(16, 16)                                        \
  __global__ void matmul_##S(KC_IN("m, k") const T* a,                      \
                             KC_IN("k, n") const T* b,                      \
                             KC_DERIVED("a.shape[0]") int m,                \
                             KC_DERIVED("b.shape[1]") int n,                \
                             KC_DERIVED("a.shape[1]") int k,                \
                             KC_OUT("m, n") T* c) {                         \
    matmul_tiled<T, 16>(a, b, c, m, n, k);                                  \
  }
MATMUL(float, f32)
MATMUL(double, f64)

// out = in transposed, through a padded shared tile.
#define TRANSPOSE(T, S)                                                      \
  KC_GRID("ceil_div(cols, 32) * 32", "ceil_div(rows, 32) * 8")              \
  KC_BLOCK(32, 8)                                                           \
  __global__ void transpose_##S(KC_IN("rows, cols") const T* in,            \
                                KC_DERIVED("in.shape[0]") int rows,         \
                                KC_DERIVED("in.shape[1]") int cols,         \
                                KC_OUT("cols, rows") T* out) {              \
    transpose_tiled<T>(in, out, rows, cols);                                \
  }
TRANSPOSE(float, f32)
TRANSPOSE(double, f64)
TRANSPOSE(__half, f16)

// Rows of x softmaxed, a block of 128 per row; 16-bit floats computed in
// float.
#define SOFTMAX(T, A, S)                                                     \
  KC_GRID("rows * 128") KC_BLOCK(128)                                       \
  __global__ void softmax_##S(KC_IN("rows, cols") const T* x,               \
                              KC_DERIVED("x.shape[0]") int64_t rows,        \
                              KC_DERIVED("x.shape[1]") int cols,            \
                              KC_OUT("x") T* y) {                           \
    softmax_rows<T, A>(x, y, cols);                                         \
  }
SOFTMAX(float, float, f32)
SOFTMAX(double, double, f64)
SOFTMAX(__half, float, f16)
SOFTMAX(__nv_bfloat16, float, bf16)

// Layer normalization, one warp per row (four rows per block), with each
// row's mean and 1 / sigma.
#define LAYERNORM(T, S)                                                      \
  KC_GRID("ceil_div(rows, 4) * 128") KC_BLOCK(128)                          \
  __global__ void layernorm_##S(KC_IN("rows, cols") const T* x,             \
                                KC_IN("cols") const T* weight,              \
                                KC_IN("cols") const T* bias, T eps,         \
                                KC_DERIVED("x.shape[0]") int rows,          \
                                KC_DERIVED("x.shape[1]") int cols,          \
                                KC_OUT("x") T* y, KC_OUT("rows") T* mean,   \
                                KC_OUT("rows") T* rstd) {                   \
    layernorm_rows<T>(x, weight, bias, y, mean, rstd, rows, cols, eps);     \
  }
LAYERNORM(float, f32)
LAYERNORM(double, f64)

// A 256-bin histogram of bytes, shared-memory atomics per block.
KC_GRID("blocks * 256") KC_BLOCK(256)
__global__ void histogram_u8(KC_IN("n") const uint8_t* data,
                             KC_DERIVED("data.size") int64_t n, int32_t blocks,
                             KC_OUT("256") KC_INIT(0) uint32_t* bins) {
  histogram256(data, n, bins);
}

// A dot product reduced per tile of 16 (cg::reduce), and the positive
// elements compacted with warp-aggregated atomics (cg::coalesced_threads).
#define DOT(T, S)                                                            \
  KC_GRID("blocks * 128") KC_BLOCK(128)                                     \
  __global__ void dot_##S(KC_IN("n") const T* a, KC_IN("n") const T* b,     \
                          KC_DERIVED("a.size") int64_t n, int32_t blocks,   \
                          KC_OUT("") KC_INIT(0) T* result) {                \
    dot_tiles<T>(a, b, n, result);                                          \
  }
DOT(float, f32)
DOT(double, f64)

KC_GRID("n") KC_BLOCK(64)
__global__ void filter_positive_f32(KC_IN("n") const float* x,
                                    KC_DERIVED("x.size") int n,
                                    KC_OUT("n") KC_INIT(0) float* out,
                                    KC_OUT("") KC_INIT(0) int32_t* count) {
  filter_positive(x, n, out, count);
}

// Each block reverses its part of x through dynamic shared memory.
#define REVERSE(T, S, BYTES)                                                 \
  KC_GRID("n") KC_BLOCK(96) KC_SHARED_BYTES("96 * " #BYTES)                 \
  __global__ void reverse_blocks_##S(KC_IN("n") const T* x,                 \
                                     KC_DERIVED("x.size") int64_t n,        \
                                     KC_OUT("x") T* y) {                    \
    reverse_blocks<T>(x, y, n);                                             \
  }
REVERSE(float, f32, 4)
REVERSE(double, f64, 8)
