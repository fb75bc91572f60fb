// Block reductions, three ways: a shared-memory tree, warp shuffles, and the
// cooperative-groups form of NVIDIA's CUDA samples. Each block writes the
// sum of its grid-stride slice of x to partial[blockIdx.x].
#include <cooperative_groups.h>
#include <kernelc.h>

namespace cg = cooperative_groups;

// The classic tree: halve the active threads each step, a barrier between
// steps. BLOCK is a power of two.
template <typename T, int BLOCK>
__global__ void reduce_tree(const T* x, int64_t n, T* partial) {
  __shared__ T sums[BLOCK];
  const unsigned t = threadIdx.x;
  T v = 0;
  for (int64_t i = blockIdx.x * (int64_t)BLOCK + t; i < n;
       i += (int64_t)BLOCK * gridDim.x)
    v += x[i];
  sums[t] = v;
  __syncthreads();
  for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) sums[t] += sums[t + s];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = sums[0];
}

template <typename T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Warps reduce with shuffles; one shared slot per warp; the first warp
// reduces the slots. Any block size that is a multiple of 32.
template <typename T>
__global__ void reduce_shuffle(const T* x, int64_t n, T* partial) {
  __shared__ T warp_sums[32];
  const unsigned t = threadIdx.x;
  const unsigned lane = t % 32, warp = t / 32;
  T v = 0;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + t; i < n;
       i += (int64_t)blockDim.x * gridDim.x)
    v += x[i];
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? warp_sums[lane] : T(0);
    v = warp_sum(v);
    if (lane == 0) partial[blockIdx.x] = v;
  }
}

// Modelled on reduce4 to reduce6 of NVIDIA's CUDA samples
// (github.com/NVIDIA/cuda-samples, Samples/2_Concepts_and_Techniques/
// reduction/reduction_kernel.cu; BSD-3-Clause, Copyright NVIDIA
// Corporation), written anew here: each thread adds two elements per
// stride, dynamic shared memory reached through a typed view of one
// `extern __shared__` array, a tree down to 64 values, then the first warp
// finishes with a tile's shfl_down. The block size is a power of two of at
// least 64; the dynamic shared memory holds blockDim.x values.
template <typename T>
struct SharedArray {
  __device__ operator T*() {
    extern __shared__ unsigned char reduce_smem[];
    return reinterpret_cast<T*>(reduce_smem);
  }
};

template <typename T>
__global__ void reduce_samples(const T* x, int64_t n, T* partial) {
  cg::thread_block block = cg::this_thread_block();
  T* sdata = SharedArray<T>();
  const unsigned tid = threadIdx.x;
  const unsigned size = blockDim.x;
  const int64_t stride = (int64_t)size * 2 * gridDim.x;
  T sum = 0;
  for (int64_t i = blockIdx.x * (int64_t)size * 2 + tid; i < n; i += stride) {
    sum += x[i];
    if (i + size < n) sum += x[i + size];
  }
  sdata[tid] = sum;
  cg::sync(block);
  for (unsigned s = size / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];
    cg::sync(block);
  }
  cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(block);
  if (block.thread_rank() < 32) {
    sum += sdata[tid + 32];
    for (int offset = tile32.size() / 2; offset > 0; offset /= 2)
      sum += tile32.shfl_down(sum, offset);
  }
  if (block.thread_rank() == 0) partial[blockIdx.x] = sum;
}
