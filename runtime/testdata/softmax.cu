// Row softmax, one block per row, modelled on the block-per-row softmax
// kernels of llm.c (github.com/karpathy/llm.c, dev/cuda/softmax_forward.cu;
// MIT License, Copyright (c) 2024 Andrej Karpathy), written anew here: each
// thread takes a strided part of the row, warps reduce with __shfl_xor_sync,
// warp results meet in shared memory, for the maximum and then for the sum
// of exponentials. Computes in float (double for double); blockDim.x is a
// multiple of 32.
#include <kernelc.h>

template <typename A>
__device__ A warp_max(A v) {
  for (int m = 16; m > 0; m >>= 1)
    v = max(v, __shfl_xor_sync(0xffffffffu, v, m));
  return v;
}
template <typename A>
__device__ A warp_add(A v) {
  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

// The block's reduction of v, through one shared slot per warp: every
// thread gets it.
template <typename A, bool kMax>
__device__ A block_reduce(A v, A* slots) {
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned warps = blockDim.x / 32;
  v = kMax ? warp_max(v) : warp_add(v);
  if (lane == 0) slots[warp] = v;
  __syncthreads();
  A r = slots[0];
  for (unsigned w = 1; w < warps; ++w)
    r = kMax ? max(r, slots[w]) : r + slots[w];
  __syncthreads();  // the slots are reused
  return r;
}

// T is the element type, A the type it is computed in.
template <typename T, typename A>
__global__ void softmax_rows(const T* x, T* y, int cols) {
  __shared__ A slots[32];
  const T* row = x + (int64_t)blockIdx.x * cols;
  T* out = y + (int64_t)blockIdx.x * cols;
  A m = -INFINITY;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) m = max(m, A(row[j]));
  m = block_reduce<A, true>(m, slots);
  A s = 0;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) s += exp(A(row[j]) - m);
  s = block_reduce<A, false>(s, slots);
  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    out[j] = T(exp(A(row[j]) - m) / s);
}
