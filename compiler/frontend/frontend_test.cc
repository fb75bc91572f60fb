#include "compiler/frontend/frontend.h"

#include <catch2/catch.hpp>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <string>
#include <utility>
#include <vector>

#include "compiler/frontend/frontend_test_util.h"
#include "compiler/model/json.h"

namespace kernelc::frontend {
namespace {

using model::Access;
using model::DType;
using model::KernelKind;
using model::Role;
using testing::Loc;
using testing::Parse;
using testing::Parsed;
using testing::ParseOk;

TEST_CASE("DefaultOptions maps kernelc's headers") {
  Options o = DefaultOptions();
  bool kernelc_h = false, fp16 = false;
  for (const VirtualFile& f : o.virtual_files) {
    if (f.path == "/__kernelc__/include/kernelc.h") kernelc_h = true;
    if (f.path == "/__kernelc__/host_include/cuda_fp16.h") fp16 = true;
  }
  CHECK(kernelc_h);
  CHECK(fp16);
  CHECK(o.kernelc_include_dir == "/__kernelc__/include");
  CHECK(o.host_include_dir == "/__kernelc__/host_include");
  CHECK(o.cuda_shim_dir == "/__kernelc__/cuda_shim");
  CHECK(o.dialect == Options::Dialect::kHost);
}

TEST_CASE("saxpy: pointer roles, a scalar, a derived length, grid and block") {
  const std::string src = R"(#include <kernelc.h>

KC_GRID("out.size")
KC_BLOCK(256)
__global__ void saxpy(KC_IN("n") const float* x,
                      KC_IN("n") const float* y,
                      float a,
                      KC_DERIVED("x.size") int64_t n,
                      KC_OUT("x") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
)";
  model::Module m = ParseOk("saxpy.cu", src);
  CHECK(m.sources == std::vector<std::string>{"saxpy.cu"});
  REQUIRE(m.kernels.size() == 1);
  const model::Kernel& k = m.kernels[0];
  CHECK(k.name == "saxpy");
  CHECK(k.kind == KernelKind::kGlobal);
  CHECK(k.source == "saxpy.cu");
  CHECK(Loc(k.loc) == "saxpy.cu:5:17");
  REQUIRE(k.grid.size() == 1);
  CHECK(k.grid[0].text == "out.size");
  CHECK(Loc(k.grid[0].loc) == "saxpy.cu:3:10");
  CHECK(k.block == std::vector<int64_t>{256});
  CHECK(k.block_features.empty());
  REQUIRE(k.params.size() == 5);

  const model::Param& x = k.params[0];
  CHECK(x.name == "x");
  CHECK(x.role == Role::kIn);
  CHECK(x.dtype == DType::kF32);
  CHECK(x.access == Access::kPointer);
  CHECK(x.rank == -1);
  REQUIRE(x.shape);
  CHECK(x.shape->text == "n");
  CHECK(Loc(x.shape->loc) == "saxpy.cu:5:30");
  CHECK_FALSE(x.init);
  CHECK_FALSE(x.derived);
  CHECK(Loc(x.loc) == "saxpy.cu:5:47");

  const model::Param& y = k.params[1];
  CHECK(y.name == "y");
  CHECK(y.role == Role::kIn);
  CHECK(y.dtype == DType::kF32);
  CHECK(y.access == Access::kPointer);
  CHECK(y.rank == -1);
  REQUIRE(y.shape);
  CHECK(y.shape->text == "n");
  CHECK(Loc(y.shape->loc) == "saxpy.cu:6:30");
  CHECK_FALSE(y.init);
  CHECK_FALSE(y.derived);
  CHECK(Loc(y.loc) == "saxpy.cu:6:47");

  const model::Param& a = k.params[2];
  CHECK(a.name == "a");
  CHECK(a.role == Role::kScalar);
  CHECK(a.dtype == DType::kF32);
  CHECK_FALSE(a.shape);
  CHECK_FALSE(a.init);
  CHECK_FALSE(a.derived);
  CHECK(Loc(a.loc) == "saxpy.cu:7:29");

  const model::Param& n = k.params[3];
  CHECK(n.name == "n");
  CHECK(n.role == Role::kDerived);
  CHECK(n.dtype == DType::kI64);
  CHECK_FALSE(n.shape);
  CHECK_FALSE(n.init);
  REQUIRE(n.derived);
  CHECK(n.derived->text == "x.size");
  CHECK(Loc(n.derived->loc) == "saxpy.cu:8:35");
  CHECK(Loc(n.loc) == "saxpy.cu:8:52");

  const model::Param& out = k.params[4];
  CHECK(out.name == "out");
  CHECK(out.role == Role::kOut);
  CHECK(out.dtype == DType::kF32);
  CHECK(out.access == Access::kPointer);
  CHECK(out.rank == -1);
  REQUIRE(out.shape);
  CHECK(out.shape->text == "x");
  CHECK(Loc(out.shape->loc) == "saxpy.cu:9:31");
  CHECK_FALSE(out.init);
  CHECK_FALSE(out.derived);
  CHECK(Loc(out.loc) == "saxpy.cu:9:42");
}

TEST_CASE("views take role and rank from their type, and KC_SHAPE") {
  const std::string src = R"(#include <kernelc.h>
using Matrix = kc::In<float, 2>;
typedef kc::InMut<double, 1> Accumulator;
KC_GRID("c.shape[1]", "c.shape[0]") KC_BLOCK(16, 16)
__global__ void views(KC_SHAPE("m, k") Matrix a,
                      Accumulator acc,
                      const kc::In<uint8_t, 0> flag,
                      KC_SHAPE("m, n") kc::Out<float, 2> c) {}
)";
  model::Module m = ParseOk("views.cu", src);
  REQUIRE(m.kernels.size() == 1);
  const model::Kernel& k = m.kernels[0];
  REQUIRE(k.grid.size() == 2);
  CHECK(k.grid[0].text == "c.shape[1]");
  CHECK(Loc(k.grid[0].loc) == "views.cu:4:10");
  CHECK(k.grid[1].text == "c.shape[0]");
  CHECK(Loc(k.grid[1].loc) == "views.cu:4:24");
  CHECK(k.block == std::vector<int64_t>{16, 16});
  REQUIRE(k.params.size() == 4);

  const model::Param& a = k.params[0];
  CHECK(a.role == Role::kIn);
  CHECK(a.access == Access::kView);
  CHECK(a.rank == 2);
  CHECK(a.dtype == DType::kF32);
  REQUIRE(a.shape);
  CHECK(a.shape->text == "m, k");
  CHECK(Loc(a.shape->loc) == "views.cu:5:33");
  CHECK(Loc(a.loc) == "views.cu:5:47");

  const model::Param& acc = k.params[1];
  CHECK(acc.role == Role::kInMut);
  CHECK(acc.access == Access::kView);
  CHECK(acc.rank == 1);
  CHECK(acc.dtype == DType::kF64);
  CHECK_FALSE(acc.shape);  // an input's shape may be left unstated

  const model::Param& flag = k.params[2];
  CHECK(flag.role == Role::kIn);
  CHECK(flag.rank == 0);
  CHECK(flag.dtype == DType::kU8);

  const model::Param& c = k.params[3];
  CHECK(c.role == Role::kOut);
  CHECK(c.access == Access::kView);
  CHECK(c.rank == 2);
  REQUIRE(c.shape);
  CHECK(c.shape->text == "m, n");
}

TEST_CASE("a host kernel") {
  const std::string src = R"(#include <kernelc.h>
#include <cmath>

KC_KERNEL void histogram(KC_SHAPE("rows, cols") kc::In<float, 2> values,
                         float lo, float hi, int64_t bins,
                         KC_SHAPE("rows, bins") KC_INIT(0) kc::Out<int32_t, 2> counts) {
  const float width = (hi - lo) / static_cast<float>(bins);
  for (int64_t r = 0; r < values.shape[0]; ++r)
    for (int64_t c = 0; c < values.shape[1]; ++c) {
      float v = values(r, c);
      if (!(v >= lo && v < hi)) continue;
      int64_t b = static_cast<int64_t>(std::floor((v - lo) / width));
      counts(r, b < bins ? b : bins - 1) += 1;
    }
}
)";
  model::Module m = ParseOk("histogram.cc", src);
  REQUIRE(m.kernels.size() == 1);
  const model::Kernel& k = m.kernels[0];
  CHECK(k.name == "histogram");
  CHECK(k.kind == KernelKind::kHost);
  CHECK(k.grid.empty());
  CHECK(k.block.empty());
  CHECK(Loc(k.loc) == "histogram.cc:4:16");
  REQUIRE(k.params.size() == 5);
  CHECK(k.params[0].role == Role::kIn);
  CHECK(k.params[0].shape->text == "rows, cols");
  CHECK(k.params[1].role == Role::kScalar);
  CHECK(k.params[1].dtype == DType::kF32);
  CHECK(k.params[3].role == Role::kScalar);
  CHECK(k.params[3].dtype == DType::kI64);
  const model::Param& counts = k.params[4];
  CHECK(counts.role == Role::kOut);
  CHECK(counts.dtype == DType::kI32);
  CHECK(counts.rank == 2);
  REQUIRE(counts.init);
  CHECK(counts.init->text == "0");
  CHECK(Loc(counts.init->loc) == "histogram.cc:6:57");
}

TEST_CASE("element and scalar types") {
  const std::string src = R"(#include <kernelc.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
KC_KERNEL void types(KC_IN("n") const bool* b, KC_IN("n") const int8_t* i8,
                     KC_IN("n") const int16_t* i16, KC_IN("n") const int32_t* i32,
                     KC_IN("n") const int64_t* i64, KC_IN("n") const uint8_t* u8,
                     KC_IN("n") const uint16_t* u16, KC_IN("n") const uint32_t* u32,
                     KC_IN("n") const uint64_t* u64, KC_IN("n") const float* f32,
                     KC_IN("n") const double* f64, KC_IN("n") const __half* f16,
                     KC_OUT("n") __nv_bfloat16* __restrict__ bf16,
                     KC_SHAPE("n") kc::In<kc::half, 1> view16,
                     KC_IN("n") const signed char* sc, KC_IN("n") const long long* ll,
                     KC_IN("n") const unsigned long* ul, KC_IN("n") const float x[],
                     bool s_b, int8_t s_i8, int16_t s_i16, int32_t s_i32,
                     int64_t s_i64, uint8_t s_u8, uint16_t s_u16, uint32_t s_u32,
                     uint64_t s_u64, float s_f32, const double s_f64,
                     unsigned char s_uc, long s_l) {}
)";
  model::Module m = ParseOk("types.cu", src);
  REQUIRE(m.kernels.size() == 1);
  std::vector<std::pair<std::string, DType>> got;
  for (const model::Param& p : m.kernels[0].params)
    got.emplace_back(p.name, p.dtype);
  std::vector<std::pair<std::string, DType>> want = {
      {"b", DType::kBool},    {"i8", DType::kI8},      {"i16", DType::kI16},
      {"i32", DType::kI32},   {"i64", DType::kI64},    {"u8", DType::kU8},
      {"u16", DType::kU16},   {"u32", DType::kU32},    {"u64", DType::kU64},
      {"f32", DType::kF32},   {"f64", DType::kF64},    {"f16", DType::kF16},
      {"bf16", DType::kBF16}, {"view16", DType::kF16}, {"sc", DType::kI8},
      {"ll", DType::kI64},    {"ul", DType::kU64},     {"x", DType::kF32},
      {"s_b", DType::kBool},  {"s_i8", DType::kI8},    {"s_i16", DType::kI16},
      {"s_i32", DType::kI32}, {"s_i64", DType::kI64},  {"s_u8", DType::kU8},
      {"s_u16", DType::kU16}, {"s_u32", DType::kU32},  {"s_u64", DType::kU64},
      {"s_f32", DType::kF32}, {"s_f64", DType::kF64},  {"s_uc", DType::kU8},
      {"s_l", DType::kI64},
  };
  CHECK(got == want);
  for (const model::Param& p : m.kernels[0].params)
    CHECK(p.role == (p.name.rfind("s_", 0) == 0 ? Role::kScalar
                     : p.name == "bf16"         ? Role::kOut
                                                : Role::kIn));
}

TEST_CASE("KC_INIT values are evaluated and printed canonically") {
  const std::string src = R"(#include <kernelc.h>
KC_KERNEL void fill(KC_OUT("n") KC_INIT(-1) int32_t* a,
                    KC_OUT("n") KC_INIT(1.5f) float* b,
                    KC_OUT("n") KC_INIT(0.1f) float* c,
                    KC_OUT("n") KC_INIT(2.0) double* d,
                    KC_OUT("n") KC_INIT(1 << 4) int64_t* e,
                    KC_OUT("n") KC_INIT(18446744073709551615ull) uint64_t* f,
                    KC_OUT("n") KC_INIT(__builtin_inff()) float* g,
                    KC_OUT("n") KC_INIT(-__builtin_inf()) double* h,
                    KC_OUT("n") KC_INIT(__builtin_nanf("")) float* i,
                    KC_OUT("n") KC_INIT(true) bool* j,
                    KC_SHAPE("n") KC_INIT(1e300) kc::Out<double, 1> k) {}
)";
  model::Module m = ParseOk("fill.cc", src);
  REQUIRE(m.kernels.size() == 1);
  std::vector<std::string> got;
  for (const model::Param& p : m.kernels[0].params) {
    REQUIRE(p.init);
    got.push_back(p.init->text);
  }
  CHECK(got == std::vector<std::string>{"-1", "1.5", "0.10000000149011612", "2",
                                        "16", "18446744073709551615", "inf",
                                        "-inf", "nan", "1",
                                        "1.0000000000000001e+300"});
  CHECK(Loc(m.kernels[0].params[0].init->loc) == "fill.cc:2:41");
  CHECK(Loc(m.kernels[0].params[10].init->loc) == "fill.cc:12:43");
}

TEST_CASE("block-level features: first use of each, in source order") {
  const std::string src = R"(#include <kernelc.h>
__device__ float WarpSum(float v) {
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
KC_GRID("n") KC_BLOCK(256)
__global__ void reduce(KC_IN("n") const float* x, KC_OUT("1") float* out) {
  __shared__ float partial[256];
  partial[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
  __syncthreads();
  float s = WarpSum(partial[threadIdx.x]);
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(out, s);
}
KC_GRID("x.size")
__global__ void copy(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i];
}
)";
  model::Module m = ParseOk("reduce.cu", src);
  REQUIRE(m.kernels.size() == 2);
  const model::Kernel& k = m.kernels[0];
  REQUIRE(k.block_features.size() == 3);
  CHECK(k.block_features[0].what == "__shfl_down_sync");
  CHECK(Loc(k.block_features[0].loc) == "reduce.cu:4:10");
  CHECK(k.block_features[1].what == "__shared__");
  CHECK(Loc(k.block_features[1].loc) == "reduce.cu:9:20");
  CHECK(k.block_features[2].what == "__syncthreads");
  CHECK(Loc(k.block_features[2].loc) == "reduce.cu:11:3");
  CHECK(m.kernels[1].name == "copy");
  CHECK(m.kernels[1].block_features.empty());
}

TEST_CASE("extern __shared__ arrays: namespace, name and element type") {
  const std::string src = R"(#include <kernelc.h>
extern __shared__ double at_file_scope[];
namespace ops {
struct Pair { float a, b; };
namespace {
template <typename T>
struct Shared {
  __device__ operator T*() {
    extern __shared__ unsigned char raw[];
    return reinterpret_cast<T*>(raw);
  }
};
}  // namespace
__device__ Pair* pairs() {
  extern __shared__ Pair pair_smem[];
  return pair_smem;
}
}  // namespace ops
KC_GRID("n") KC_BLOCK(64) KC_SHARED_BYTES("64 * 8")
__global__ void k(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  extern __shared__ __half halves[];
  float* s = ops::Shared<float>();
  s[threadIdx.x] = x[threadIdx.x];
  halves[threadIdx.x] = __half(1.0f);
  ops::pairs()[threadIdx.x].a = at_file_scope[0];
  __syncthreads();
  y[threadIdx.x] = s[63 - threadIdx.x];
}
KC_GRID("n") KC_BLOCK(64)
__global__ void none(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  __shared__ float s[64];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  y[threadIdx.x] = s[63 - threadIdx.x];
}
)";
  model::Module m = ParseOk("dyn.cu", src);
  REQUIRE(m.kernels.size() == 2);
  const std::vector<model::ExternShared>& e = m.kernels[0].extern_shared;
  REQUIRE(e.size() == 4);
  CHECK(e[0].namespaces.empty());
  CHECK(e[0].name == "at_file_scope");
  CHECK(e[0].type == "double");
  CHECK(e[1].name == "halves");
  CHECK(e[1].type == "__half");
  CHECK(e[2].namespaces == std::vector<std::string>{"ops"});
  CHECK(e[2].name == "pair_smem");
  CHECK(e[2].type == "::ops::Pair");
  CHECK(e[3].namespaces == std::vector<std::string>{"ops", ""});
  CHECK(e[3].name == "raw");
  CHECK(e[3].type == "unsigned char");
  CHECK(m.kernels[1].extern_shared.empty());
}

TEST_CASE("cooperative groups: features at the user's call, grid barriers") {
  const std::string src = R"(#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <kernelc.h>
namespace cg = cooperative_groups;
KC_GRID("n") KC_BLOCK(64)
__global__ void tile_sum(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  float v = cg::reduce(tile, x[block.thread_rank()], cg::plus<float>());
  block.sync();
  y[block.thread_rank()] = v;
}
KC_GRID("n") KC_BLOCK(64)
__global__ void grid_wide(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  cg::grid_group grid = cg::this_grid();
  y[grid.thread_rank()] = x[grid.thread_rank()];
  grid.sync();
}
)";
  model::Module m = ParseOk("cg.cu", src);
  REQUIRE(m.kernels.size() == 2);
  std::vector<std::string> got;
  for (const model::BlockFeature& f : m.kernels[0].block_features)
    got.push_back(f.what + " " + Loc(f.loc));
  // Inside the stand-in headers, read as system headers, each use is
  // reported where the kernel calls into them.
  CHECK(got == std::vector<std::string>{"cooperative_groups::reduce cg.cu:9:17",
                                        "__syncthreads cg.cu:10:3"});
  REQUIRE(m.kernels[1].block_features.size() == 1);
  CHECK(m.kernels[1].block_features[0].what == model::kGridSync);
  CHECK(Loc(m.kernels[1].block_features[0].loc) == "cg.cu:17:8");
}

TEST_CASE("libstdc++ headers after kernelc.h keep their attributes") {
  const std::string src = R"(#include <kernelc.h>
#include <memory>
#include <regex>
__noinline__ __device__ float twice(float v) { return 2 * v; }
KC_GRID("n")
__global__ void k(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  std::unique_ptr<int> p;
  y[threadIdx.x] = twice(x[threadIdx.x]);
}
)";
  CHECK(ParseOk("memory.cu", src).kernels.size() == 1);
}

TEST_CASE("helper kernels and kernels in headers are not exported") {
  Options o = DefaultOptions();
  o.include_dirs = {"inc"};
  o.defines = {"WITH_EXTRA", "EXTRA_BLOCK=128"};
  const std::string header = R"(#include <kernelc.h>
KC_KERNEL void in_header(KC_IN("n") const float* x) {}
)";
  o.virtual_files.push_back({"inc/lib.h", header});
  const std::string src = R"(#include "lib.h"
__global__ void helper(float* x) { x[0] = 0; }
template <typename T> __global__ void generic_helper(T* x) {}
#ifdef WITH_EXTRA
KC_GRID("x.size") KC_BLOCK(EXTRA_BLOCK)
__global__ void extra(KC_IN("n") const float* x) { helper(nullptr); }
#endif
)";
  Parsed p = Parse({{"main.cu", src}}, o);
  INFO(p.diagnostics);
  REQUIRE(p.result.ok());
  const model::Module& m = p.result.value();
  REQUIRE(m.kernels.size() == 1);
  CHECK(m.kernels[0].name == "extra");
  CHECK(m.kernels[0].block == std::vector<int64_t>{128});
}

TEST_CASE("several sources: kernels in source order") {
  const std::string a = R"(#include <kernelc.h>
KC_KERNEL void first(KC_IN("n") const float* x) {}
KC_KERNEL void second(KC_IN("n") const float* x) {}
)";
  const std::string b = R"(#include <kernelc.h>
KC_GRID("n") __global__ void third(KC_IN("n") const float* x) {}
)";
  Parsed p = Parse({{"a.cc", a}, {"dir/b.cu", b}});
  INFO(p.diagnostics);
  REQUIRE(p.result.ok());
  const model::Module& m = p.result.value();
  CHECK(m.sources == std::vector<std::string>{"a.cc", "dir/b.cu"});
  REQUIRE(m.kernels.size() == 3);
  CHECK(m.kernels[0].name == "first");
  CHECK(m.kernels[0].source == "a.cc");
  CHECK(m.kernels[1].name == "second");
  CHECK(m.kernels[2].name == "third");
  CHECK(m.kernels[2].source == "dir/b.cu");
  CHECK(Loc(m.kernels[2].loc) == "dir/b.cu:2:30");
}

TEST_CASE("KC_VJP, KC_PARALLEL and KC_ELEMENTWISE on kernels") {
  const std::string src = R"(#include <kernelc.h>

KC_GRID("n") KC_VJP("f_bwd") KC_PARALLEL("n", "m") KC_ELEMENTWISE
__global__ void f(KC_IN("n") const float* x, KC_OUT("n") float* y) {}

KC_KERNEL KC_PARALLEL("n") KC_JVP("g")
void f_bwd(KC_IN("n") const float* d_y, KC_OUT("n") float* d_x) {}
)";
  model::Module m = ParseOk("f.cu", src);
  REQUIRE(m.kernels.size() == 2);
  const model::Kernel& f = m.kernels[0];
  REQUIRE(f.vjp);
  CHECK(f.vjp->text == "f_bwd");
  CHECK(Loc(f.vjp->loc) == "f.cu:3:22");
  REQUIRE(f.parallel.size() == 2);
  CHECK(f.parallel[0].text == "n");
  CHECK(f.parallel[1].text == "m");
  CHECK(Loc(f.parallel[1].loc) == "f.cu:3:48");
  CHECK(f.elementwise);
  const model::Kernel& b = m.kernels[1];
  CHECK(!b.vjp);
  CHECK(!f.jvp);
  REQUIRE(b.jvp);
  CHECK(b.jvp->text == "g");
  CHECK(Loc(b.jvp->loc) == "f.cu:6:36");
  CHECK(!b.elementwise);
  REQUIRE(b.parallel.size() == 1);
}

TEST_CASE("a source that opens with kernelc.h reads the same with it precompiled") {
  llvm::SmallString<128> dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("kernelc-prelude", dir));
  const std::string source = R"(// saxpy
#include <kernelc.h>

KC_GRID("n")
KC_BLOCK(256)
__global__ void saxpy(KC_IN("n") const float* x, float a,
                      KC_OUT("x") float* y, int64_t n) {
  const int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + sinf(y[i]);
}
)";
  std::vector<std::string> whole_deps;
  Options whole = DefaultOptions();
  whole.dependencies = &whole_deps;
  Parsed expected = Parse({{"saxpy.cu", source}}, whole);
  REQUIRE(expected.result.ok());
  for (int round = 0; round < 2; ++round) {  // made, then read
    INFO("round " << round);
    std::vector<std::string> deps;
    Options precompiled = DefaultOptions();
    precompiled.prelude_dir = std::string(dir);
    precompiled.dependencies = &deps;
    Parsed p = Parse({{"saxpy.cu", source}}, precompiled);
    REQUIRE(p.result.ok());
    CHECK(p.diagnostics == expected.diagnostics);
    CHECK(model::ToCanonicalJson(p.result.value()) ==
          model::ToCanonicalJson(expected.result.value()));
    // Nothing of the precompiled header is the source's.
    CHECK(deps == whole_deps);
    std::error_code ec;
    int headers = 0;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
         it.increment(ec))
      headers += llvm::StringRef(it->path()).ends_with(".pch");
    CHECK(headers == 1);
  }
  llvm::sys::fs::remove_directories(dir);
}

}  // namespace
}  // namespace kernelc::frontend
