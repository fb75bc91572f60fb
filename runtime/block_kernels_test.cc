// Block-level kernels written as CUDA sources (testdata/*.cu), compiled for
// the CPU as kernelc compiles them and run under the block executor: each
// result checked against a plain C++ reference, with the launch run on the
// calling thread alone and spread over a pool of OS threads.
#include <stdint.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/std_pool.h"
#include "runtime/testdata/cg_kernels.cu"
#include "runtime/testdata/dynamic_shared.cu"
#include "runtime/testdata/histogram.cu"
#include "runtime/testdata/layernorm.cu"
#include "runtime/testdata/matmul.cu"
#include "runtime/testdata/reduce.cu"
#include "runtime/testdata/scan.cu"
#include "runtime/testdata/softmax.cu"
#include "runtime/testdata/transpose.cu"

// The storage of the sources' `extern __shared__` arrays, as the generated
// code defines it.
KC_HOST_EXTERN_SHARED(unsigned char, reduce_smem);
KC_HOST_EXTERN_SHARED(double, reverse_smem);

namespace {

using kc::testing::RunLaunch;
using kc::testing::StdPool;

StdPool& Pool() {
  static StdPool pool(3);
  return pool;
}

// Runs a block kernel over `grid` x `block` on the calling thread alone and
// on the pool; both must succeed and give the same `out` (a function of the
// kernel's outputs, which `reset` clears before each run).
template <typename Thread, typename Reset, typename Out>
auto RunBoth(kc_dim3 grid, kc_dim3 block, uint64_t shared, Reset reset,
             const Thread& thread, Out out) {
  reset();
  REQUIRE(RunLaunch(kc_launch{grid, block}, true, nullptr, shared, "kernel",
                    thread) == "");
  const auto alone = out();
  reset();
  REQUIRE(RunLaunch(kc_launch{grid, block}, true, &Pool(), shared, "kernel",
                    thread) == "");
  CHECK(out() == alone);
  return alone;
}

template <typename T>
std::vector<T> Random(size_t n, double lo, double hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(gen));
  return v;
}

template <typename T>
double Tolerance() {
  return std::is_same_v<T, double> ? 1e-12 : 1e-5;
}

// |got - want| within a relative tolerance of the larger magnitude.
template <typename T>
bool Near(double got, double want, double scale = 1.0) {
  return std::fabs(got - want) <=
         Tolerance<T>() * std::max({1.0, std::fabs(want), scale});
}

template <typename T>
void CheckReductions() {
  const int64_t n = 100003;
  const std::vector<T> x = Random<T>(n, -1, 1, 7);
  double total = 0, scale = 0;
  for (T v : x) {
    total += v;
    scale += std::fabs(static_cast<double>(v));
  }
  const uint32_t blocks = 24;
  std::vector<T> partial(blocks);
  auto reset = [&] { std::fill(partial.begin(), partial.end(), T(-1)); };
  auto sum = [&] {
    double s = 0;
    for (T p : partial) s += p;
    return s;
  };
  SECTION("shared-memory tree") {
    RunBoth(
        {blocks, 1, 1}, {256, 1, 1}, 0, reset,
        [&] { reduce_tree<T, 256>(x.data(), n, partial.data()); }, sum);
  }
  SECTION("warp shuffles") {
    RunBoth(
        {blocks, 1, 1}, {192, 1, 1}, 0, reset,
        [&] { reduce_shuffle<T>(x.data(), n, partial.data()); }, sum);
  }
  SECTION("cooperative groups and dynamic shared memory") {
    RunBoth(
        {blocks, 1, 1}, {128, 1, 1}, 128 * sizeof(T), reset,
        [&] { reduce_samples<T>(x.data(), n, partial.data()); }, sum);
  }
  // Each block's partial sum against its own slice's.
  double check = 0;
  for (T p : partial) check += p;
  CHECK(Near<T>(check, total, scale));
}

TEST_CASE("block reductions: float", "[kernels]") { CheckReductions<float>(); }
TEST_CASE("block reductions: double", "[kernels]") {
  CheckReductions<double>();
}

TEST_CASE("a block's partial sums are its own slice's", "[kernels]") {
  const int64_t n = 5000;
  std::vector<double> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<double>(i % 97);
  const uint32_t blocks = 7;
  std::vector<double> partial(blocks), want(blocks, 0.0);
  for (int64_t i = 0; i < n; ++i) want[(i / 256) % blocks] += x[i];
  RunBoth(
      {blocks, 1, 1}, {256, 1, 1}, 0, [] {},
      [&] { reduce_tree<double, 256>(x.data(), n, partial.data()); },
      [&] { return partial; });
  CHECK(partial == want);
}

template <typename T>
void CheckScans() {
  const int64_t n = 3000;
  std::vector<T> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<T>((i * 7) % 11) - T(5);
  std::vector<T> out(n);
  auto reset = [&] { std::fill(out.begin(), out.end(), T(-99)); };
  auto result = [&] { return out; };
  SECTION("within warps") {
    RunBoth(
        {(n + 127) / 128, 1, 1}, {128, 1, 1}, 0, reset,
        [&] { warp_scan<T>(x.data(), n, out.data()); }, result);
    for (int64_t i = 0; i < n; ++i) {
      T want = 0;
      for (int64_t j = i / 32 * 32; j <= i; ++j) want += x[j];
      REQUIRE(out[i] == want);
    }
  }
  SECTION("within blocks") {
    RunBoth(
        {(n + 511) / 512, 1, 1}, {512, 1, 1}, 0, reset,
        [&] { block_scan<T>(x.data(), n, out.data()); }, result);
    for (int64_t i = 0; i < n; ++i) {
      T want = 0;
      for (int64_t j = i / 512 * 512; j <= i; ++j) want += x[j];
      REQUIRE(out[i] == want);
    }
  }
}

TEST_CASE("inclusive scans: int", "[kernels]") { CheckScans<int>(); }
TEST_CASE("inclusive scans: float", "[kernels]") { CheckScans<float>(); }
TEST_CASE("inclusive scans: double", "[kernels]") { CheckScans<double>(); }

template <typename T>
void CheckMatmul() {
  const int m = 37, n = 45, k = 53;
  const std::vector<T> a = Random<T>(size_t{m} * k, -1, 1, 1);
  const std::vector<T> b = Random<T>(size_t{k} * n, -1, 1, 2);
  std::vector<T> c(size_t{m} * n);
  constexpr uint32_t kTile = 16;
  RunBoth(
      {(n + kTile - 1) / kTile, (m + kTile - 1) / kTile, 1}, {kTile, kTile, 1},
      0, [&] { std::fill(c.begin(), c.end(), T(0)); },
      [&] { matmul_tiled<T, kTile>(a.data(), b.data(), c.data(), m, n, k); },
      [&] { return c; });
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int l = 0; l < k; ++l)
        want += static_cast<double>(a[i * k + l]) * b[l * n + j];
      REQUIRE(Near<T>(c[i * n + j], want, k));
    }
  }
}

TEST_CASE("tiled matrix multiply: float", "[kernels]") { CheckMatmul<float>(); }
TEST_CASE("tiled matrix multiply: double", "[kernels]") {
  CheckMatmul<double>();
}

template <typename T>
void CheckTranspose() {
  const int rows = 70, cols = 101;
  std::vector<T> in(size_t{rows} * cols), out(size_t{rows} * cols);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<T>(i);
  RunBoth(
      {(cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM, 1},
      {TILE_DIM, BLOCK_ROWS, 1}, 0,
      [&] { std::fill(out.begin(), out.end(), T(-1)); },
      [&] { transpose_tiled<T>(in.data(), out.data(), rows, cols); },
      [&] { return out; });
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      REQUIRE(out[static_cast<size_t>(c) * rows + r] ==
              in[static_cast<size_t>(r) * cols + c]);
}

TEST_CASE("shared-memory transpose: float", "[kernels]") {
  CheckTranspose<float>();
}
TEST_CASE("shared-memory transpose: double", "[kernels]") {
  CheckTranspose<double>();
}

TEST_CASE("histogram with shared-memory atomics", "[kernels]") {
  const int64_t n = 200000;
  std::vector<unsigned char> data(n);
  std::mt19937 gen(3);
  for (unsigned char& d : data) d = static_cast<unsigned char>(gen() % 200);
  std::vector<unsigned int> want(256, 0), bins(256);
  for (unsigned char d : data) ++want[d];
  RunBoth(
      {40, 1, 1}, {256, 1, 1}, 0,
      [&] { std::fill(bins.begin(), bins.end(), 0u); },
      [&] { histogram256(data.data(), n, bins.data()); }, [&] { return bins; });
  CHECK(bins == want);
}

template <typename T, typename A>
void CheckSoftmax(double tolerance) {
  const int rows = 19, cols = 301;
  const std::vector<float> source =
      Random<float>(size_t{rows} * cols, -8, 8, 5);
  std::vector<T> x(source.size()), y(source.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = T(source[i]);
  RunBoth(
      {rows, 1, 1}, {128, 1, 1}, 0,
      [&] { std::fill(y.begin(), y.end(), T(0.0f)); },
      [&] { softmax_rows<T, A>(x.data(), y.data(), cols); },
      [&] {
        std::vector<double> r;
        for (T v : y) r.push_back(static_cast<double>(static_cast<A>(v)));
        return r;
      });
  for (int r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int c = 0; c < cols; ++c)
      m = std::max(m, static_cast<double>(static_cast<A>(x[r * cols + c])));
    for (int c = 0; c < cols; ++c)
      s += std::exp(static_cast<double>(static_cast<A>(x[r * cols + c])) - m);
    for (int c = 0; c < cols; ++c) {
      const double want =
          std::exp(static_cast<double>(static_cast<A>(x[r * cols + c])) - m) /
          s;
      const double got = static_cast<double>(static_cast<A>(y[r * cols + c]));
      REQUIRE(std::fabs(got - want) <= tolerance * std::max(want, 1e-3));
    }
  }
}

TEST_CASE("row softmax with warp reductions", "[kernels]") {
  SECTION("float") { CheckSoftmax<float, float>(1e-5); }
  SECTION("double") { CheckSoftmax<double, double>(1e-12); }
  SECTION("half, computed in float") { CheckSoftmax<__half, float>(2e-3); }
}

template <typename T>
void CheckLayernorm() {
  const int rows = 45, cols = 200;
  const std::vector<T> x = Random<T>(size_t{rows} * cols, -3, 5, 8);
  const std::vector<T> w = Random<T>(cols, 0.5, 1.5, 9);
  const std::vector<T> b = Random<T>(cols, -1, 1, 10);
  std::vector<T> y(x.size()), mean(rows), rstd(rows);
  const T eps = T(1e-5);
  // Four warps per block, a row per warp: the last block is partly idle.
  RunBoth(
      {(rows + 3) / 4, 1, 1}, {128, 1, 1}, 0,
      [&] { std::fill(y.begin(), y.end(), T(0)); },
      [&] {
        layernorm_rows<T>(x.data(), w.data(), b.data(), y.data(), mean.data(),
                          rstd.data(), rows, cols, eps);
      },
      [&] { return y; });
  for (int r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int c = 0; c < cols; ++c) m += x[r * cols + c];
    m /= cols;
    for (int c = 0; c < cols; ++c)
      v += (x[r * cols + c] - m) * (x[r * cols + c] - m);
    const double s = 1.0 / std::sqrt(v / cols + static_cast<double>(eps));
    REQUIRE(Near<T>(mean[r], m, 10));
    REQUIRE(Near<T>(rstd[r], s, 10));
    for (int c = 0; c < cols; ++c)
      REQUIRE(Near<T>(y[r * cols + c], (x[r * cols + c] - m) * s * w[c] + b[c],
                      10));
  }
}

TEST_CASE("layernorm with cooperative-groups reductions: float", "[kernels]") {
  CheckLayernorm<float>();
}
TEST_CASE("layernorm with cooperative-groups reductions: double", "[kernels]") {
  CheckLayernorm<double>();
}

TEST_CASE("cg::reduce over tiles of 16", "[kernels]") {
  const int64_t n = 40000;
  const std::vector<double> a = Random<double>(n, -1, 1, 11);
  const std::vector<double> b = Random<double>(n, -1, 1, 12);
  double want = 0;
  for (int64_t i = 0; i < n; ++i) want += a[i] * b[i];
  double result = 0;
  // Blocks add to `result` in any order: each run is checked on its own.
  const bool near = RunBoth(
      {16, 1, 1}, {256, 1, 1}, 0, [&] { result = 0; },
      [&] { dot_tiles<double>(a.data(), b.data(), n, &result); },
      [&] { return Near<double>(result, want, 1e4); });
  CHECK(near);
}

TEST_CASE("warp-aggregated atomics over coalesced groups", "[kernels]") {
  const int n = 5000;
  const std::vector<float> x = Random<float>(n, -1, 1, 13);
  std::vector<float> want;
  for (float v : x)
    if (v > 0.0f) want.push_back(v);
  std::vector<float> out(n);
  int count = 0;
  RunBoth(
      {(n + 255) / 256, 1, 1}, {256, 1, 1}, 0,
      [&] {
        count = 0;
        std::fill(out.begin(), out.end(), 0.0f);
      },
      [&] { filter_positive(x.data(), n, out.data(), &count); },
      [&] {
        std::vector<float> got(out.begin(), out.begin() + count);
        std::sort(got.begin(), got.end());
        return got;
      });
  REQUIRE(count == static_cast<int>(want.size()));
  std::vector<float> got(out.begin(), out.begin() + count);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  CHECK(got == want);
}

TEST_CASE("extern __shared__ sized by the launch", "[kernels]") {
  const int64_t n = 1000;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  const uint32_t block = 96;
  RunBoth(
      {(n + block - 1) / block, 1, 1}, {block, 1, 1}, block * sizeof(float),
      [&] { std::fill(y.begin(), y.end(), -1.0f); },
      [&] { reverse_blocks<float>(x.data(), y.data(), n); }, [&] { return y; });
  for (int64_t i = 0; i < n; ++i) {
    const int64_t base = i / block * block;
    const int64_t count = std::min<int64_t>(block, n - base);
    REQUIRE(y[i] == x[base + count - 1 - (i - base)]);
  }
}

}  // namespace
