// Kernels for the GPU tests of launch features: KC_INIT of every element
// width (1-, 2-, 4- and 8-byte fills, 8-byte values whose halves differ),
// a block reduction with __shared__ memory and __syncthreads (GPU only),
// a tiny op for the command-buffer loop, and a 2-D grid over y beyond 1.
#include <kernelc.h>

#include <cuda_fp16.h>

KC_GRID("n")
__global__ void fills(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n,
                      KC_OUT("n") KC_INIT(3) int8_t* i8,
                      KC_OUT("n") KC_INIT(-2) int16_t* i16,
                      KC_OUT("n") KC_INIT(1.5) __half* f16,
                      KC_OUT("n") KC_INIT(2.25) float* f32,
                      KC_OUT("n") KC_INIT(-1) int64_t* i64,
                      KC_OUT("n") KC_INIT(0.1) double* f64) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  // Only even elements are written: the odd ones keep the fill.
  if (i < n && i % 2 == 0) {
    i8[i] = 0;
    i16[i] = 0;
    f16[i] = __float2half(x[i]);
    f32[i] = x[i];
    i64[i] = 0;
    f64[i] = x[i];
  }
}

// Sums each row of x with one block per row: shared memory and barriers.
KC_GRID("rows * 256")
KC_BLOCK(256)
__global__ void row_sum(KC_SHAPE("rows, cols") kc::In<float, 2> x,
                        KC_SHAPE("rows") KC_INIT(0) kc::Out<float, 1> out) {
  __shared__ float partial[256];
  const int64_t row = blockIdx.x;
  float acc = 0.0f;
  for (int64_t c = threadIdx.x; c < x.shape[1]; c += blockDim.x)
    acc += x(row, c);
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[row] = partial[0];
}

// A tiny op: one add per element, for loops of many calls.
KC_GRID("n")
__global__ void add_one(KC_INMUT("n") float* x, KC_DERIVED("x.size") int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

// A 2-D grid: the y axis runs over rows (more than one block along y).
KC_GRID("m.shape[1]", "m.shape[0]")
KC_BLOCK(32, 8)
__global__ void transpose(KC_SHAPE("r, c") kc::In<float, 2> m,
                          KC_SHAPE("c, r") kc::Out<float, 2> t) {
  int64_t col = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int64_t row = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
  if (row < m.shape[0] && col < m.shape[1]) t(col, row) = m(row, col);
}

// Reverses each block of 256 elements (fewer in the last block) through
// dynamic shared memory.
KC_GRID("n")
KC_BLOCK(256)
KC_SHARED_BYTES("256 * 4")
__global__ void block_reverse(KC_IN("n") const float* x,
                              KC_DERIVED("x.size") int64_t n,
                              KC_OUT("x") float* out) {
  extern __shared__ float buf[];
  const int64_t base = blockIdx.x * (int64_t)blockDim.x;
  const int64_t count = n - base < blockDim.x ? n - base : blockDim.x;
  if (threadIdx.x < count) buf[threadIdx.x] = x[base + threadIdx.x];
  __syncthreads();
  if (threadIdx.x < count)
    out[base + threadIdx.x] = buf[count - 1 - threadIdx.x];
}

// Dynamic shared memory sized by a scalar: above 48 KiB the runtime must
// raise the kernel's limit first. out = x + 1, read through `words` floats.
KC_GRID("n")
KC_BLOCK(256)
KC_SHARED_BYTES("words * 4")
__global__ void big_shared(KC_IN("n") const float* x, int64_t words,
                           KC_DERIVED("x.size") int64_t n,
                           KC_OUT("x") float* out) {
  extern __shared__ float buf[];
  for (int64_t j = threadIdx.x; j < words; j += blockDim.x) buf[j] = 1.0f;
  __syncthreads();
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + buf[words - 1 - threadIdx.x % words];
}
