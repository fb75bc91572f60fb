#include <cooperative_groups.h>
#include <kernelc.h>

namespace cg = cooperative_groups;

// A grid-wide barrier between two phases: the CPU target runs blocks a few
// at a time, so it reports the call; the rest of the kernel would run.
KC_GRID("n")
KC_BLOCK(128)
__global__ void two_phases(KC_IN("n") const float* x,
                           KC_DERIVED("x.size") int64_t n,
                           KC_OUT("x") float* out) {
  __shared__ float tile[128];
  cg::grid_group grid = cg::this_grid();
  const int64_t i = grid.thread_rank();
  tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  grid.sync();
  if (i < n) out[i] = tile[127 - threadIdx.x];
}
