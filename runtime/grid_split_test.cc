// Splitting a launch into ranges of blocks (kernelc/grid_split.h) and
// running a range in the plain loop (kc::host::RunThreadLoop): every thread
// of the grid runs once, with its indices, however the grid is cut.
#include <stdint.h>

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/std_pool.h"

namespace {

using kc::rt::GridSplit;
using kc::rt::SplitGrid;

uint64_t Covered(const GridSplit& s) {
  uint64_t next = 0;
  for (int64_t i = 0; i < s.ranges; ++i) {
    const kc_block_range r = s.Range(i, 0);
    if (r.block_begin != next || r.block_end <= r.block_begin) return ~0ull;
    next = r.block_end;
  }
  return next;
}

TEST_CASE("a small launch stays on the calling thread", "[split]") {
  // Under two workers' worth: 64 Ki threads of the loop, 512 of the block
  // executor.
  const GridSplit loop = SplitGrid({{255, 1, 1}, {256, 1, 1}}, false, 16);
  CHECK(loop.helpers == 0);
  CHECK(loop.ranges == 1);
  CHECK(Covered(loop) == 255);
  const GridSplit fiber = SplitGrid({{3, 1, 1}, {128, 1, 1}}, true, 16);
  CHECK(fiber.helpers == 0);
  CHECK(fiber.ranges == 1);
  const GridSplit no_pool = SplitGrid({{1 << 20, 1, 1}, {256, 1, 1}}, false, 0);
  CHECK(no_pool.helpers == 0);
  CHECK(no_pool.ranges == 1);
  CHECK(SplitGrid({{0, 1, 1}, {256, 1, 1}}, false, 4).ranges == 0);
}

TEST_CASE("a large launch spreads over the pool in ranges", "[split]") {
  SECTION("as many workers as the work pays for") {
    // 4 workers' worth of loop threads, on a pool of 16.
    const GridSplit s = SplitGrid({{512, 1, 1}, {256, 1, 1}}, false, 16);
    CHECK(s.helpers == 3);
    CHECK(s.ranges == 4 * kc::rt::kRangesPerWorker);
    CHECK(Covered(s) == 512);
  }
  SECTION("at most as many threads as the pool has, the caller included") {
    const GridSplit s = SplitGrid({{1 << 16, 1, 1}, {256, 1, 1}}, false, 3);
    CHECK(s.helpers == 2);
    CHECK(s.ranges == 3 * kc::rt::kRangesPerWorker);
    CHECK(Covered(s) == 1 << 16);
    // A pool of one thread: its core is the caller's.
    CHECK(SplitGrid({{1 << 16, 1, 1}, {256, 1, 1}}, false, 1).helpers == 0);
  }
  SECTION("block kernels pay off sooner") {
    const GridSplit s = SplitGrid({{64, 1, 1}, {256, 1, 1}}, true, 7);
    CHECK(s.helpers == 6);
    // 7 x kRangesPerWorker asked for, at most one per block.
    CHECK(s.ranges == std::min<int64_t>(64, 7 * kc::rt::kRangesPerWorker));
    CHECK(Covered(s) == 64);
  }
  SECTION("never more ranges than blocks") {
    const GridSplit s = SplitGrid({{5, 1, 1}, {1024, 1, 1}}, true, 7);
    CHECK(s.helpers == 4);
    CHECK(s.ranges == 5);
    CHECK(Covered(s) == 5);
  }
  SECTION("three-dimensional grids count every block") {
    const GridSplit s = SplitGrid({{33, 7, 5}, {64, 2, 1}}, false, 5);
    CHECK(Covered(s) == 33 * 7 * 5);
    CHECK(s.Range(s.ranges - 1, 96).shared_bytes == 96);
  }
}

using Visit = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                         uint32_t, uint32_t, uint32_t>;

TEST_CASE("the loop runs each thread of a range once, in order", "[loop]") {
  const kc_launch launch{{5, 3, 2}, {4, 2, 2}};
  std::vector<Visit> whole;
  auto record = [](std::vector<Visit>* into) {
    return [into] {
      into->emplace_back(blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x,
                         threadIdx.y, threadIdx.z, gridDim.x * blockDim.z,
                         gridDim.z * blockDim.x);
    };
  };
  kc::host::RunThreadLoop(launch, 0, 30, record(&whole));
  REQUIRE(whole.size() == 30u * 16u);
  // Blocks in linear order, x fastest; threads likewise within each.
  for (size_t i = 0; i < whole.size(); ++i) {
    const uint32_t b = static_cast<uint32_t>(i / 16), t = i % 16;
    CHECK(whole[i] == Visit(b % 5, b / 5 % 3, b / 15, t % 4, t / 4 % 2, t / 8,
                            5 * 2, 2 * 4));
  }
  // Cut anywhere: within rows, across rows and planes.
  for (const uint64_t step : {1, 2, 4, 7, 11, 13, 29}) {
    std::vector<Visit> pieces;
    for (uint64_t begin = 0; begin < 30; begin += step)
      kc::host::RunThreadLoop(
          launch, begin, std::min<uint64_t>(30, begin + step), record(&pieces));
    CHECK(pieces == whole);
  }
}

TEST_CASE("a loop kernel gives the same results split over the pool",
          "[loop]") {
  kc::testing::StdPool pool(3);
  constexpr int64_t n = 1 << 22;
  std::vector<float> x(n), y(n), alone(n), spread(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000);
    y[i] = static_cast<float>(i % 7);
  }
  auto saxpy = [&](float* out) {
    return [&x, &y, out] {
      const int64_t i =
          blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
      if (i < n) out[i] = 2.0f * x[i] + y[i];
    };
  };
  const kc_launch launch{{static_cast<uint32_t>(n / 256), 1, 1}, {256, 1, 1}};
  REQUIRE(kc::testing::RunLaunch(launch, false, nullptr, 0, "saxpy",
                                 saxpy(alone.data())) == "");
  REQUIRE(kc::testing::RunLaunch(launch, false, &pool, 0, "saxpy",
                                 saxpy(spread.data())) == "");
  CHECK(spread == alone);
  CHECK(alone[12345] == 2.0f * 345 + 12345 % 7);
}

TEST_CASE("the bounded loop runs the threads below the limit, as the loop does",
          "[loop]") {
  // One dimension, 7 blocks of 32 threads: 224 in all.
  const kc_launch launch{{7, 1, 1}, {32, 1, 1}};
  auto record = [](std::vector<Visit>* into) {
    return [into] {
      into->emplace_back(blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x,
                         threadIdx.y, threadIdx.z, gridDim.x, blockDim.x);
    };
  };
  std::vector<Visit> all;
  kc::host::RunThreadLoop(launch, 0, 7, record(&all));
  for (const int64_t limit : {-3, 0, 1, 31, 32, 33, 200, 223, 224}) {
    INFO("limit " << limit);
    const std::vector<Visit> below(
        all.begin(), all.begin() + std::max<int64_t>(limit, 0));
    std::vector<Visit> whole;
    kc::host::RunThreadLoopBelow<int32_t>(launch, 0, 7, limit, record(&whole));
    CHECK(whole == below);
    for (const uint64_t step : {1, 2, 3, 5}) {
      std::vector<Visit> pieces;
      for (uint64_t begin = 0; begin < 7; begin += step)
        kc::host::RunThreadLoopBelow<int64_t>(
            launch, begin, std::min<uint64_t>(7, begin + step), limit,
            record(&pieces));
      CHECK(pieces == below);
    }
  }
}

TEST_CASE("whether a bound is within the index's range", "[loop]") {
  CHECK(kc::host::IndexHolds<int32_t>(int32_t{-1}));
  CHECK(kc::host::IndexHolds<int32_t>(int64_t{INT32_MAX}));
  CHECK_FALSE(kc::host::IndexHolds<int32_t>(int64_t{INT32_MAX} + 1));
  CHECK(kc::host::IndexHolds<uint32_t>(uint64_t{UINT32_MAX}));
  CHECK_FALSE(kc::host::IndexHolds<uint32_t>(uint64_t{UINT32_MAX} + 1));
  CHECK(kc::host::IndexHolds<uint64_t>(int64_t{INT64_MAX}));
  // The limit is an int64_t.
  CHECK_FALSE(kc::host::IndexHolds<uint64_t>(uint64_t{INT64_MAX} + 1));
}

// A pool that counts how often it is asked its size.
struct CountingPool {
  kc::testing::StdPool* pool;
  int asked = 0;
  kc_pool Get() {
    return kc_pool{
        this,
        [](void* self) {
          CountingPool& p = *static_cast<CountingPool*>(self);
          ++p.asked;
          return p.pool->num_threads();
        },
        [](void* self, void (*task)(void*), void* arg) {
          kc::testing::StdPool* pool = static_cast<CountingPool*>(self)->pool;
          pool->Schedule([task, arg] { task(arg); });
        }};
  }
};

// Records each range it runs (context: Ranges).
struct Ranges {
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
};

int32_t Record(const kc_block_range* r, kc_error*, const void* context) {
  Ranges& ranges = *static_cast<Ranges*>(const_cast<void*>(context));
  std::lock_guard<std::mutex> lock(ranges.mu);
  ranges.ranges.emplace_back(r->block_begin, r->block_end);
  return 0;
}

TEST_CASE("a launch splits over the pool when it is large enough", "[split]") {
  kc::testing::StdPool std_pool(3);
  CountingPool pool{&std_pool};
  const kc_pool p = pool.Get();
  kc_error error;
  // Small: one range on the caller.
  Ranges small;
  CHECK(kc::rt::RunSplitLaunch({{255, 1, 1}, {256, 1, 1}}, false, 0, -1, p,
                               Record, &small, nullptr, 0, &error) == 0);
  CHECK(small.ranges ==
        std::vector<std::pair<uint64_t, uint64_t>>{{0, 255}});
  CHECK(pool.asked == 1);
  // Large but kept on the caller (a pool of 0 threads): one range, and the
  // pool not asked.
  Ranges kept;
  CHECK(kc::rt::RunSplitLaunch({{1024, 1, 1}, {256, 1, 1}}, false, 0, 0, p,
                               Record, &kept, nullptr, 0, &error) == 0);
  CHECK(kept.ranges.size() == 1);
  CHECK(pool.asked == 1);
  // Large: asked once, split into ranges that cover the grid.
  Ranges large;
  CHECK(kc::rt::RunSplitLaunch({{1024, 1, 1}, {256, 1, 1}}, false, 0, -1, p,
                               Record, &large, nullptr, 0, &error) == 0);
  CHECK(pool.asked == 2);
  CHECK(large.ranges.size() > 1);
  std::sort(large.ranges.begin(), large.ranges.end());
  uint64_t next = 0;
  for (const auto& [begin, end] : large.ranges) {
    CHECK(begin == next);
    next = end;
  }
  CHECK(next == 1024);
}

TEST_CASE("the handler's way asks the pool only for a launch that splits",
          "[split]") {
  kc::testing::StdPool pool(3);
  int ran = 0;
  CHECK(kc::testing::RunLaunch({{255, 1, 1}, {256, 1, 1}}, false, &pool, 0,
                               "k", [&] { ++ran; })
            .empty());
  CHECK(ran == 255 * 256);
}

TEST_CASE("a failing range's message comes back, cut to fit", "[split]") {
  kc::testing::StdPool pool(3);
  for (const kc_launch launch : {kc_launch{{4, 1, 1}, {32, 1, 1}},
                                 kc_launch{{1024, 1, 1}, {256, 1, 1}}}) {
    kc_error error;
    const int32_t failed = kc::rt::RunSplitLaunch(
        launch, false, 0, -1, kc::testing::AsPool(&pool),
        [](const kc_block_range*, kc_error* e, const void*) -> int32_t {
          memset(e->message, 'x', sizeof(e->message) - 1);
          e->message[sizeof(e->message) - 1] = '\0';
          return 1;
        },
        nullptr, nullptr, 0, &error);
    CHECK(failed != 0);
    CHECK(std::string(error.message) ==
          std::string(sizeof(error.message) - 1, 'x'));
  }
}

}  // namespace

TEST_CASE("a split launch maps its outputs' pages and changes none of their bytes",
          "[split]") {
  kc::testing::StdPool pool(2);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t pages = 64;
  // A fresh mapping, no page of it touched yet; and memory already written,
  // an output that does not start or end on a page.
  void* fresh = mmap(nullptr, pages * page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(fresh != MAP_FAILED);
  std::vector<unsigned char> written(3 * page + 100);
  for (size_t i = 0; i < written.size(); ++i)
    written[i] = static_cast<unsigned char>(i * 7);
  const std::vector<unsigned char> before = written;
  const kc_span outputs[] = {{fresh, pages * page},
                             {written.data() + 50, written.size() - 100}};
  kc_error error;
  Ranges ran;
  CHECK(kc::rt::RunSplitLaunch({{1024, 1, 1}, {256, 1, 1}}, false, 0, -1,
                               kc::testing::AsPool(&pool), Record, &ran,
                               outputs, 2, &error) == 0);
  CHECK(ran.ranges.size() > 1);
  CHECK(written == before);
  std::vector<unsigned char> resident(pages);
  REQUIRE(mincore(fresh, pages * page, resident.data()) == 0);
  // Where the kernel maps pages for writing on request (Linux 5.14 and
  // newer), every page of the fresh mapping is there, and reads zero.
  void* probe = mmap(nullptr, page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(probe != MAP_FAILED);
  if (madvise(probe, page, 23 /* MADV_POPULATE_WRITE */) == 0)
    CHECK(std::all_of(resident.begin(), resident.end(),
                      [](unsigned char r) { return (r & 1) != 0; }));
  const auto* bytes = static_cast<const unsigned char*>(fresh);
  CHECK(std::all_of(bytes, bytes + pages * page,
                    [](unsigned char b) { return b == 0; }));
  munmap(probe, page);
  munmap(fresh, pages * page);
}
