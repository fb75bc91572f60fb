#include "compiler/util/parallel.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <vector>

namespace kernelc {
namespace {

TEST_CASE("every task runs once, and all have returned") {
  for (size_t n : {0, 1, 2, 7, 64}) {
    std::vector<std::atomic<int>> runs(n);
    ForEachConcurrently(n, [&](size_t i) { ++runs[i]; });
    for (size_t i = 0; i < n; ++i) CHECK(runs[i].load() == 1);
  }
}

}  // namespace
}  // namespace kernelc
