// Tests of kernelc/batch.h: batch planning, per-element views with
// broadcasting, folding, and the parallel loop.
#include "kernelc/batch.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <numeric>
#include <thread>
#include <vector>

namespace {

enum class Type { kF32 };

// The part of xla::ffi::AnyBuffer that batch.h reads.
struct Buffer {
  std::vector<int64_t> dims;
  void* data;
  kc::rt::Dims dimensions() const { return {dims.data(), dims.size()}; }
  void* untyped_data() const { return data; }
  Type element_type() const { return Type::kF32; }
};

TEST_CASE("a batch of one without batch dimensions") {
  float out[6];
  Buffer r{{2, 3}, out};
  kc::rt::Batch b;
  REQUIRE(kc::rt::PlanBatch(r, 2, &b).empty());
  CHECK(b.rank == 0);
  CHECK(b.count == 1);
  kc::rt::Operand<Type> o;
  REQUIRE(kc::rt::MakeOperand(r, 2, 4, b, &o).empty());
  auto t = o.At(b, 0);
  CHECK(t.untyped_data() == out);
  CHECK(t.element_count() == 6);
  CHECK(t.size_bytes() == 24);
  CHECK(kc::rt::ShapeString(t.dimensions()) == "(2, 3)");
}

TEST_CASE("batch dimensions, broadcast operands and their offsets") {
  std::vector<float> out(2 * 3 * 5), x(3 * 5), y(2 * 1 * 5);
  Buffer r{{2, 3, 5}, out.data()};
  kc::rt::Batch b;
  REQUIRE(kc::rt::PlanBatch(r, 1, &b).empty());
  CHECK(b.rank == 2);
  CHECK(b.count == 6);
  kc::rt::Operand<Type> ro, xo, yo;
  REQUIRE(kc::rt::MakeOperand(r, 1, 4, b, &ro).empty());
  Buffer xb{{1, 3, 5}, x.data()}, yb{{2, 1, 5}, y.data()};
  REQUIRE(kc::rt::MakeOperand(xb, 1, 4, b, &xo).empty());
  REQUIRE(kc::rt::MakeOperand(yb, 1, 4, b, &yo).empty());
  // Element 4 is batch index (1, 1).
  CHECK(ro.At(b, 4).untyped_data() == out.data() + 4 * 5);
  CHECK(xo.At(b, 4).untyped_data() == x.data() + 1 * 5);
  CHECK(yo.At(b, 4).untyped_data() == y.data() + 1 * 5);
  CHECK(yo.At(b, 2).untyped_data() == y.data());
  CHECK(xo.At(b, 4).element_count() == 5);
  CHECK(kc::rt::ShapeString(yo.At(b, 5).dimensions()) == "(5,)");

  kc::rt::Operand<Type> bad;
  CHECK(kc::rt::MakeOperand(Buffer{{2, 2, 5}, x.data()}, 1, 4, b, &bad) ==
        "has batch dimension 1 = 2, expected 3 or 1");
  CHECK(kc::rt::MakeOperand(Buffer{{3, 5}, x.data()}, 1, 4, b, &bad) ==
        "expects rank 1 after 2 batch dimensions, got rank 2");
  CHECK(kc::rt::MakeOperand(Buffer{{3, 5}, x.data()}, 1, 4, kc::rt::Batch{},
                            &bad) == "expects rank 1, got rank 2");
  CHECK(kc::rt::PlanBatch(Buffer{{5}, x.data()}, 2, &b) ==
        "a result has rank 1, less than the declared 2");
}

TEST_CASE("folding a batch into dimension 0") {
  std::vector<float> out(4 * 3 * 2), x(4 * 3 * 2), y(3 * 2);
  Buffer r{{4, 3, 2}, out.data()};
  kc::rt::Batch b;
  REQUIRE(kc::rt::PlanBatch(r, 2, &b).empty());
  kc::rt::Operand<Type> ro, xo, yo;
  REQUIRE(kc::rt::MakeOperand(r, 2, 4, b, &ro).empty());
  // Operands point at their buffers' dimensions, which must outlive them.
  Buffer xb{{4, 3, 2}, x.data()}, yb{{1, 3, 2}, y.data()};
  REQUIRE(kc::rt::MakeOperand(xb, 2, 4, b, &xo).empty());
  {
    // A broadcast operand cannot fold.
    REQUIRE(kc::rt::MakeOperand(yb, 2, 4, b, &yo).empty());
    kc::rt::Operand<Type>* ops[] = {&ro, &xo, &yo};
    kc::rt::Batch copy = b;
    CHECK_FALSE(kc::rt::FoldBatch(&copy, ops, 3));
    CHECK(copy.count == 4);
  }
  kc::rt::Operand<Type>* ops[] = {&ro, &xo};
  REQUIRE(kc::rt::FoldBatch(&b, ops, 2));
  CHECK(b.count == 1);
  auto t = xo.At(b, 0);
  CHECK(kc::rt::ShapeString(t.dimensions()) == "(12, 2)");
  CHECK(t.element_count() == 24);
  CHECK(t.size_bytes() == 96);
  CHECK(t.untyped_data() == x.data());
}

TEST_CASE("ParallelFor runs every index once, with or without helpers") {
  for (int64_t helpers : {0, 1, 3, 100}) {
    std::vector<std::thread> threads;
    std::vector<std::atomic<int>> hits(1000);
    kc::rt::ParallelFor(
        1000, helpers,
        [&threads](std::function<void()> task) {
          threads.emplace_back(std::move(task));
        },
        [&hits](int64_t i) { hits[i].fetch_add(1); });
    for (std::thread& t : threads) t.join();
    for (auto& h : hits) CHECK(h.load() == 1);
    CHECK(threads.size() ==
          static_cast<size_t>(std::min<int64_t>(helpers, 999)));
  }
  int calls = 0;
  kc::rt::ParallelFor(
      0, 4, [](std::function<void()>) { FAIL("nothing to schedule"); },
      [&calls](int64_t) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("BatchHelpers keeps small batches on the caller") {
  kc::rt::Batch b;
  b.rank = 1;
  b.count = 64;
  b.shape[0] = 64;
  CHECK(kc::rt::BatchHelpers(8, b, 1024) == 0);
  CHECK(kc::rt::BatchHelpers(8, b, 8192) == 8);
  CHECK(kc::rt::BatchHelpers(0, b, 8192) == 0);
  b.count = 1;
  CHECK(kc::rt::BatchHelpers(8, b, 1 << 20) == 0);
}

}  // namespace
