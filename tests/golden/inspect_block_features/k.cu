#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <kernelc.h>

namespace cg = cooperative_groups;

KC_GRID("out.size * 128")
KC_BLOCK(128)
KC_SHARED_BYTES("128 * 4")
__global__ void block_sum(KC_IN("n") const float* x,
                          KC_OUT("ceil_div(n, 128)") float* out) {
  extern __shared__ float partial[];
  partial[threadIdx.x] = x[blockIdx.x * 128 + threadIdx.x];
  __syncthreads();
  cg::thread_block_tile<32> tile =
      cg::tiled_partition<32>(cg::this_thread_block());
  const float v = cg::reduce(tile, partial[threadIdx.x], cg::plus<float>());
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
