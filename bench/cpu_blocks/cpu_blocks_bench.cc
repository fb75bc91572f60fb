// Micro-benchmark of the CPU target's grid execution (kernelc/cpu_exec.h,
// kernelc/grid_split.h), for choosing how generated handlers run a launch:
//
//  1. an elementwise kernel over 16M floats in the plain loop: the loop over
//     a range of blocks against the whole-grid loop that generated entries
//     had before (runtime ABI 2), then the grid split over 1..N OS threads,
//     and where splitting starts to pay as the grid grows;
//  2. a block-level kernel, a row softmax with warp reductions, under the
//     block executor: its cost per block against the same softmax as a
//     plain C++ loop, the split over N threads, and where that starts to
//     pay; and what a barrier (one or two per round) and a shuffle cost per
//     thread;
//  3. the memory a 1024-thread block costs an OS thread.
//
// It prints times and ratios. Build and run it as kernelc builds kernels:
//   bazel run -c opt //bench/cpu_blocks:cpu_blocks_bench
// or with clang, which compiles generated libraries:
//   clang++-19 -std=c++17 -O3 -fPIC -D__KERNELC_HOST__ -I. -Iruntime/include \
//     -Iruntime/host_include bench/cpu_blocks/cpu_blocks_bench.cc \
//     runtime/src/block_exec.cc runtime/src/handler_runtime.cc \
//     /usr/lib/x86_64-linux-gnu/libboost_context.a \
//     -lpthread -o /tmp/cpu_blocks_bench && /tmp/cpu_blocks_bench
// Pass a thread count to use other than the machine's.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "runtime/std_pool.h"
#include "runtime/testdata/softmax.cu"

namespace {

using kc::testing::RunLaunch;
using kc::testing::StdPool;

// Seconds of the fastest of `reps` runs of f.
template <typename F>
double Best(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

// The kernels, as sources compiled for the CPU define them.
__global__ void saxpy(const float* x, const float* y, float a, int64_t n,
                      float* out) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}

// A block of threads that only meet at barriers.
__global__ void barriers(int rounds, int* sink) {
  __shared__ int s[1024];
  int v = threadIdx.x;
  for (int r = 0; r < rounds; ++r) {
    s[threadIdx.x] = v;
    __syncthreads();
    v += s[(threadIdx.x + 1) % blockDim.x];
  }
  if (threadIdx.x == 0) sink[blockIdx.x] = v;
}

// The same, with two barriers per round: each thread that arrives at one
// switches to a thread that waits at the other, a return the processor
// does not predict (block_exec.cc, Worker::Jump).
__global__ void two_barriers(int rounds, int* sink) {
  __shared__ int s[1024];
  int v = threadIdx.x;
  for (int r = 0; r < rounds; r += 2) {
    s[threadIdx.x] = v;
    __syncthreads();
    v += s[(threadIdx.x + 1) % blockDim.x];
    __syncthreads();
  }
  if (threadIdx.x == 0) sink[blockIdx.x] = v;
}

// Warps that only meet in shuffles.
__global__ void shuffles(int rounds, int* sink) {
  int v = threadIdx.x;
  for (int r = 0; r < rounds; ++r)
    v += __shfl_xor_sync(0xffffffffu, v, r & 31);
  if (threadIdx.x == 0) sink[blockIdx.x] = v;
}

}  // namespace

// The whole-grid loop of a generated CPU entry before ranges of blocks
// (runtime ABI 2), for comparison.
extern "C" KC_HOST_CLONES_ void kc_bench_saxpy_whole_grid(
    const kc_launch* launch, const float* x, const float* y, float a, int64_t n,
    float* out) {
  using ::kc::host::Index;
  ::kc::host::GridState& state = ::kc::host::grid_state;
  const kc_dim3 grid = launch->grid;
  const kc_dim3 block = launch->block;
  state.grid_dim = {Index(grid.x), Index(grid.y), Index(grid.z)};
  state.block_dim = {Index(block.x), Index(block.y), Index(block.z)};
  for (uint32_t bz = 0; bz < grid.z; ++bz) {
    state.block.z = Index(bz);
    for (uint32_t by = 0; by < grid.y; ++by) {
      state.block.y = Index(by);
      for (uint32_t bx = 0; bx < grid.x; ++bx) {
        state.block.x = Index(bx);
        for (uint32_t tz = 0; tz < block.z; ++tz) {
          state.thread.z = Index(tz);
          for (uint32_t ty = 0; ty < block.y; ++ty) {
            state.thread.y = Index(ty);
            for (uint32_t tx = 0; tx < block.x; ++tx) {
              state.thread.x = Index(tx);
              saxpy(x, y, a, n, out);
            }
          }
        }
      }
    }
  }
}

// The entry of the plain loop over a range of blocks, as kernelc
// generates it (kernelc/cpu_exec.h).
extern "C" KC_HOST_CLONES_ void kc_bench_saxpy_range(const kc_block_range* r,
                                                     const float* x,
                                                     const float* y, float a,
                                                     int64_t n, float* out) {
  kc::host::RunThreadLoop(r->launch, r->block_begin, r->block_end,
                          [&]() KC_HOST_INLINE_ { saxpy(x, y, a, n, out); });
}

namespace {

// Calls the callable `context` with an index, for kc::rt::ParallelFor.
template <typename Run>
void Call(void* context, int64_t i) {
  (*static_cast<const Run*>(context))(i);
}

// Runs `launch` split for `pool` (null: the calling thread), each range
// through `entry`.
template <typename Entry>
void Split(const kc_launch& launch, bool block_kernel, StdPool* pool,
           const Entry& entry) {
  const kc::rt::GridSplit split = kc::rt::SplitGrid(
      launch, block_kernel, pool != nullptr ? pool->num_threads() : 0);
  const auto run = [&](int64_t i) { entry(split.Range(i, 0)); };
  kc::rt::ParallelFor(split.ranges, split.helpers,
                      kc::testing::AsPool(pool), Call<decltype(run)>,
                      const_cast<void*>(static_cast<const void*>(&run)));
}

// As Split, but with every range of `threads_per_worker` threads of work
// allowed: the cut-off itself is what is measured.
template <typename Entry>
void SplitEvenly(const kc_launch& launch, StdPool* pool, const Entry& entry) {
  const uint64_t blocks = launch.grid.x;
  const int64_t workers = pool->num_threads() + 1;
  const int64_t ranges =
      std::min<int64_t>(static_cast<int64_t>(blocks), 4 * workers);
  const uint64_t per = (blocks + ranges - 1) / ranges;
  const int64_t count = static_cast<int64_t>((blocks + per - 1) / per);
  const auto run = [&](int64_t i) {
    const uint64_t b = static_cast<uint64_t>(i) * per;
    entry(kc_block_range{launch, b, std::min(blocks, b + per), 0});
  };
  kc::rt::ParallelFor(count, std::min<int64_t>(workers - 1, count - 1),
                      kc::testing::AsPool(pool), Call<decltype(run)>,
                      const_cast<void*>(static_cast<const void*>(&run)));
}

// What handing work to a pool thread costs: from Schedule to the task
// running, on a pool thread that has gone to sleep (the median of many).
void HandOff(int threads) {
  if (threads < 2) return;
  StdPool pool(1);
  std::vector<double> waits;
  for (int r = 0; r < 201; ++r) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    std::atomic<bool> ran{false};
    std::chrono::steady_clock::time_point started;
    const auto t0 = std::chrono::steady_clock::now();
    pool.Schedule([&] {
      started = std::chrono::steady_clock::now();
      ran = true;
    });
    while (!ran) {
    }
    waits.push_back(std::chrono::duration<double>(started - t0).count());
  }
  std::sort(waits.begin(), waits.end());
  printf(
      "== 0. hand-off: a sleeping pool thread starts a task %.1f us after "
      "Schedule (median)\n\n",
      waits[waits.size() / 2] * 1e6);
}

void ElementwiseKernel(int threads) {
  printf("== 1. saxpy over 16M floats, blocks of 256 (plain loop)\n");
  const int64_t n = int64_t{1} << 24;
  std::vector<float> x(n, 1.5f), y(n, 2.0f), out(n);
  const kc_launch launch{{static_cast<uint32_t>(n / 256), 1, 1}, {256, 1, 1}};
  const int reps = 7;
  const kc_block_range all{launch, 0, launch.grid.x, 0};
  // Alternately, so that a busy machine slows both alike.
  double whole = 1e30, range = 1e30;
  for (int r = 0; r < 3 * reps; ++r) {
    whole = std::min(whole, Best(1, [&] {
                       kc_bench_saxpy_whole_grid(&launch, x.data(), y.data(),
                                                 3.0f, n, out.data());
                     }));
    range = std::min(range, Best(1, [&] {
                       kc_bench_saxpy_range(&all, x.data(), y.data(), 3.0f, n,
                                            out.data());
                     }));
  }
  printf("whole-grid loop (ABI 2 entry):  %8.2f ms\n", whole * 1e3);
  printf(
      "range loop, one range:           %8.2f ms  (%.3fx the whole-grid "
      "loop's time)\n",
      range * 1e3, range / whole);
  auto entry = [&](const kc_block_range& r) {
    kc_bench_saxpy_range(&r, x.data(), y.data(), 3.0f, n, out.data());
  };
  for (int t = 2; t <= threads; t *= 2) {
    StdPool pool(t - 1);
    const double split =
        Best(reps, [&] { Split(launch, false, &pool, entry); });
    printf("split over %2d threads:          %8.2f ms  (speed-up %.2fx)\n", t,
           split * 1e3, range / split);
  }
  if (threads > 1) {
    StdPool pool(threads - 1);
    printf(
        "grid size where %d threads start to pay (split evenly, "
        "ratio = one thread's time / %d threads'):\n",
        threads, threads);
    for (int64_t m = int64_t{1} << 12; m <= (int64_t{1} << 22); m *= 4) {
      const kc_launch l{{static_cast<uint32_t>(m / 256), 1, 1}, {256, 1, 1}};
      auto e = [&](const kc_block_range& r) {
        kc_bench_saxpy_range(&r, x.data(), y.data(), 3.0f, m, out.data());
      };
      const kc_block_range r{l, 0, l.grid.x, 0};
      const double one = Best(201, [&] { e(r); });
      const double many = Best(201, [&] { SplitEvenly(l, &pool, e); });
      printf("  %9lld threads: %9.1f us alone, %9.1f us split, ratio %.2f\n",
             static_cast<long long>(m), one * 1e6, many * 1e6, one / many);
    }
  }
}

void SoftmaxReference(const float* x, float* y, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float* row = x + static_cast<int64_t>(r) * cols;
    float* out = y + static_cast<int64_t>(r) * cols;
    float m = -INFINITY;
    for (int j = 0; j < cols; ++j) m = std::max(m, row[j]);
    float s = 0;
    for (int j = 0; j < cols; ++j) s += expf(row[j] - m);
    for (int j = 0; j < cols; ++j) out[j] = expf(row[j] - m) / s;
  }
}

void BlockKernel(int threads) {
  printf(
      "\n== 2. row softmax, a block of 128 threads per row (block "
      "executor)\n");
  const int reps = 5;
  for (const int cols : {128, 1024, 8192}) {
    const int rows = std::max(64, (1 << 21) / cols);
    std::vector<float> x(static_cast<size_t>(rows) * cols), y(x.size());
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97);
    const kc_launch launch{{static_cast<uint32_t>(rows), 1, 1}, {128, 1, 1}};
    const kc_block_range all{launch, 0, static_cast<uint64_t>(rows), 0};
    kc_error error;
    const double fibers = Best(reps, [&] {
      kc::host::RunBlocks(all, "softmax", &error, [&] {
        softmax_rows<float, float>(x.data(), y.data(), cols);
      });
    });
    const double plain =
        Best(reps, [&] { SoftmaxReference(x.data(), y.data(), rows, cols); });
    printf(
        "%5d rows x %5d: %7.2f us per block, plain C++ loop %7.2f us per "
        "row: %.2fx\n",
        rows, cols, fibers / rows * 1e6, plain / rows * 1e6, fibers / plain);
    if (cols == 1024) {
      for (int t = 2; t <= threads; t *= 2) {
        StdPool pool(t - 1);
        auto entry = [&](const kc_block_range& r) {
          kc::host::RunBlocks(r, "softmax", &error, [&] {
            softmax_rows<float, float>(x.data(), y.data(), cols);
          });
        };
        const double split =
            Best(reps, [&] { Split(launch, true, &pool, entry); });
        printf("  split over %2d threads: %8.2f ms (speed-up %.2fx)\n", t,
               split * 1e3, fibers / split);
      }
    }
  }
  std::vector<int> sink(4096);
  for (const uint32_t block : {32u, 256u, 1024u}) {
    const int rounds = 64;
    const uint32_t blocks = 16;
    const kc_launch launch{{blocks, 1, 1}, {block, 1, 1}};
    kc_error error;
    const double t = Best(reps, [&] {
      kc::host::RunBlocks(kc_block_range{launch, 0, blocks, 0}, "barriers",
                          &error, [&] { barriers(rounds, sink.data()); });
    });
    printf("__syncthreads in blocks of %4u: %6.1f ns per thread and barrier\n",
           block, t / (double(blocks) * block * rounds) * 1e9);
    const double two = Best(reps, [&] {
      kc::host::RunBlocks(kc_block_range{launch, 0, blocks, 0}, "two_barriers",
                          &error, [&] { two_barriers(rounds, sink.data()); });
    });
    printf("two __syncthreads per round:     %6.1f ns per thread and barrier\n",
           two / (double(blocks) * block * rounds) * 1e9);
    const double s = Best(reps, [&] {
      kc::host::RunBlocks(kc_block_range{launch, 0, blocks, 0}, "shuffles",
                          &error, [&] { shuffles(rounds, sink.data()); });
    });
    printf("__shfl_xor_sync in blocks of %4u: %6.1f ns per thread and call\n",
           block, s / (double(blocks) * block * rounds) * 1e9);
  }
  if (threads > 1) {
    StdPool pool(threads - 1);
    const int cols = 256;
    std::vector<float> x(size_t{1} << 20), y(x.size());
    printf(
        "grid size where %d threads start to pay (softmax rows of %d, "
        "split evenly):\n",
        threads, cols);
    for (int rows = 2; rows <= 256; rows *= 2) {
      const kc_launch l{{static_cast<uint32_t>(rows), 1, 1}, {128, 1, 1}};
      kc_error error;
      auto e = [&](const kc_block_range& r) {
        kc::host::RunBlocks(r, "softmax", &error, [&] {
          softmax_rows<float, float>(x.data(), y.data(), cols);
        });
      };
      const double one = Best(101, [&] {
        e(kc_block_range{l, 0, l.grid.x, 0});
      });
      const double many = Best(101, [&] { SplitEvenly(l, &pool, e); });
      printf(
          "  %6d threads (%3d blocks): %8.1f us alone, %8.1f us split, "
          "ratio %.2f\n",
          rows * 128, rows, one * 1e6, many * 1e6, one / many);
    }
  }
}

// The process's resident memory now, from /proc.
long ResidentKiB() {
  long pages = 0, resident = 0;
  FILE* f = fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

void Memory() {
  printf("\n== 3. memory of a 1024-thread block\n");
  // On a thread of its own, so that nothing else shares its peak.
  std::thread([] {
    std::vector<int> sink(1);
    const long before = ResidentKiB();
    kc_error error;
    const kc_launch launch{{1, 1, 1}, {1024, 1, 1}};
    kc::host::RunBlocks(kc_block_range{launch, 0, 1, 0}, "barriers", &error,
                        [&] { barriers(4, sink.data()); });
    const long after = ResidentKiB();
    printf("resident memory grew by %ld KiB (%.1f KiB per thread)\n",
           after - before, (after - before) / 1024.0);
  }).join();
}

}  // namespace

int main(int argc, char** argv) {
  const int threads =
      argc > 1 ? atoi(argv[1])
               : static_cast<int>(std::thread::hardware_concurrency());
  printf("threads: %d\n", threads);
  HandOff(threads);
  ElementwiseKernel(threads);
  BlockKernel(threads);
  Memory();
  return 0;
}
