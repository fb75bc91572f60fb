// Tests of kernelc/batch.h: batch planning and its messages, per-element
// views with broadcasting, folding, the parallel loop and the CPU's batched
// call; and the messages of kernelc/runtime.h.
#include "kernelc/batch.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/std_pool.h"

namespace {

constexpr int32_t kF32 = 11;  // XLA's code

kc::rt::BatchBuffer Buffer(const std::vector<int64_t>& dims, void* data,
                           size_t declared_rank, const char* name = "t") {
  return kc::rt::BatchBuffer{data, dims.data(), dims.size(), declared_rank,
                             4,    kF32,        name};
}

// Plans `buffers` (the last one the first result); the message, or "".
std::string Plan(const std::vector<kc::rt::BatchBuffer>& buffers,
                 kc::rt::Batch* batch, std::vector<kc::rt::Operand>* operands) {
  operands->assign(buffers.size(), kc::rt::Operand());
  kc::rt::Message why;
  if (kc::rt::PlanBatch("k", buffers.data(), static_cast<int>(buffers.size()),
                        static_cast<int>(buffers.size()) - 1, batch,
                        operands->data(), &why))
    return "";
  return why.c_str();
}

std::string Text(const kc::rt::Message& m) { return m.c_str(); }

TEST_CASE("messages print numbers, shapes and the grid's limits") {
  const int64_t dims[] = {2, 3};
  CHECK(Text(kc::rt::Message() << "a " << int64_t{-5} << " " << size_t{7}
                               << " " << 3) == "a -5 7 3");
  CHECK(Text(kc::rt::Message() << kc::rt::Shape{dims, 2}) == "(2, 3)");
  CHECK(Text(kc::rt::Message() << kc::rt::Shape{dims, 1}) == "(2,)");
  CHECK(Text(kc::rt::Message() << kc::rt::Shape{dims, 0}) == "()");
  const int64_t threads[3] = {-1, 1, 1}, block[3] = {256, 1, 1};
  CHECK(Text((kc::rt::Message() << "k: ").Grid(threads, block, 1)) ==
        "k: the grid has -1 threads along x");
  const int64_t many[3] = {1, int64_t{1} << 20, 1};
  CHECK(Text(kc::rt::Message().Grid(many, block, 2)) ==
        "the grid needs 1048576 blocks along y, more than the limit of 65535");
  // A long message grows as it must.
  kc::rt::Message m;
  for (int i = 0; i < 1000; ++i) m << "0123456789";
  CHECK(m.size() == 10000);
  CHECK(std::string(m.c_str()).size() == 10000);
}

TEST_CASE("a batch of one without batch dimensions") {
  float out[6];
  const std::vector<int64_t> dims = {2, 3};
  kc::rt::Batch b;
  std::vector<kc::rt::Operand> o;
  REQUIRE(Plan({Buffer(dims, out, 2)}, &b, &o).empty());
  CHECK(b.rank == 0);
  CHECK(b.count == 1);
  auto t = o[0].At<int32_t>(b, 0);
  CHECK(t.untyped_data() == out);
  CHECK(t.element_type() == kF32);
  CHECK(t.element_count() == 6);
  CHECK(t.size_bytes() == 24);
  CHECK(Text(kc::rt::Message() << kc::rt::ShapeOf(t.dimensions())) ==
        "(2, 3)");
}

TEST_CASE("batch dimensions, broadcast operands and their offsets") {
  std::vector<float> out(2 * 3 * 5), x(3 * 5), y(2 * 1 * 5);
  const std::vector<int64_t> rd = {2, 3, 5}, xd = {1, 3, 5}, yd = {2, 1, 5};
  kc::rt::Batch b;
  std::vector<kc::rt::Operand> o;
  REQUIRE(Plan({Buffer(xd, x.data(), 1), Buffer(yd, y.data(), 1),
                Buffer(rd, out.data(), 1)},
               &b, &o)
              .empty());
  CHECK(b.rank == 2);
  CHECK(b.count == 6);
  const kc::rt::Operand &xo = o[0], &yo = o[1], &ro = o[2];
  // Element 4 is batch index (1, 1).
  CHECK(ro.At<int32_t>(b, 4).untyped_data() == out.data() + 4 * 5);
  CHECK(xo.At<int32_t>(b, 4).untyped_data() == x.data() + 1 * 5);
  CHECK(yo.At<int32_t>(b, 4).untyped_data() == y.data() + 1 * 5);
  CHECK(yo.At<int32_t>(b, 2).untyped_data() == y.data());
  CHECK(xo.At<int32_t>(b, 4).element_count() == 5);

  const std::vector<int64_t> wrong = {2, 2, 5}, short_ = {3, 5}, one = {5};
  CHECK(Plan({Buffer(wrong, x.data(), 1, "x"), Buffer(rd, out.data(), 1)}, &b,
             &o) == "k: parameter 'x' has batch dimension 1 = 2, expected 3 "
                    "or 1");
  CHECK(Plan({Buffer(short_, x.data(), 1, "x"), Buffer(rd, out.data(), 1)},
             &b, &o) == "k: parameter 'x' expects rank 1 after 2 batch "
                        "dimensions, got rank 2");
  CHECK(Plan({Buffer(short_, x.data(), 1, "x"), Buffer(one, out.data(), 1)},
             &b, &o) == "k: parameter 'x' expects rank 1, got rank 2");
  CHECK(Plan({Buffer(one, x.data(), 2)}, &b, &o) ==
        "k: a result has rank 1, less than the declared 2");
}

TEST_CASE("folding a batch into dimension 0") {
  std::vector<float> out(4 * 3 * 2), x(4 * 3 * 2), y(3 * 2);
  const std::vector<int64_t> rd = {4, 3, 2}, xd = {4, 3, 2}, yd = {1, 3, 2};
  kc::rt::Batch b;
  std::vector<kc::rt::Operand> o;
  REQUIRE(Plan({Buffer(xd, x.data(), 2), Buffer(yd, y.data(), 2),
                Buffer(rd, out.data(), 2)},
               &b, &o)
              .empty());
  {
    // A broadcast operand cannot fold.
    kc::rt::Operand* ops[] = {&o[2], &o[0], &o[1]};
    kc::rt::Batch copy = b;
    CHECK_FALSE(kc::rt::FoldBatch(&copy, ops, 3));
    CHECK(copy.count == 4);
  }
  kc::rt::Operand* ops[] = {&o[2], &o[0]};
  REQUIRE(kc::rt::FoldBatch(&b, ops, 2));
  CHECK(b.count == 1);
  auto t = o[0].At<int32_t>(b, 0);
  CHECK(Text(kc::rt::Message() << kc::rt::ShapeOf(t.dimensions())) ==
        "(12, 2)");
  CHECK(t.element_count() == 24);
  CHECK(t.size_bytes() == 96);
  CHECK(t.untyped_data() == x.data());
}

// A pool that runs each task on a thread of its own, and counts them.
struct ThreadPerTask {
  std::vector<std::thread> threads;
  kc_pool Get() {
    return kc_pool{this, [](void*) { return int64_t{4}; },
                   [](void* self, void (*task)(void*), void* arg) {
                     static_cast<ThreadPerTask*>(self)->threads.emplace_back(
                         [task, arg] { task(arg); });
                   }};
  }
};

TEST_CASE("ParallelFor runs every index once, with or without helpers") {
  for (int64_t helpers : {0, 1, 3, 100}) {
    ThreadPerTask pool;
    std::vector<std::atomic<int>> hits(1000);
    kc::rt::ParallelFor(
        1000, helpers, pool.Get(),
        [](void* context, int64_t i) {
          (*static_cast<std::vector<std::atomic<int>>*>(context))[i].fetch_add(
              1);
        },
        &hits);
    for (std::thread& t : pool.threads) t.join();
    for (auto& h : hits) CHECK(h.load() == 1);
    CHECK(pool.threads.size() ==
          static_cast<size_t>(std::min<int64_t>(helpers, 999)));
  }
  const kc_pool refuses{nullptr, [](void*) { return int64_t{4}; },
                        [](void*, void (*)(void*), void*) {
                          FAIL("nothing to schedule");
                        }};
  int calls = 0;
  kc::rt::ParallelFor(
      0, 4, refuses,
      [](void* context, int64_t) { ++*static_cast<int*>(context); }, &calls);
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

// What RunBatch handed to the element function.
struct Seen {
  std::mutex mu;
  std::vector<std::pair<const void*, const void*>> tensors;  // x, out
  std::vector<int64_t> pool_threads;
  std::vector<size_t> counts;  // out's elements
};

void See(void* context, const kc::rt::Tensor<int32_t>* t,
         int64_t pool_threads) {
  Seen& seen = *static_cast<Seen*>(context);
  std::lock_guard<std::mutex> lock(seen.mu);
  seen.tensors.emplace_back(t[0].data, t[1].data);
  seen.pool_threads.push_back(pool_threads);
  seen.counts.push_back(t[1].element_count());
}

// A batched call of a kernel with one input x and one result out (its
// per-element rank 1), run by RunBatch on a pool of two threads.
struct BatchCall {
  std::vector<int64_t> xd, rd;
  std::vector<float> x, out;
  Seen seen;
  kc::rt::Message why;

  BatchCall(std::vector<int64_t> x_dims, std::vector<int64_t> out_dims)
      : xd(std::move(x_dims)), rd(std::move(out_dims)),
        x(static_cast<size_t>(xd[0] * xd[1])),
        out(static_cast<size_t>(rd[0] * rd[1])) {}

  bool Run(bool fold_elementwise) {
    static kc::testing::StdPool pool(2);
    const kc::rt::BatchBuffer buffers[] = {Buffer(xd, x.data(), 1, "x"),
                                           Buffer(rd, out.data(), 1)};
    return kc::rt::RunBatch("k", buffers, 2, 1, fold_elementwise,
                            kc::testing::AsPool(&pool), See, &seen, &why);
  }
};

TEST_CASE("RunBatch runs each element, spread or folded") {
  SECTION("a small batch on the caller, its grids free to use the pool") {
    BatchCall call({1, 5}, {3, 5});
    REQUIRE(call.Run(false));
    REQUIRE(call.seen.tensors.size() == 3);
    for (int i = 0; i < 3; ++i) {
      CHECK(call.seen.tensors[i].first == call.x.data());
      CHECK(call.seen.tensors[i].second == call.out.data() + 5 * i);
      CHECK(call.seen.pool_threads[i] == 2);
    }
  }
  SECTION("elementwise on one thread: one element, folded") {
    BatchCall call({3, 5}, {3, 5});
    REQUIRE(call.Run(true));
    REQUIRE(call.seen.tensors.size() == 1);
    CHECK(call.seen.counts[0] == 15);
  }
  SECTION("a large batch over the pool, each element's grid alone") {
    BatchCall call({64, 4096}, {64, 4096});
    REQUIRE(call.Run(true));
    REQUIRE(call.seen.tensors.size() == 64);
    std::vector<const void*> outs;
    for (size_t i = 0; i < 64; ++i) {
      CHECK(call.seen.pool_threads[i] == 0);
      outs.push_back(call.seen.tensors[i].second);
    }
    std::sort(outs.begin(), outs.end());
    for (size_t i = 0; i < 64; ++i)
      CHECK(outs[i] == call.out.data() + 4096 * i);
  }
  SECTION("a batch that does not plan runs nothing") {
    BatchCall call({2, 5}, {3, 5});
    CHECK_FALSE(call.Run(false));
    CHECK(Text(call.why) ==
          "k: parameter 'x' has batch dimension 0 = 2, expected 3 or 1");
    CHECK(call.seen.tensors.empty());
  }
}

}  // namespace
