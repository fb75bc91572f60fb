// A CUDA source that only a CUDA compiler reads: cooperative groups' warp
// tiles and cg::reduce, the warp reduction intrinsic __reduce_add_sync
// (sm_80 and newer) and cache-hinted loads and stores on float. It builds
// for the cuda target alone, whose frontend reads it as CUDA device code.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda/std/limits>
#include <kernelc.h>

namespace cg = cooperative_groups;

// Per warp of 32 consecutive elements of x: their sum, minimum and maximum,
// and how many of their flags are set; `copy` is x, streamed through.
KC_GRID("x.size")
KC_BLOCK(128)
__global__ void warp_stats(KC_IN("n") const float* x,
                           KC_IN("n") const int32_t* flags,
                           KC_DERIVED("x.size") int64_t n,
                           KC_OUT("ceil_div(n, 32)") float* sums,
                           KC_OUT("ceil_div(n, 32)") float* mins,
                           KC_OUT("ceil_div(n, 32)") float* maxs,
                           KC_OUT("ceil_div(n, 32)") int32_t* counts,
                           KC_OUT("x") float* copy) {
  using limits = cuda::std::numeric_limits<float>;
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  const bool in = i < n;
  // Read once: evict-first loads.
  const float v = in ? __ldcs(&x[i]) : 0.0f;
  const int32_t flag = in ? __ldcs(&flags[i]) : 0;
  // Every lane of the warp takes part, those past the end with values that
  // change nothing.
  const float sum = cg::reduce(warp, v, cg::plus<float>());
  const float lo =
      cg::reduce(warp, in ? v : limits::infinity(), cg::less<float>());
  const float hi =
      cg::reduce(warp, in ? v : -limits::infinity(), cg::greater<float>());
  const unsigned count = __reduce_add_sync(0xffffffffu, flag != 0 ? 1u : 0u);
  if (in) __stcs(&copy[i], v);
  const int64_t w =
      blockIdx.x * (int64_t)warp.meta_group_size() + warp.meta_group_rank();
  if (warp.thread_rank() == 0 && w * 32 < n) {
    __stcs(&sums[w], sum);
    __stcg(&mins[w], lo);
    __stwt(&maxs[w], hi);
    counts[w] = static_cast<int32_t>(count);
  }
}
