// Splitting a launch into ranges of blocks (kernelc/grid_split.h) and
// running a range in the plain loop (kc::host::RunThreadLoop): every thread
// of the grid runs once, with its indices, however the grid is cut.
#include <stdint.h>

#include <catch2/catch.hpp>
#include <tuple>
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
    CHECK(s.ranges == 16);
    CHECK(Covered(s) == 512);
  }
  SECTION("at most the pool and the caller") {
    const GridSplit s = SplitGrid({{1 << 16, 1, 1}, {256, 1, 1}}, false, 3);
    CHECK(s.helpers == 3);
    CHECK(s.ranges == 16);
    CHECK(Covered(s) == 1 << 16);
  }
  SECTION("block kernels pay off sooner") {
    const GridSplit s = SplitGrid({{64, 1, 1}, {256, 1, 1}}, true, 7);
    CHECK(s.helpers == 7);
    CHECK(s.ranges == 32);
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

}  // namespace
