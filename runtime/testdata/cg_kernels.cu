// Cooperative groups beyond the block: a dot product reduced per tile of 16
// with cg::reduce, and a filter that compacts the positive elements with
// one atomic per group of threads that reach it together
// (cg::coalesced_threads), a warp-aggregated atomic increment.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <kernelc.h>

namespace cg = cooperative_groups;

template <typename T>
__global__ void dot_tiles(const T* a, const T* b, int64_t n, T* result) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
  T v = 0;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)blockDim.x * gridDim.x)
    v += a[i] * b[i];
  v = cg::reduce(tile, v, cg::plus<T>());
  if (tile.thread_rank() == 0) atomicAdd(result, v);
}

// The position for this thread's element among those of the threads that
// call it together.
__device__ int aggregated_increment(int* counter) {
  cg::coalesced_group g = cg::coalesced_threads();
  int first;
  if (g.thread_rank() == 0) first = atomicAdd(counter, (int)g.size());
  return g.shfl(first, 0) + g.thread_rank();
}

__global__ void filter_positive(const float* x, int n, float* out, int* count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] > 0.0f) out[aggregated_increment(count)] = x[i];
}
