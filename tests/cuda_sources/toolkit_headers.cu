// A CUDA source written against the toolkit's own headers, which only a
// CUDA compiler reads: cooperative groups, CUB and cuda::std. It builds for
// the cuda target alone, whose frontend reads it as CUDA device code.
#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cuda/std/limits>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <kernelc.h>

namespace cg = cooperative_groups;

constexpr int kBlock = 256;

// Sums of x per block of 256 elements, in float, scaled by a bfloat16 and
// rounded to half.
KC_GRID("x.size")
KC_BLOCK(256)
__global__ void block_sums(KC_IN("n") const __half* x,
                           KC_IN("") const __nv_bfloat16* scale,
                           KC_DERIVED("x.size") int64_t n,
                           KC_OUT("ceil_div(n, 256)") __half* sums) {
  using Reduce = cub::BlockReduce<float, kBlock>;
  __shared__ typename Reduce::TempStorage storage;
  cg::thread_block block = cg::this_thread_block();
  const int64_t i = blockIdx.x * (int64_t)kBlock + threadIdx.x;
  const float v = i < n ? __half2float(x[i]) : 0.0f;
  const float total = Reduce(storage).Sum(v);
  block.sync();
  if (threadIdx.x == 0) {
    const float s = total * __bfloat162float(scale[0]);
    sums[blockIdx.x] = __float2half(
        s > cuda::std::numeric_limits<float>::max() ? 0.0f : s);
  }
}
