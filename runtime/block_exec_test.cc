// The block executor (kernelc/cpu_exec.h) and the block-level CUDA
// functions of kernelc/block.h and the cooperative-groups stand-ins:
// each intrinsic against CUDA's documented semantics (masks, widths,
// lanes out of range), the errors a kernel's misuse gives, blocks running
// concurrently on several OS threads, atomics, printf and clock64.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

// clang-format off: after the C++ library's headers, since kernelc/host.h
// defines CUDA's __noinline__, which libstdc++ spells in its attributes.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
// clang-format on

#include "runtime/std_pool.h"

namespace cg = cooperative_groups;

namespace {

using kc::testing::RunLaunch;
using kc::testing::StdPool;

constexpr unsigned kFull = 0xffffffffu;

// Runs the blocks of `grid` x `block` on this thread; returns the error
// message, or "" on success.
template <typename Thread>
std::string Run(kc_dim3 block, const Thread& thread, kc_dim3 grid = {1, 1, 1},
                uint64_t shared_bytes = 0) {
  const kc_launch launch{grid, block};
  const uint64_t blocks = static_cast<uint64_t>(grid.x) * grid.y * grid.z;
  kc_error error;
  const kc_block_range range{launch, 0, blocks, shared_bytes};
  return kc::host::RunBlocks(range, "k", &error, thread) == 0 ? ""
                                                              : error.message;
}

unsigned Lane() { return threadIdx.x % 32; }
unsigned Rank() {
  return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

// The lane whose value a shuffle returns, as CUDA's documentation states it
// for `width`, a power of two up to 32: __shfl_sync reads srcLane modulo
// width within the caller's group of width lanes; __shfl_up_sync and
// __shfl_down_sync leave the value unchanged when the source lies outside
// the group; __shfl_xor_sync reads earlier groups but not later ones.
enum class Mode { kIdx, kUp, kDown, kXor };
int SourceLane(Mode mode, int lane, int arg, int width) {
  const int group = lane / width * width;
  switch (mode) {
    case Mode::kIdx:
      return group + ((arg % width) + width) % width;
    case Mode::kUp:
      return lane - group >= arg ? lane - arg : lane;
    case Mode::kDown:
      return lane - group + arg < width ? lane + arg : lane;
    case Mode::kXor: {
      const int j = lane ^ arg;
      return j / width > lane / width ? lane : j;
    }
  }
  return -1;
}

TEST_CASE("shuffles follow CUDA's lanes, widths and groups", "[intrinsics]") {
  const Mode mode = GENERATE(Mode::kIdx, Mode::kUp, Mode::kDown, Mode::kXor);
  const int width = GENERATE(32, 16, 8, 4, 2, 1);
  std::vector<int> args;
  if (mode == Mode::kIdx) args = {0, 1, 5, 17, 31, 40, -1, -7};
  if (mode == Mode::kUp || mode == Mode::kDown) args = {0, 1, 2, 5, width};
  if (mode == Mode::kXor) args = {0, 1, 3, 8, 16, 31};
  for (const int arg : args) {
    std::vector<int> got(64, -1);
    REQUIRE(
        Run({64, 1, 1}, [&] {
          const int v = 1000 + static_cast<int>(Rank());
          int r = 0;
          switch (mode) {
            case Mode::kIdx:
              r = __shfl_sync(kFull, v, arg, width);
              break;
            case Mode::kUp:
              r = __shfl_up_sync(kFull, v, static_cast<unsigned>(arg), width);
              break;
            case Mode::kDown:
              r = __shfl_down_sync(kFull, v, static_cast<unsigned>(arg), width);
              break;
            case Mode::kXor:
              r = __shfl_xor_sync(kFull, v, arg, width);
              break;
          }
          got[Rank()] = r;
        }) == "");
    for (int t = 0; t < 64; ++t) {
      INFO("mode " << static_cast<int>(mode) << " width " << width << " arg "
                   << arg << " thread " << t);
      CHECK(got[t] ==
            1000 + t / 32 * 32 + SourceLane(mode, t % 32, arg, width));
    }
  }
}

TEST_CASE("shuffles move values of any size", "[intrinsics]") {
  struct Triple {
    double a, b, c;
  };
  std::vector<double> d(32);
  std::vector<long long> ll(32);
  std::vector<Triple> tr(32);
  std::vector<float> h(32);
  REQUIRE(
      Run({32, 1, 1}, [&] {
        const unsigned lane = Lane();
        d[lane] = __shfl_down_sync(kFull, lane + 0.5, 1);
        ll[lane] = __shfl_xor_sync(kFull, (1LL << 40) + lane, 1);
        tr[lane] = __shfl_sync(kFull, Triple{1.0 * lane, 2.0, 3.0}, 31 - lane);
        h[lane] = float(__shfl_up_sync(kFull, __half(lane * 0.25f), 2));
      }) == "");
  for (unsigned l = 0; l < 32; ++l) {
    CHECK(d[l] == (l < 31 ? l + 1.5 : l + 0.5));
    CHECK(ll[l] == (1LL << 40) + (l ^ 1));
    CHECK(tr[l].a == 31.0 - l);
    CHECK(h[l] == (l >= 2 ? (l - 2) * 0.25f : l * 0.25f));
  }
}

TEST_CASE("masks: separate groups of one warp, absent and partial lanes",
          "[intrinsics]") {
  SECTION("two halves shuffle apart") {
    std::vector<int> got(32);
    REQUIRE(Run({32, 1, 1}, [&] {
              const unsigned lane = Lane();
              const unsigned mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
              // Lane 20 is outside the lower half's mask: a lower lane that
              // reads it keeps its own value (CUDA leaves it undefined).
              got[lane] = __shfl_sync(mask, static_cast<int>(lane) * 10,
                                      lane < 16 ? 20 : 19, 32);
            }) == "");
    for (int l = 0; l < 32; ++l) CHECK(got[l] == (l < 16 ? l * 10 : 190));
  }
  SECTION("a block of 40 threads has a last warp of 8 lanes") {
    std::vector<int> down(40);
    std::vector<unsigned> ballot(40), active(40);
    std::vector<int> all(40);
    REQUIRE(Run({40, 1, 1}, [&] {
              const unsigned t = Rank();
              down[t] = __shfl_down_sync(kFull, static_cast<int>(t), 4);
              ballot[t] = __ballot_sync(kFull, 1);
              all[t] = __all_sync(kFull, 1);
              active[t] = __activemask();
            }) == "");
    for (int t = 0; t < 40; ++t) {
      CHECK(ballot[t] == (t < 32 ? kFull : 0xffu));
      CHECK(active[t] == (t < 32 ? kFull : 0xffu));
      CHECK(all[t] == 1);
      const int lane = t % 32, present = t < 32 ? 32 : 8;
      CHECK(down[t] == (lane + 4 < present ? t + 4 : t));
    }
  }
}

TEST_CASE("ballot, any and all over a mask", "[intrinsics]") {
  std::vector<unsigned> ballot(32);
  std::vector<int> any(32), all(32), any_none(32), all_in(32);
  REQUIRE(Run({32, 1, 1}, [&] {
            const unsigned lane = Lane();
            ballot[lane] = __ballot_sync(kFull, lane % 3 == 0);
            any[lane] = __any_sync(kFull, lane == 17);
            any_none[lane] = __any_sync(kFull, 0);
            all[lane] = __all_sync(kFull, lane != 9);
            if (lane % 2 == 0)
              all_in[lane] = __all_sync(0x55555555u, lane % 2 == 0);
          }) == "");
  unsigned want = 0;
  for (unsigned l = 0; l < 32; l += 3) want |= 1u << l;
  for (unsigned l = 0; l < 32; ++l) {
    CHECK(ballot[l] == want);
    CHECK(any[l] == 1);
    CHECK(any_none[l] == 0);
    CHECK(all[l] == 0);
    if (l % 2 == 0) CHECK(all_in[l] == 1);
  }
}

TEST_CASE("match_any and match_all compare bits", "[intrinsics]") {
  std::vector<unsigned> any(32), same(32), differ(32);
  std::vector<unsigned> zeros(32);
  std::vector<int> pred_same(32), pred_differ(32);
  REQUIRE(Run({32, 1, 1}, [&] {
            const unsigned lane = Lane();
            any[lane] = __match_any_sync(kFull, lane / 4);
            // -0.0f and 0.0f are equal as floats, not as bits.
            zeros[lane] = __match_any_sync(kFull, lane < 16 ? 0.0f : -0.0f);
            same[lane] = __match_all_sync(kFull, 7LL, &pred_same[lane]);
            differ[lane] = __match_all_sync(kFull, lane == 5 ? 1.0 : 2.0,
                                            &pred_differ[lane]);
          }) == "");
  for (unsigned l = 0; l < 32; ++l) {
    CHECK(any[l] == 0xfu << (l / 4 * 4));
    CHECK(zeros[l] == (l < 16 ? 0x0000ffffu : 0xffff0000u));
    CHECK(same[l] == kFull);
    CHECK(pred_same[l] == 1);
    CHECK(differ[l] == 0u);
    CHECK(pred_differ[l] == 0);
  }
}

TEST_CASE("__reduce_*_sync over full and partial masks", "[intrinsics]") {
  std::vector<int> add(32), mn(32), mx(32);
  std::vector<unsigned> uadd(32), umax(32), band(32), bor(32), bxor(32);
  REQUIRE(Run({32, 1, 1}, [&] {
            const unsigned lane = Lane();
            const int v = static_cast<int>(lane) - 10;
            add[lane] = __reduce_add_sync(kFull, v);
            mn[lane] = __reduce_min_sync(kFull, v);
            mx[lane] = __reduce_max_sync(kFull, v);
            uadd[lane] = __reduce_add_sync(kFull, 0x80000000u);  // wraps
            band[lane] = __reduce_and_sync(kFull, ~(1u << lane));
            bor[lane] = __reduce_or_sync(kFull, 1u << lane);
            bxor[lane] = __reduce_xor_sync(kFull, lane);
            if (lane % 8 == 1)
              umax[lane] = __reduce_max_sync(0x02020202u, lane * 3);
          }) == "");
  for (unsigned l = 0; l < 32; ++l) {
    CHECK(add[l] == 496 - 320);
    CHECK(mn[l] == -10);
    CHECK(mx[l] == 21);
    CHECK(uadd[l] == 0u);
    CHECK(band[l] == 0u);
    CHECK(bor[l] == kFull);
    CHECK(bxor[l] == 0u);
    if (l % 8 == 1) CHECK(umax[l] == 75u);
  }
}

TEST_CASE("__activemask: the lanes that reach a call together",
          "[intrinsics]") {
  std::vector<unsigned> got(64, 0);
  // Not inside a macro's arguments, where every call has the location of
  // the macro.
  const std::string error = Run({64, 1, 1}, [&] {
    const unsigned t = Rank(), lane = Lane();
    if (t >= 32 && lane >= 20) return;  // gone before the call
    if (lane % 3 == 0) {
      got[t] = __activemask();
    } else {
      got[t] = __activemask();
    }
  });
  REQUIRE(error == "");
  unsigned thirds = 0;
  for (unsigned l = 0; l < 32; l += 3) thirds |= 1u << l;
  for (unsigned t = 0; t < 64; ++t) {
    const unsigned lane = t % 32;
    if (t >= 32 && lane >= 20) continue;
    const unsigned present = t < 32 ? kFull : 0xfffffu;
    CHECK(got[t] == ((lane % 3 == 0 ? thirds : ~thirds) & present));
  }
}

TEST_CASE("__syncwarp orders a warp's shared memory", "[intrinsics]") {
  std::vector<int> got(32);
  REQUIRE(Run({32, 1, 1}, [&] {
            __shared__ int s[32];
            const unsigned lane = Lane();
            s[lane] = static_cast<int>(lane);
            __syncwarp();
            const int whole = s[31 - lane];
            __syncwarp();
            // Each half on its own.
            const unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
            s[lane] = 100 + static_cast<int>(lane);
            __syncwarp(half);
            got[lane] = whole * 1000 + s[lane ^ 15];
          }) == "");
  for (int l = 0; l < 32; ++l)
    CHECK(got[l] == (31 - l) * 1000 + 100 + (l ^ 15));
}

TEST_CASE("block barriers and their reductions", "[barriers]") {
  std::vector<int> count(256), all(256), any(256), all_true(256), none(256);
  std::vector<int> exchange(256);
  REQUIRE(Run({256, 1, 1}, [&] {
            __shared__ int s[256];
            const unsigned t = Rank();
            count[t] = __syncthreads_count(t < 100);
            all[t] = __syncthreads_and(t < 100);
            any[t] = __syncthreads_or(t == 255);
            all_true[t] = __syncthreads_and(1);
            none[t] = __syncthreads_or(0);
            s[t] = static_cast<int>(t);
            // Barriers at different call sites are the same barrier.
            if (t % 2) {
              __syncthreads();
            } else {
              __syncthreads();
            }
            exchange[t] = s[255 - t];
          }) == "");
  for (int t = 0; t < 256; ++t) {
    CHECK(count[t] == 100);
    CHECK(all[t] == 0);
    CHECK(any[t] == 1);
    CHECK(all_true[t] == 1);
    CHECK(none[t] == 0);
    CHECK(exchange[t] == 255 - t);
  }
}

TEST_CASE("a block of 1024 threads in three dimensions", "[barriers]") {
  std::vector<unsigned> got(1024), sums(1024);
  REQUIRE(Run({8, 8, 16}, [&] {
            __shared__ unsigned s[1024];
            const unsigned t = Rank();
            s[t] = threadIdx.x + 100 * threadIdx.y + 10000 * threadIdx.z;
            __syncthreads();
            got[t] = s[1023 - t];
            unsigned v = t;
            for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
            sums[t] = v;
          }) == "");
  for (unsigned t = 0; t < 1024; ++t) {
    const unsigned o = 1023 - t;
    CHECK(got[t] == o % 8 + 100 * (o / 8 % 8) + 10000 * (o / 64));
    const unsigned w = t / 32 * 32;
    CHECK(sums[t] == 32 * w + 496);
  }
}

TEST_CASE("errors name the kernel, the block and the threads", "[errors]") {
  SECTION("a block over the limit") {
    CHECK(Run({2048, 1, 1}, [] {}) ==
          "k: a block of 2048 threads (2048, 1, 1) is more than the 1024 "
          "threads a block may have");
  }
  SECTION("too much dynamic shared memory") {
    CHECK(Run(
              {32, 1, 1}, [] {}, {1, 1, 1},
              kc::host::kMaxDynamicSharedBytes + 1) ==
          "k: 232449 bytes of dynamic shared memory per block is more than "
          "the CPU target's limit of 232448");
  }
  SECTION("a mask without the calling lane") {
    CHECK(Run({32, 1, 1}, [] { __syncwarp(1u); }) ==
          "k: block (0, 0, 0): thread (1, 0, 0) calls __syncwarp with mask "
          "0x00000001, which does not name its own lane 1");
  }
  SECTION("a barrier against a warp function") {
    CHECK(Run({32, 1, 1},
              [] {
                if (Lane() == 0) {
                  __syncthreads();
                } else {
                  __shfl_sync(kFull, 1, 0);
                }
              }) ==
          "k: block (0, 0, 0): threads wait for each other: thread "
          "(0, 0, 0) waits at __syncthreads, and thread (1, 0, 0) waits "
          "in __shfl_sync with mask 0xffffffff; a barrier waits for every "
          "thread of the block that has not returned, a warp function for "
          "every lane it names that has not returned, each making the same "
          "call");
  }
  SECTION("lanes in different warp functions") {
    CHECK(Run({32, 1, 1},
              [] {
                if (Lane() % 2 == 0) {
                  __ballot_sync(kFull, 1);
                } else {
                  __any_sync(kFull, 1);
                }
              }) ==
          "k: block (0, 0, 0): threads wait for each other: thread "
          "(0, 0, 0) waits in __ballot_sync with mask 0xffffffff, and "
          "thread (1, 0, 0) waits in __any_sync with mask 0xffffffff; a "
          "barrier waits for every thread of the block that has not "
          "returned, a warp function for every lane it names that has not "
          "returned, each making the same call");
  }
  SECTION("a tile size the CPU target lacks") {
    CHECK(Run({32, 1, 1},
              [] {
                cg::thread_group g =
                    cg::tiled_partition(cg::this_thread_block(), 3);
                g.sync();
              }) ==
          "k: block (0, 0, 0): cooperative_groups::tiled_partition: "
          "the CPU target has tiles of 1, 2, 4, 8, 16 or 32 threads");
  }
}

TEST_CASE("threads that return leave barriers to the others", "[barriers]") {
  // As on GPUs since Volta: a barrier waits for the threads that have not
  // returned, and a warp function for the lanes it names that have not.
  std::vector<int> counts(64, -1);
  CHECK(Run({64, 1, 1},
            [&] {
              if (threadIdx.x % 5 == 0) return;
              counts[threadIdx.x] = __syncthreads_count(threadIdx.x < 32);
              if (threadIdx.x > 60) return;
              __syncthreads();
              counts[threadIdx.x] += __syncthreads_count(1);
            }) == "");
  int returned = 0;
  for (int t = 0; t < 64; ++t) {
    if (t % 5 == 0) {
      ++returned;
      CHECK(counts[t] == -1);
    } else {
      // 25 of threads 0..31 voted; 48 of threads 0..60 are left after the
      // second return.
      CHECK(counts[t] == (t > 60 ? 25 : 25 + 48));
    }
  }
  CHECK(returned == 13);
  SECTION("a lane returns while a warp function waits for it") {
    std::vector<unsigned> ballots(64);
    CHECK(Run({32, 2, 1},
              [&] {
                if (threadIdx.y == 1 && Lane() >= 30) return;
                ballots[Rank()] = __ballot_sync(kFull, 1);
              }) == "");
    CHECK(ballots[0] == kFull);
    CHECK(ballots[32] == 0x3fffffffu);
    CHECK(ballots[61] == 0x3fffffffu);
  }
  SECTION("a warp function names a lane that returned before it") {
    std::vector<int> got(32, -1);
    CHECK(Run({32, 1, 1},
              [&] {
                if (Lane() == 0) return;
                // Lane 0 is gone: a shuffle from it reads the caller's own
                // value (undefined on a GPU), the others' are as ever.
                got[Lane()] = __shfl_sync(kFull, Lane(), Lane() == 1 ? 0 : 2);
              }) == "");
    CHECK(got[1] == 1);
    CHECK(got[5] == 2);
    CHECK(got[0] == -1);
  }
}

TEST_CASE("a failing block ends its range; the thread runs blocks again",
          "[errors]") {
  std::atomic<int> ran{0};
  CHECK(Run({32, 1, 1},
            [&] {
              if (threadIdx.x == 0) ++ran;
              if (blockIdx.x == 2 && threadIdx.x == 7) __syncwarp(kFull);
              __syncthreads();
            },
            {5, 1, 1}) ==
        "k: block (2, 0, 0): threads wait for each other: thread (0, 0, 0) "
        "waits at __syncthreads, and thread (7, 0, 0) waits in __syncwarp "
        "with mask 0xffffffff; a barrier waits for every thread of the "
        "block that has not returned, a warp function for every lane it "
        "names that has not returned, each making the same call");
  CHECK(ran == 3);
  std::vector<int> got(64);
  CHECK(Run({64, 1, 1}, [&] {
          __syncthreads();
          got[Rank()] = __syncthreads_count(1);
        }) == "");
  CHECK(std::count(got.begin(), got.end(), 64) == 64);
}

TEST_CASE("after a failed block, threads that returned and threads "
          "abandoned both run the next",
          "[errors]") {
  // Threads 0..15 return (their fibers wait for the next block); 16..31
  // wait for each other and are abandoned (theirs start afresh).
  CHECK(Run({32, 1, 1}, [&] {
          if (threadIdx.x < 16) return;
          if (threadIdx.x == 20) __syncwarp(0xffff0000u);
          __syncthreads();
        }).find("threads wait for each other") != std::string::npos);
  std::vector<unsigned> sums(64);
  CHECK(Run(
            {32, 1, 1},
            [&] {
              __syncthreads();
              unsigned v = Lane();
              for (int o = 16; o > 0; o >>= 1)
                v += __shfl_xor_sync(kFull, v, o);
              sums[blockIdx.x * 32 + Lane()] = __syncthreads_count(1) + v;
            },
            {2, 1, 1}) == "");
  for (unsigned t = 0; t < 64; ++t) CHECK(sums[t] == 32 + 496);
}

TEST_CASE("a barrier lets its waiters go on in thread order", "[barriers]") {
  // Odd threads yield first, so they reach the barrier after the even
  // ones; the last to arrive goes straight on, then the others in thread
  // order. 1000 threads: a partial last warp, every word of the waiters.
  std::vector<int> order;
  REQUIRE(Run({1000, 1, 1}, [&] {
            if (threadIdx.x % 2 == 1) __nanosleep(0);
            __syncthreads();
            order.push_back(static_cast<int>(threadIdx.x));
          }) == "");
  REQUIRE(order.size() == 1000);
  CHECK(order[0] == 999);
  for (int i = 1; i < 1000; ++i) CHECK(order[i] == i - 1);
}

TEST_CASE("outside the executor each function acts for one thread",
          "[intrinsics]") {
  CHECK(__shfl_sync(kFull, 42, 7) == 42);
  CHECK(__shfl_down_sync(kFull, 3.5, 1) == 3.5);
  CHECK(__ballot_sync(kFull, 1) == 1u);
  CHECK(__all_sync(kFull, 1) == 1);
  CHECK(__activemask() == 1u);
  CHECK(__syncthreads_count(1) == 1);
  CHECK(__reduce_add_sync(kFull, 5) == 5);
  __syncwarp();
  __syncthreads();
  __nanosleep(10);
}

TEST_CASE("cooperative groups: ranks, sizes and tiles", "[cg]") {
  struct Seen {
    unsigned block_rank, block_size, rank4, meta4, metas4, rank_dyn, size_dyn,
        meta_dyn, ballot4, match4;
    int all4;
    unsigned long long grid_rank, grid_size, grid_block;
  };
  std::vector<Seen> seen(6 * 48);
  REQUIRE(Run({12, 4, 1},
              [&] {
                cg::thread_block block = cg::this_thread_block();
                cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
                cg::thread_block_tile<4> t4 = cg::tiled_partition<4>(warp);
                cg::thread_group dyn = cg::tiled_partition(block, 8);
                cg::grid_group grid = cg::this_grid();
                Seen s;
                s.block_rank = block.thread_rank();
                s.block_size = block.size();
                s.rank4 = t4.thread_rank();
                s.meta4 = t4.meta_group_rank();
                s.metas4 = t4.meta_group_size();
                s.rank_dyn = static_cast<unsigned>(dyn.thread_rank());
                s.size_dyn = static_cast<unsigned>(dyn.size());
                s.meta_dyn = dyn.meta_group_rank();
                s.ballot4 = t4.ballot(t4.thread_rank() % 2 == 1);
                s.match4 = t4.match_any(t4.thread_rank() / 2);
                s.all4 = t4.all(1);
                s.grid_rank = grid.thread_rank();
                s.grid_size = grid.size();
                s.grid_block = grid.block_rank();
                dyn.sync();
                t4.sync();
                block.sync();
                seen[grid.thread_rank()] = s;
              },
              {3, 2, 1}) == "");
  for (unsigned g = 0; g < 6 * 48; ++g) {
    const Seen& s = seen[g];
    const unsigned r = g % 48;
    INFO("grid rank " << g);
    CHECK(s.grid_rank == g);
    CHECK(s.grid_size == 6u * 48);
    CHECK(s.grid_block == g / 48);
    CHECK(s.block_rank == r);
    CHECK(s.block_size == 48u);
    CHECK(s.rank4 == r % 4);
    CHECK(s.meta4 == (r % 32) / 4);
    CHECK(s.metas4 == 8u);
    CHECK(s.rank_dyn == r % 8);
    CHECK(s.size_dyn == 8u);
    CHECK(s.meta_dyn == r / 8);
    CHECK(s.ballot4 == 0xau);
    CHECK(s.match4 == (s.rank4 < 2 ? 0x3u : 0xcu));
    CHECK(s.all4 == 1);
  }
}

TEST_CASE("cooperative groups: collectives of tiles and coalesced groups",
          "[cg]") {
  std::vector<int> sum8(32), max16(32), incl(32), excl(32), up(32), down(32),
      shfl(32), coalesced_rank(32), coalesced_size(32), coalesced_sum(32);
  std::vector<unsigned> cballot(32);
  REQUIRE(Run({32, 1, 1}, [&] {
            cg::thread_block block = cg::this_thread_block();
            auto t8 = cg::tiled_partition<8>(block);
            auto t16 = cg::tiled_partition<16>(block);
            const int lane = static_cast<int>(Lane());
            sum8[lane] = cg::reduce(t8, lane, cg::plus<int>());
            max16[lane] = cg::reduce(t16, lane * 7 % 16, cg::greater<int>());
            incl[lane] = cg::inclusive_scan(t8, lane);
            excl[lane] = cg::exclusive_scan(t8, 1);
            up[lane] = t8.shfl_up(lane, 3);
            down[lane] = t16.shfl_down(lane, 5);
            shfl[lane] = t8.shfl(lane, 6);
            if (lane % 4 == 1) {
              cg::coalesced_group g = cg::coalesced_threads();
              coalesced_rank[lane] = static_cast<int>(g.thread_rank());
              coalesced_size[lane] = static_cast<int>(g.size());
              coalesced_sum[lane] = cg::reduce(g, lane, cg::plus<int>()) +
                                    g.shfl_down(lane, 1) * 1000;
              cballot[lane] = g.ballot(g.thread_rank() < 3);
            }
          }) == "");
  for (int l = 0; l < 32; ++l) {
    const int base8 = l / 8 * 8, base16 = l / 16 * 16;
    CHECK(sum8[l] == 8 * base8 + 28);
    int m = 0;
    for (int j = base16; j < base16 + 16; ++j) m = std::max(m, j * 7 % 16);
    CHECK(max16[l] == m);
    CHECK(incl[l] == (base8 + l) * (l - base8 + 1) / 2);
    CHECK(excl[l] == l - base8);
    CHECK(up[l] == (l - base8 >= 3 ? l - 3 : l));
    CHECK(down[l] == (l - base16 + 5 < 16 ? l + 5 : l));
    CHECK(shfl[l] == base8 + 6);
    if (l % 4 == 1) {
      CHECK(coalesced_rank[l] == l / 4);
      CHECK(coalesced_size[l] == 8);
      CHECK(coalesced_sum[l] == 8 + 4 * 28 + (l + 4 < 32 ? l + 4 : l) * 1000);
      CHECK(cballot[l] == 0x7u);
    }
  }
}

TEST_CASE("dynamic shared memory of the launch", "[shared]") {
  std::vector<int> got(128);
  // A kernel's `extern __shared__ int dyn[]`, and its storage as the
  // generated code defines it.
  REQUIRE(Run(
              {64, 1, 1},
              [&] {
                extern __shared__ int dyn_shared_test[];
                const unsigned t = Rank();
                dyn_shared_test[t] = static_cast<int>(t + 64 * blockIdx.x);
                __syncthreads();
                got[t + 64 * blockIdx.x] = dyn_shared_test[63 - t];
              },
              {2, 1, 1}, 64 * sizeof(int)) == "");
  for (int i = 0; i < 128; ++i) CHECK(got[i] == i / 64 * 64 + 63 - i % 64);
}

TEST_CASE("a thread that polls with __nanosleep lets its block run",
          "[shared]") {
  int seen = 0;
  REQUIRE(Run({64, 1, 1}, [&] {
            __shared__ volatile int flag;
            if (threadIdx.x == 0) flag = 0;
            __syncthreads();
            if (threadIdx.x == 0) {
              while (flag == 0) __nanosleep(100);
              seen = flag;
            }
            if (threadIdx.x == 63) flag = 7;
          }) == "");
  CHECK(seen == 7);
}

TEST_CASE("clock64 never goes back", "[timing]") {
  std::vector<long long> before(64), after(64);
  REQUIRE(Run({64, 1, 1}, [&] {
            before[Rank()] = clock64();
            __syncthreads();
            after[Rank()] = clock64();
          }) == "");
  const long long last_before = *std::max_element(before.begin(), before.end());
  for (int t = 0; t < 64; ++t) CHECK(after[t] >= last_before);
}

StdPool& Pool() {
  static StdPool pool(4);
  return pool;
}

TEST_CASE("blocks on several OS threads keep their shared memory apart",
          "[concurrency]") {
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> wrong{0};
    const std::string error = RunLaunch(kc_launch{{300, 1, 1}, {64, 1, 1}},
                                        true, &Pool(), 0, "k", [&] {
                                          __shared__ unsigned tag[64];
                                          tag[threadIdx.x] = blockIdx.x;
                                          __nanosleep(0);
                                          __syncthreads();
                                          for (unsigned i = 0; i < 64; ++i)
                                            if (tag[i] != blockIdx.x) ++wrong;
                                          __syncthreads();
                                        });
    REQUIRE(error == "");
    REQUIRE(wrong == 0);
  }
}

TEST_CASE("a launch gives the same results on one thread and on several",
          "[concurrency]") {
  const int n = 1 << 16;
  std::vector<unsigned char> data(n);
  for (int i = 0; i < n; ++i)
    data[i] = static_cast<unsigned char>(i * 37 % 251);
  auto histogram = [&](StdPool* pool) {
    std::vector<unsigned> bins(256, 0);
    std::vector<float> block_sums(64, 0.0f);
    const std::string error =
        RunLaunch(kc_launch{{64, 1, 1}, {128, 1, 1}}, true, pool, 0, "k", [&] {
          __shared__ unsigned local[256];
          __shared__ float warp_sums[4];
          for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
          __syncthreads();
          float s = 0;
          for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
               i += blockDim.x * gridDim.x) {
            atomicAdd(&local[data[i]], 1u);
            s += data[i];
          }
          for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(kFull, s, o);
          if (Lane() == 0) warp_sums[threadIdx.x / 32] = s;
          __syncthreads();
          for (unsigned b = threadIdx.x; b < 256; b += blockDim.x)
            atomicAdd(&bins[b], local[b]);
          if (threadIdx.x == 0)
            block_sums[blockIdx.x] =
                warp_sums[0] + warp_sums[1] + warp_sums[2] + warp_sums[3];
        });
    REQUIRE(error == "");
    return std::make_pair(bins, block_sums);
  };
  const auto alone = histogram(nullptr);
  for (int round = 0; round < 20; ++round) CHECK(histogram(&Pool()) == alone);
  unsigned total = 0;
  for (unsigned b : alone.first) total += b;
  CHECK(total == static_cast<unsigned>(n));
}

TEST_CASE("atomics are atomic across concurrent blocks", "[atomics]") {
  struct Totals {
    int i = 0;
    unsigned u = 0;
    unsigned long long ull = 0;
    float f = 0;
    double d = 0;
    __half h = __half(0.0f);
    __nv_bfloat16 b = __nv_bfloat16(0.0f);
    __half2 h2{__half(0.0f), __half(0.0f)};
    float2 f2{0, 0};
    float4 f4{0, 0, 0, 0};
    int sub = 0;
    int imin = 0, imax = 0;
    unsigned umin = ~0u;
    long long llmax = 0;
    unsigned long long ullmin = ~0ull;
    unsigned bits_or = 0, bits_and = ~0u, bits_xor = 0;
    int cas_counter = 0;
    unsigned short cas16 = 0;
    unsigned long long cas64 = 0;
    int exch = -1;
    float exchf = -1;
  } t;
  // 32 blocks of 64 threads: 2048 threads.
  const std::string error =
      RunLaunch(kc_launch{{32, 1, 1}, {64, 1, 1}}, true, &Pool(), 0, "k", [&] {
        const int g = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
        atomicAdd(&t.i, 1);
        atomicAdd(&t.u, 2u);
        atomicAdd(&t.ull, 1ull << 33);
        atomicAdd(&t.f, 1.0f);
        atomicAdd(&t.d, 0.5);
        if (g < 1024) atomicAdd(&t.h, __half(1.0f));
        if (g < 256) atomicAdd(&t.b, __nv_bfloat16(1.0f));
        if (g < 512) atomicAdd(&t.h2, __half2{__half(1.0f), __half(2.0f)});
        atomicAdd(&t.f2, float2{1.0f, 2.0f});
        atomicAdd(&t.f4, float4{1.0f, 2.0f, 3.0f, 4.0f});
        atomicSub_block(&t.sub, 3);
        atomicMin(&t.imin, -g);
        atomicMax_system(&t.imax, g);
        atomicMin(&t.umin, static_cast<unsigned>(g + 5));
        atomicMax(&t.llmax, static_cast<long long>(g) << 40);
        atomicMin(&t.ullmin, static_cast<unsigned long long>(g) + 9);
        atomicOr(&t.bits_or, 1u << (g % 32));
        atomicAnd(&t.bits_and, ~(1u << (g % 32)));
        atomicXor(&t.bits_xor, 1u << (g % 32));
        int seen = 0;
        for (;;) {
          const int old = atomicCAS(&t.cas_counter, seen, seen + 1);
          if (old == seen) break;
          seen = old;
        }
        unsigned short s16 = 0;
        for (;;) {
          const unsigned short old =
              atomicCAS(&t.cas16, s16, static_cast<unsigned short>(s16 + 1));
          if (old == s16) break;
          s16 = old;
        }
        unsigned long long s64 = 0;
        for (;;) {
          const unsigned long long old = atomicCAS(&t.cas64, s64, s64 + 3);
          if (old == s64) break;
          s64 = old;
        }
        atomicExch(&t.exch, g);
        atomicExch(&t.exchf, static_cast<float>(g));
      });
  REQUIRE(error == "");
  CHECK(t.i == 2048);
  CHECK(t.u == 4096u);
  CHECK(t.ull == 2048ull << 33);
  CHECK(t.f == 2048.0f);
  CHECK(t.d == 1024.0);
  CHECK(float(t.h) == 1024.0f);
  CHECK(float(t.b) == 256.0f);
  CHECK(float(t.h2.x) == 512.0f);
  CHECK(float(t.h2.y) == 1024.0f);
  CHECK((t.f2.x == 2048.0f && t.f2.y == 4096.0f));
  CHECK((t.f4.x == 2048.0f && t.f4.w == 8192.0f));
  CHECK(t.sub == -6144);
  CHECK(t.imin == -2047);
  CHECK(t.imax == 2047);
  CHECK(t.umin == 5u);
  CHECK(t.llmax == 2047LL << 40);
  CHECK(t.ullmin == 9ull);
  CHECK(t.bits_or == kFull);
  CHECK(t.bits_and == 0u);
  CHECK(t.bits_xor == 0u);  // each bit flipped 64 times
  CHECK(t.cas_counter == 2048);
  CHECK(t.cas16 == 2048);
  CHECK(t.cas64 == 3ull * 2048);
  CHECK((t.exch >= 0 && t.exch < 2048));
  CHECK((t.exchf >= 0.0f && t.exchf < 2048.0f));
}

TEST_CASE("atomicInc and atomicDec wrap as CUDA's do", "[atomics]") {
  unsigned v = 0;
  std::vector<unsigned> inc;
  for (int i = 0; i < 5; ++i) inc.push_back(atomicInc(&v, 2u));
  CHECK(inc == std::vector<unsigned>{0, 1, 2, 0, 1});
  CHECK(v == 2u);
  v = 1;
  std::vector<unsigned> dec;
  for (int i = 0; i < 4; ++i) dec.push_back(atomicDec(&v, 2u));
  CHECK(dec == std::vector<unsigned>{1, 0, 2, 1});
  v = 7;  // above the bound: wraps to it
  CHECK(atomicDec(&v, 3u) == 7u);
  CHECK(v == 3u);
}

TEST_CASE("printf from concurrent blocks writes whole lines", "[printf]") {
  char path[] = "/tmp/kc_printf_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  fflush(stdout);
  const int saved = dup(STDOUT_FILENO);
  REQUIRE(dup2(fd, STDOUT_FILENO) >= 0);
  const std::string error =
      RunLaunch(kc_launch{{16, 1, 1}, {64, 1, 1}}, true, &Pool(), 0, "k", [] {
        printf("block %u thread %u of %u\n", blockIdx.x, threadIdx.x,
               blockDim.x);
        __syncthreads();
      });
  fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  close(fd);
  REQUIRE(error == "");
  std::ifstream in(path);
  std::string line;
  std::set<std::string> lines;
  const std::regex pattern("block [0-9]+ thread [0-9]+ of 64");
  int count = 0;
  while (std::getline(in, line)) {
    ++count;
    CHECK(std::regex_match(line, pattern));
    lines.insert(line);
  }
  unlink(path);
  CHECK(count == 16 * 64);
  CHECK(lines.size() == 16u * 64u);
}

// The storage of the `extern __shared__` array above, in the namespace of
// its declaration, as generated code defines it.
KC_HOST_EXTERN_SHARED(int, dyn_shared_test);

}  // namespace
