// When a kernel's guard bounds its threads by exactly its grid's total.
#include "compiler/sema/grid_guard.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "compiler/sema/sema_test_util.h"

namespace kernelc::sema {
namespace {

using namespace testing;  // NOLINT(build/namespaces): the fixtures

// saxpy's parameters: x, y of shape "n", a, a derived n = x.size, out of x's
// shape; grid `grid`, guard `i < bound`.
Kernel Saxpy(const std::vector<std::string>& grid, const std::string& bound) {
  Kernel k = Global("saxpy", grid,
                    {In("x", "n", 3), In("y", "n", 4),
                     Scalar("a", DType::kF32, 5), Derived("n", "x.size", 6),
                     Scalar("m", DType::kI64, 7), Out("out", "x", 8)});
  model::GridGuard g;
  g.bound = bound;
  k.guard = g;
  return k;
}

bool Elided(Kernel k) {
  Analysis a(std::move(k));
  return a.plan().guard_elided;
}

TEST_CASE("grid guard: a grid of exactly the bound elides the guard") {
  CHECK(Elided(Saxpy({"n"}, "n")));
  CHECK(Elided(Saxpy({"x.size"}, "n")));
  // out's shape is x's.
  CHECK(Elided(Saxpy({"out.size"}, "n")));
  CHECK(Elided(Saxpy({"m"}, "m")));
}

TEST_CASE("grid guard: anything else keeps it") {
  CHECK_FALSE(Elided(Saxpy({"n + 1"}, "n")));
  CHECK_FALSE(Elided(Saxpy({"n + 0"}, "n")));
  CHECK_FALSE(Elided(Saxpy({"ceil_div(n, 4)"}, "n")));
  CHECK_FALSE(Elided(Saxpy({"m"}, "n")));
  CHECK_FALSE(Elided(Saxpy({"n"}, "m")));
  CHECK_FALSE(Elided(Saxpy({"y.size"}, "n")));  // y's shape is "n", not x's
  CHECK_FALSE(Elided(Saxpy({"n", "1"}, "n")));  // two dimensions
  CHECK_FALSE(Elided(Saxpy({"n"}, "x")));       // a tensor is no bound
  Kernel blocks = Saxpy({"n"}, "n");
  blocks.grid_in_blocks = true;  // KC_BLOCKS: n blocks, not n threads
  CHECK_FALSE(Elided(std::move(blocks)));
  Kernel shared = Saxpy({"n"}, "n");
  shared.block_features.push_back({"__syncthreads", At(9, 3)});
  CHECK_FALSE(Elided(std::move(shared)));
  Kernel unguarded = Saxpy({"n"}, "n");
  unguarded.guard.reset();
  CHECK_FALSE(Elided(std::move(unguarded)));
}

}  // namespace
}  // namespace kernelc::sema
