// Holds the layouts that generated handlers, CPU entry points and kernels
// share. A change that breaks one of these breaks every library generated
// before it: bump KC_RUNTIME_ABI_VERSION with it. The checks are static;
// the test passes when it compiles.
#define __KERNELC_HOST__ 1
#include <cstddef>
#include <cstdint>

#include "kernelc.h"
#include "kernelc/cuda.h"
#include "kernelc/ffi.h"
#include "kernelc/launch.h"

static_assert(KC_RUNTIME_ABI_VERSION == 7, "update the layouts below");

// A handler's signature, as generated handlers hand it to kc::ffi::Accept.
static_assert(sizeof(kc::ffi::Attribute) == 24 &&
                  offsetof(kc::ffi::Attribute, name) == 0 &&
                  offsetof(kc::ffi::Attribute, size) == 8 &&
                  offsetof(kc::ffi::Attribute, type) == 16,
              "kc::ffi::Attribute");
static_assert(sizeof(kc::ffi::Signature) == 40 &&
                  offsetof(kc::ffi::Signature, stage) == 0 &&
                  offsetof(kc::ffi::Signature, traits) == 4 &&
                  offsetof(kc::ffi::Signature, args) == 8 &&
                  offsetof(kc::ffi::Signature, rets) == 16 &&
                  offsetof(kc::ffi::Signature, attrs) == 24 &&
                  offsetof(kc::ffi::Signature, attributes) == 32,
              "kc::ffi::Signature");
static_assert(sizeof(kc::ffi::Error) == sizeof(void*) &&
                  sizeof(kc::ffi::ThreadPool) == 2 * sizeof(void*),
              "kc::ffi::Error, kc::ffi::ThreadPool");

static_assert(sizeof(kc_dim3) == 12 && alignof(kc_dim3) == 4, "kc_dim3");
static_assert(offsetof(kc_dim3, x) == 0 && offsetof(kc_dim3, y) == 4 &&
                  offsetof(kc_dim3, z) == 8,
              "kc_dim3 fields");
static_assert(sizeof(kc_span) == 16 && offsetof(kc_span, data) == 0 &&
                  offsetof(kc_span, bytes) == 8,
              "kc_span");
static_assert(sizeof(kc_launch) == 24, "kc_launch");
static_assert(offsetof(kc_launch, grid) == 0 &&
                  offsetof(kc_launch, block) == 12,
              "kc_launch fields");
static_assert(sizeof(kc_block_range) == 48 && alignof(kc_block_range) == 8 &&
                  offsetof(kc_block_range, launch) == 0 &&
                  offsetof(kc_block_range, block_begin) == 24 &&
                  offsetof(kc_block_range, block_end) == 32 &&
                  offsetof(kc_block_range, shared_bytes) == 40,
              "kc_block_range");
static_assert(sizeof(kc_error) == 1024 && offsetof(kc_error, message) == 0,
              "kc_error");
// The pool a handler hands the prebuilt runtime.
static_assert(sizeof(kc_pool) == 24 && offsetof(kc_pool, self) == 0 &&
                  offsetof(kc_pool, num_threads) == 8 &&
                  offsetof(kc_pool, schedule) == 16,
              "kc_pool");

// Views: a data pointer, then the extents as int64_t, whatever the role.
template <template <typename, int> class V, typename T, int R>
constexpr bool ViewLayoutHolds() {
  using View = V<T, R>;
  return sizeof(View) == sizeof(void*) + 8 * (R > 0 ? R : 1) &&
         offsetof(View, data) == 0 && offsetof(View, shape) == sizeof(void*) &&
         sizeof(View) == sizeof(kc::host::AnyView<R>);
}
static_assert(ViewLayoutHolds<kc::In, float, 1>(), "kc::In<float, 1>");
static_assert(ViewLayoutHolds<kc::In, double, 3>(), "kc::In<double, 3>");
static_assert(ViewLayoutHolds<kc::InMut, int8_t, 2>(), "kc::InMut<int8_t, 2>");
static_assert(ViewLayoutHolds<kc::Out, kc::half, 4>(), "kc::Out<half, 4>");
static_assert(ViewLayoutHolds<kc::Out, bool, 0>(), "kc::Out<bool, 0>");

// A CUDA kernel's view argument, built by the CUDA handler, has the layout
// the kernel's kc::In/InMut/Out parameter has.
template <int R>
constexpr bool CudaViewMatches() {
  using Cuda = kc::cuda::View<R>;
  using Kernel = kc::In<float, R>;
  return sizeof(Cuda) == sizeof(Kernel) &&
         offsetof(Cuda, data) == offsetof(Kernel, data) &&
         offsetof(Cuda, shape) == offsetof(Kernel, shape);
}
static_assert(CudaViewMatches<0>() && CudaViewMatches<1>() &&
                  CudaViewMatches<3>(),
              "kc::cuda::View");

// The embedded CUDA binaries, written by cuda_images.cc and read by the
// shim's module caches.
static_assert(sizeof(kc_cuda_image) == 24 &&
                  offsetof(kc_cuda_image, data) == 8 &&
                  offsetof(kc_cuda_image, size) == 16,
              "kc_cuda_image");
static_assert(sizeof(kc_cuda_module) == 40 &&
                  offsetof(kc_cuda_module, images) == 8 &&
                  offsetof(kc_cuda_module, num_images) == 16 &&
                  offsetof(kc_cuda_module, kernels) == 24 &&
                  offsetof(kc_cuda_module, num_kernels) == 32 &&
                  offsetof(kc_cuda_module, cuda_version) == 36,
              "kc_cuda_module");

// The batch of a folded launch (kernelc/fold.h): filled by the CUDA handler,
// read by the fold entry NVRTC compiled, as its last argument.
static_assert(sizeof(kc::fold::Batch) == 8 * (2 + 4 + 4 * 24) &&
                  alignof(kc::fold::Batch) == 8 &&
                  offsetof(kc::fold::Batch, base) == 0 &&
                  offsetof(kc::fold::Batch, rank) == 8 &&
                  offsetof(kc::fold::Batch, shape) == 16 &&
                  offsetof(kc::fold::Batch, step) == 48,
              "kc::fold::Batch");
static_assert(kc::fold::kMaxRank == 4 && kc::fold::kMaxTensors == 24,
              "kc::fold limits");

// 16-bit floats are their bit patterns: XLA's F16/BF16 native type is
// uint16_t.
static_assert(sizeof(kc::half) == 2 && alignof(kc::half) == 2, "half");
static_assert(sizeof(kc::bfloat16) == 2 && alignof(kc::bfloat16) == 2,
              "bfloat16");

int main() { return 0; }
