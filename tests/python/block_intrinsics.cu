// Every block-level built-in of CUDA that the CPU target runs, each called
// as CUDA code calls it, with results that NumPy can predict: the block's
// votes, the warp functions (shuffles, votes, reductions, matches) with
// full and partial masks, cooperative groups' tiles, the atomics on shared
// memory within a block and on global memory across blocks, and the loads,
// stores, fences, clock and printf that CUDA code sprinkles in.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <kernelc.h>

#include <climits>

namespace cg = cooperative_groups;

// Each thread writes its block's count, and and or of x > 0 (threads past
// the end vote 0).
KC_GRID("n") KC_BLOCK(128)
__global__ void block_votes(KC_IN("n") const int32_t* x,
                            KC_DERIVED("x.size") int n,
                            KC_OUT("n, 3") int32_t* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int p = i < n && x[i] > 0;
  const int count = __syncthreads_count(p);
  const int all = __syncthreads_and(p);
  const int any = __syncthreads_or(p);
  if (i < n) {
    out[3 * i] = count;
    out[3 * i + 1] = all;
    out[3 * i + 2] = any;
  }
}

// Each lane writes what 20 warp functions give it; n is a multiple of 64.
KC_GRID("n") KC_BLOCK(64)
__global__ void warp_functions(KC_IN("n") const int32_t* x,
                               KC_DERIVED("x.size") int n,
                               KC_OUT("n, 20") int32_t* out) {
  const unsigned full = 0xffffffffu;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x % 32;
  const int v = x[i];
  const unsigned u = static_cast<unsigned>(v);
  int32_t* o = out + 20 * i;
  o[0] = __shfl_sync(full, v, (lane * 5 + 3) % 32);
  o[1] = __shfl_sync(full, v, lane + 1, 8);
  o[2] = __shfl_up_sync(full, v, 3);
  o[3] = __shfl_down_sync(full, v, 5, 16);
  o[4] = __shfl_xor_sync(full, v, 6);
  o[5] = static_cast<int32_t>(__ballot_sync(full, v > 0));
  o[6] = __any_sync(full, v > 40);
  o[7] = __all_sync(full, v > -40);
  o[8] = static_cast<int32_t>(__reduce_add_sync(full, u));
  o[9] = __reduce_min_sync(full, v);
  o[10] = __reduce_max_sync(full, v);
  o[11] = static_cast<int32_t>(__reduce_and_sync(full, u));
  o[12] = static_cast<int32_t>(__reduce_or_sync(full, u));
  o[13] = static_cast<int32_t>(__reduce_xor_sync(full, u));
  o[14] = static_cast<int32_t>(__match_any_sync(full, v & 3));
  int same = 0;
  o[15] = static_cast<int32_t>(__match_all_sync(full, v > 45, &same));
  o[16] = same;
  o[17] = static_cast<int32_t>(__activemask());
  // Each half of the warp on its own, naming only its lanes.
  const unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  o[18] = static_cast<int32_t>(__ballot_sync(half, v > 0));
  o[19] = __reduce_add_sync(half, v);
  __syncwarp();
}

// Tiles of 8 (static) and 16 (dynamic) lanes: each thread writes its
// ranks, its tile's shuffles, and cg::reduce's sum, minimum and maximum.
KC_GRID("n") KC_BLOCK(64)
__global__ void tiles(KC_IN("n") const int32_t* x, KC_DERIVED("x.size") int n,
                      KC_OUT("n, 12") int32_t* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<8> tile = cg::tiled_partition<8>(block);
  cg::thread_group sixteen = cg::tiled_partition(block, 16);
  const int i = blockIdx.x * blockDim.x + block.thread_rank();
  const int v = x[i];
  int32_t* o = out + 12 * i;
  o[0] = static_cast<int32_t>(tile.thread_rank());
  o[1] = static_cast<int32_t>(tile.meta_group_rank());
  o[2] = static_cast<int32_t>(tile.meta_group_size());
  o[3] = static_cast<int32_t>(sixteen.thread_rank());
  o[4] = static_cast<int32_t>(sixteen.num_threads());
  o[5] = static_cast<int32_t>(sixteen.size());
  o[6] = tile.shfl(v, 7 - static_cast<int>(tile.thread_rank()));
  o[7] = tile.shfl_down(v, 1);
  o[8] = tile.shfl_xor(v, 3);
  o[9] = cg::reduce(tile, v, cg::plus<int>());
  o[10] = cg::reduce(tile, v, cg::less<int>());
  o[11] = cg::reduce(tile, v, cg::greater<int>());
  sixteen.sync();
  block.sync();
}

// The integer atomics on a block's shared memory; each block writes its
// results: add, sub, min, max, and, or, xor, a CAS loop's sum, atomicInc
// and atomicDec wrapping at 9, and atomicExch's last value; each thread
// writes the value its atomicExch replaced.
KC_GRID("blocks * 256") KC_BLOCK(256)
__global__ void shared_atomics(KC_IN("blocks * 256") const int32_t* x,
                               int32_t blocks,
                               KC_OUT("blocks, 11") int32_t* results,
                               KC_OUT("blocks * 256") int32_t* exchanged) {
  __shared__ int s[6];
  __shared__ unsigned u[5];
  const int t = threadIdx.x;
  const int v = x[blockIdx.x * 256 + t];
  if (t == 0) {
    s[0] = 0, s[1] = 0, s[2] = INT_MAX, s[3] = INT_MIN, s[4] = -1, s[5] = 0;
    u[0] = ~0u, u[1] = 0, u[2] = 0, u[3] = 0, u[4] = 0;
  }
  __syncthreads();
  atomicAdd(&s[0], v);
  atomicSub(&s[1], v);
  atomicMin(&s[2], v);
  atomicMax(&s[3], v);
  atomicAnd(&u[0], static_cast<unsigned>(v));
  atomicOr(&u[1], static_cast<unsigned>(v));
  atomicXor(&u[2], static_cast<unsigned>(v));
  exchanged[blockIdx.x * 256 + t] = atomicExch(&s[4], v);
  int old = s[5], assumed;
  do {
    assumed = old;
    old = atomicCAS(&s[5], assumed, assumed + v);
  } while (assumed != old);
  atomicInc(&u[3], 9u);
  atomicDec(&u[4], 9u);
  __syncthreads();
  if (t == 0) {
    int32_t* r = results + 11 * blockIdx.x;
    r[0] = s[0], r[1] = s[1], r[2] = s[2], r[3] = s[3];
    r[4] = static_cast<int32_t>(u[0]);
    r[5] = static_cast<int32_t>(u[1]);
    r[6] = static_cast<int32_t>(u[2]);
    r[7] = s[5];
    r[8] = static_cast<int32_t>(u[3]);
    r[9] = static_cast<int32_t>(u[4]);
    r[10] = s[4];
  }
}

// The atomics on global memory, from every thread of every block, the
// blocks running at once: ints[0..3] take add, min, max and or of x;
// floats, doubles and halves the sum of x as their type.
KC_GRID("n") KC_BLOCK(128)
__global__ void global_atomics(KC_IN("n") const int32_t* x,
                               KC_DERIVED("x.size") int n,
                               KC_INMUT("4") int32_t* ints,
                               KC_INMUT("1") float* floats,
                               KC_INMUT("1") double* doubles,
                               KC_INMUT("1") __half* halves) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int v = x[i];
  atomicAdd(&ints[0], v);
  atomicMin(&ints[1], v);
  atomicMax(&ints[2], v);
  atomicOr(&ints[3], v);
  atomicAdd(floats, static_cast<float>(v));
  atomicAdd(doubles, static_cast<double>(v));
  atomicAdd(halves, __float2half(static_cast<float>(v)));
}

// y = x copied through every cache-hinted load and store, with fences
// between; clocks[i] is clock64's advance over the copy (never negative).
KC_GRID("n") KC_BLOCK(32)
__global__ void hinted_copy(KC_IN("n") const float* x,
                            KC_DERIVED("x.size") int n, KC_OUT("x") float* y,
                            KC_OUT("x") int64_t* clocks) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const long long start = clock64();
  if (i < n) {
    float v = 0;
    switch (i % 6) {
      case 0: v = __ldg(x + i); break;
      case 1: v = __ldca(x + i); break;
      case 2: v = __ldcg(x + i); break;
      case 3: v = __ldcs(x + i); break;
      case 4: v = __ldlu(x + i); break;
      default: v = __ldcv(x + i); break;
    }
    __threadfence_block();
    switch (i % 4) {
      case 0: __stwb(y + i, v); break;
      case 1: __stcg(y + i, v); break;
      case 2: __stcs(y + i, v); break;
      default: __stwt(y + i, v); break;
    }
    __threadfence();
    __threadfence_system();
    clocks[i] = clock64() - start;
  }
}

// Each block's thread 0 prints a line.
KC_GRID("blocks * 32") KC_BLOCK(32)
__global__ void hello(int32_t blocks, KC_OUT("blocks") int32_t* seen) {
  if (threadIdx.x == 0) {
    printf("hello from block %d of %d\n", blockIdx.x, gridDim.x);
    seen[blockIdx.x] = blockIdx.x;
  }
}
