// softmax: each row of x softmaxed by a block of 256 threads, a CUDA kernel
// that needs its block: every thread takes a strided part of the row, warps
// reduce with shuffles, and the warps' results meet in shared memory after
// a barrier. On the CPU it runs under kernelc's block executor, the code
// between two of its barriers and shuffles compiled as a loop over the
// block's threads; the rows spread over XLA's thread pool.
#include <kernelc.h>

#include <math.h>

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;

// The maximum (kMax) or the sum of v over the block, for every thread.
template <bool kMax>
__device__ float block_reduce(float v, float* slots) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = v;
  __syncthreads();
  v = slots[0];
  for (int w = 1; w < kWarps; ++w) v = kMax ? fmaxf(v, slots[w]) : v + slots[w];
  __syncthreads();  // the slots are used again
  return v;
}

KC_GRID("rows * 256")
KC_BLOCK(256)
__global__ void softmax(KC_IN("rows, cols") const float* x,
                        KC_DERIVED("x.shape[0]") int64_t rows,
                        KC_DERIVED("x.shape[1]") int64_t cols,
                        KC_OUT("x") float* y) {
  __shared__ float slots[kWarps];
  const float* in = x + blockIdx.x * cols;
  float* out = y + blockIdx.x * cols;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < cols; j += kBlock) m = fmaxf(m, in[j]);
  m = block_reduce<true>(m, slots);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += kBlock) sum += expf(in[j] - m);
  sum = block_reduce<false>(sum, slots);
  for (int64_t j = threadIdx.x; j < cols; j += kBlock)
    out[j] = expf(in[j] - m) / sum;
}
