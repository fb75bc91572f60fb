#include "compiler/backends/ptx_backend.h"

#include <catch2/catch.hpp>

#include "compiler/model/ptx_abi.h"

namespace kernelc::backends {
namespace {

constexpr const char* kPtx = R"ptx(
.version 9.0
.target sm_80
.address_size 64

	// .globl	k
.visible .entry k_helper(
	.param .u64 a
)
{
	ret;
}

.visible .entry k(
	.param .u64 k_param_0,
	.param .f32 k_param_1,
	.param .align 8 .b8 k_param_2[24],
	.param .u64 .ptr.global.align 4 k_param_3,
	.param .u8 k_param_4
)
{
	ret;
}
.visible .entry empty()
{
	ret;
}
)ptx";

TEST_CASE("The parameters of a PTX .entry, by size") {
  CHECK(PtxEntryParamBytes(kPtx, "k") == std::vector<int>{8, 4, 24, 8, 1});
  CHECK(PtxEntryParamBytes(kPtx, "k_helper") == std::vector<int>{8});
  CHECK(PtxEntryParamBytes(kPtx, "empty") == std::vector<int>{});
  // A prefix of an entry's name, or a name in a comment, is no entry.
  CHECK_FALSE(PtxEntryParamBytes(kPtx, "k_").has_value());
  CHECK_FALSE(PtxEntryParamBytes(kPtx, "globl").has_value());
}

TEST_CASE("The architecture a PTX module targets") {
  CHECK(PtxTarget(kPtx) == 80);
  CHECK(PtxTarget(".version 7.0\n") == 0);
}

TEST_CASE("The parameter block of each PTX ABI") {
  model::Kernel k;
  k.name = "k";
  k.ptx = model::PtxCode{"k.ptx", "k", model::PtxAbi::kKernelc, {}};
  model::Param x{"x", model::Role::kIn, model::DType::kF32};
  model::Param v{"v", model::Role::kOut, model::DType::kF32,
                 model::Access::kView, 2};
  model::Param s{"s", model::Role::kScalar, model::DType::kF16};
  k.params = {x, v, s};
  auto sizes = [&k] {
    std::vector<int> out;
    for (const model::PtxParam& p : model::PtxEntryParams(k, {1, 2, 0}))
      out.push_back(p.bytes);
    return out;
  };
  // A pointer, a kc::cuda::View<2> (data and two extents), a half.
  CHECK(sizes() == std::vector<int>{8, 24, 2});
  // Numba's arrays: 5 + 2 * rank words each.
  k.ptx->abi = model::PtxAbi::kNumba;
  CHECK(sizes() == std::vector<int>{8, 8, 8, 8, 8, 8, 8,              // x
                                    8, 8, 8, 8, 8, 8, 8, 8, 8, 2});  // v, s
  CHECK(model::PtxEntryParams(k, {1, 2, 0})[6].what == "strides[0] of 'x'");
}

}  // namespace
}  // namespace kernelc::backends
