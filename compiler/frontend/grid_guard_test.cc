// The guard finder on kernel bodies: the forms it proves, and near misses
// that it must not take for a guard.
#include "compiler/frontend/grid_guard.h"

#include <catch2/catch.hpp>
#include <string>

#include "compiler/frontend/frontend_test_util.h"

namespace kernelc::frontend {
namespace {

using testing::Loc;
using testing::ParseOk;

// The guard of a kernel `k(const float* x, int64_t n, int32_t m, float* out)`
// whose body is `body`.
std::optional<model::GridGuard> GuardOf(const std::string& body) {
  const std::string src = R"(#include <kernelc.h>
KC_GRID("n")
__global__ void k(KC_IN("n") const float* x, int64_t n, int32_t m,
                  KC_OUT("x") float* out) {
)" + body + "\n}\n";
  model::Module module = ParseOk("k.cu", src);
  REQUIRE(module.kernels.size() == 1);
  return module.kernels[0].guard;
}

TEST_CASE("grid guard: `if (i < n)` on the canonical 64-bit index") {
  std::optional<model::GridGuard> g = GuardOf(
      "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = x[i];");
  REQUIRE(g);
  CHECK(g->bound == "n");
  CHECK(g->index_bits == 64);
  CHECK(g->index_signed);
  CHECK(Loc(g->loc) == "k.cu:6:7");
}

TEST_CASE("grid guard: the forms it proves") {
  // A 32-bit index: exact below 2^31.
  std::optional<model::GridGuard> g =
      GuardOf("  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
              "  if (i >= m) return;\n  out[i] = x[i];");
  REQUIRE(g);
  CHECK(g->bound == "m");
  CHECK(g->index_bits == 32);
  CHECK(g->index_signed);
  // Operands in another order, turned-around comparisons, unsigned.
  g = GuardOf("  unsigned i = threadIdx.x + blockDim.x * blockIdx.x;\n"
              "  if (n > i) { out[i] = x[i]; }");
  REQUIRE(g);
  CHECK(g->index_bits == 32);
  CHECK(!g->index_signed);
  g = GuardOf("  const float two = 2.0f;\n"
              "  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;\n"
              "  if (n <= i) { return; }\n  out[i] = two * x[i];");
  REQUIRE(g);
  CHECK(g->index_bits == 64);
  CHECK(!g->index_signed);
  // A 64-bit variable whose product is computed in 32 bits: exact only
  // below 2^32.
  g = GuardOf("  int64_t i = blockIdx.x * blockDim.x + threadIdx.x;\n"
              "  if (i < n) out[i] = x[i];");
  REQUIRE(g);
  CHECK(g->index_bits == 32);
  CHECK(!g->index_signed);
}

TEST_CASE("grid guard: near misses are no guard") {
  const char* const bodies[] = {
      // `<=` lets thread n run.
      "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
      "  if (i <= n) out[i] = x[i];",
      // A bound that is not a parameter.
      "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
      "  int64_t half = n / 2;\n  if (i < half) out[i] = x[i];",
      // Another index: the thread's index in its block, the block's.
      "  int64_t i = threadIdx.x;\n  if (i < n) out[i] = x[i];",
      "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
      "  int64_t j = i + 1;\n  if (j < n) out[i] = x[i];",
      "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.y;\n"
      "  if (i < n) out[i] = x[i];",
      "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
      "  if (blockIdx.x < n) out[i] = x[i];",
      // A grid-stride loop.
      "  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;"
      " i < n; i += blockDim.x * gridDim.x)\n    out[i] = x[i];",
      // A side effect before the guard.
      "  out[0] = 1.0f;\n"
      "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = x[i];",
      "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
      "  float v = (out[0] = 2.0f);\n  if (i < n) out[i] = v * x[i];",
      // A statement after `if (i < n) ...`.
      "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = x[i];\n  out[0] = 0.0f;",
      // An else, or a guard that does more than return.
      "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = x[i]; else out[0] = 0.0f;",
      "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
      "  if (i >= n) { out[0] = 0.0f; return; }\n  out[i] = x[i];",
      // An index narrower than 32 bits.
      "  short i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = x[i];",
  };
  for (const char* body : bodies) {
    INFO(body);
    CHECK(!GuardOf(body));
  }
}

}  // namespace
}  // namespace kernelc::frontend
