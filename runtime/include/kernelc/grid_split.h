// Spreading the blocks of a launch over a thread pool: the ranges of blocks
// (kc_block_range) that a handler hands to a kernel's CPU entry point, how
// many pool threads run them besides the caller, and the run itself
// (RunSplitLaunch, in the prebuilt runtime, over kc::rt::ParallelFor of
// kernelc/batch.h). Dependency-free, like batch.h; the pool is the
// caller's (XLA's, through a kc_pool, in generated code).
#ifndef KERNELC_GRID_SPLIT_H_
#define KERNELC_GRID_SPLIT_H_

#include <stdint.h>

#include "kernelc/launch.h"

namespace kc::rt {

// The fewest threads of a launch (blocks times threads per block) that make
// handing blocks to another OS thread pay, per OS thread. Waking a sleeping
// pool thread takes 3 to 20 us (bench/cpu_blocks on the 2-core development
// machine), so each thread's share should take about as long: 32 Ki threads
// of an elementwise kernel in the plain loop (half a nanosecond to a few per
// thread: a saxpy of 64 Ki elements ran 1.8 times as fast on two threads, of
// 16 Ki no faster), 256 under the block executor (a hundred nanoseconds and
// more per thread: a softmax of 4 rows of 128 threads ran 1.6 times as fast,
// of 2 rows no faster). A launch with less than twice this runs on the
// calling thread. Splitting early costs little: the caller claims ranges
// too, and never waits for a pool thread that has not started.
constexpr uint64_t kMinLoopThreadsPerWorker = uint64_t{1} << 15;
constexpr uint64_t kMinFiberThreadsPerWorker = uint64_t{1} << 8;
// Ranges per OS thread: threads that finish early take more, so uneven
// blocks (or a busy pool thread) do not hold the launch up; and a range
// maps its share of the outputs' pages just before it writes them
// (RunSplitLaunch), so the smaller the share, the more of the freshly
// zeroed pages are still in the caches when the kernel writes them (a
// saxpy over 16M floats on two threads: 16 ranges per thread some 5 %
// faster than 4).
constexpr int64_t kRangesPerWorker = 16;

// How one launch is split: `ranges` ranges of `range_blocks` consecutive
// blocks (the last one shorter), run by the caller and `helpers` pool
// tasks.
struct GridSplit {
  kc_launch launch{};
  uint64_t blocks = 0;
  uint64_t range_blocks = 0;
  int64_t ranges = 0;
  int64_t helpers = 0;

  // The blocks of range `i`, each with `shared_bytes` of dynamic shared
  // memory.
  kc_block_range Range(int64_t i, uint64_t shared_bytes) const {
    const uint64_t begin = static_cast<uint64_t>(i) * range_blocks;
    const uint64_t end =
        begin + range_blocks < blocks ? begin + range_blocks : blocks;
    return kc_block_range{launch, begin, end, shared_bytes};
  }
};

// Splits `launch` for a pool of `pool_threads` threads (0: the calling
// thread runs everything). `block_kernel`: the kernel runs under the block
// executor. At most `pool_threads` OS threads run the launch, the caller
// among them: XLA sizes its pool to the machine's cores, and the caller is
// a thread more, so one more would share a core with another, and a range
// that a descheduled thread holds would hold up the whole call.
inline GridSplit SplitGrid(const kc_launch& launch, bool block_kernel,
                           int64_t pool_threads) {
  GridSplit s;
  s.launch = launch;
  s.blocks =
      static_cast<uint64_t>(launch.grid.x) * launch.grid.y * launch.grid.z;
  const uint64_t threads =
      s.blocks * launch.block.x * launch.block.y * launch.block.z;
  const uint64_t per_worker =
      block_kernel ? kMinFiberThreadsPerWorker : kMinLoopThreadsPerWorker;
  uint64_t workers = threads / per_worker;
  const uint64_t most =
      pool_threads > 1 ? static_cast<uint64_t>(pool_threads) : 1;
  if (workers > most) workers = most;
  if (workers > s.blocks) workers = s.blocks;
  if (workers <= 1) {
    s.range_blocks = s.blocks;
    s.ranges = s.blocks > 0 ? 1 : 0;
    return s;
  }
  uint64_t ranges = workers * static_cast<uint64_t>(kRangesPerWorker);
  if (ranges > s.blocks) ranges = s.blocks;
  s.range_blocks = (s.blocks + ranges - 1) / ranges;
  s.ranges =
      static_cast<int64_t>((s.blocks + s.range_blocks - 1) / s.range_blocks);
  s.helpers = static_cast<int64_t>(workers) - 1;
  return s;
}

// Whether SplitGrid keeps `launch` on the calling thread whatever the
// pool's size: it has fewer than twice the threads that make a hand-off
// pay.
inline bool StaysOnCaller(const kc_launch& launch, bool block_kernel) {
  const uint64_t threads = static_cast<uint64_t>(launch.grid.x) *
                           launch.grid.y * launch.grid.z * launch.block.x *
                           launch.block.y * launch.block.z;
  const uint64_t per_worker =
      block_kernel ? kMinFiberThreadsPerWorker : kMinLoopThreadsPerWorker;
  return threads < 2 * per_worker;
}

// Every block of `launch`, as one range.
inline kc_block_range WholeLaunch(const kc_launch& launch,
                                  uint64_t shared_bytes) {
  const uint64_t blocks =
      static_cast<uint64_t>(launch.grid.x) * launch.grid.y * launch.grid.z;
  return kc_block_range{launch, 0, blocks, shared_bytes};
}

// A kernel's CPU entry as the runtime calls it for a range: `args` is the
// caller's record of the kernel's arguments. 0, or non-zero with the reason
// in the kc_error.
using RangeEntry = int32_t (*)(const kc_block_range* range, kc_error* error,
                               const void* args);

// Runs every block of `launch` through `entry(range, error, args)`, each
// with `shared_bytes` of dynamic shared memory: split as SplitGrid splits
// it for `pool` (`pool_threads`: its size, or -1 to ask it), the ranges run
// by the calling thread and by tasks handed to the pool, which claim them
// in turn; or on the calling thread alone where SplitGrid leaves one range.
// Returns 0, or non-zero with the message of the first range to fail in
// `error` (cut to fit). Once one has failed, the ranges not yet started are
// skipped: the launch has failed anyway. Returns when every range has run;
// a task that starts later finds nothing to run and reads nothing of the
// caller's. Prebuilt (libkernelc_runtime.a): a handler runs a launch that
// stays on its thread itself (StaysOnCaller, WholeLaunch), and calls this
// only for one large enough to split.
//
// `outputs` (`output_count` of them) are the buffers the kernel writes
// that nothing wrote before it: freshly allocated memory, whose pages the
// kernel's first writes would fault in one at a time. Each range first
// has the operating system map its share of them in one call (Linux's
// MADV_POPULATE_WRITE, from 5.14; elsewhere nothing), so the pages are
// made on the threads that run the launch, several at a time, without a
// fault each. It changes no byte: a page is mapped as a write would map
// it, and only whole pages inside the buffers are asked for.
int32_t RunSplitLaunch(const kc_launch& launch, bool block_kernel,
                       uint64_t shared_bytes, int64_t pool_threads,
                       const kc_pool& pool, RangeEntry entry, const void* args,
                       const kc_span* outputs, int32_t output_count,
                       kc_error* error);

}  // namespace kc::rt

#endif  // KERNELC_GRID_SPLIT_H_
