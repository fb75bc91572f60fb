// The CPU floor that bench/run.py compares kernelc's generated ops against:
// the benchmark's kernels (the tiny op x + 1 of bench/kernels/bench_ops.cu
// and examples/saxpy.cu's saxpy) behind minimal hand-written XLA FFI
// handlers, with no checks beyond what the FFI binding does and the plain
// loop a compiler vectorizes. Built by bench/run.py with the host C++
// compiler against the running jaxlib's FFI headers.
#include <cstdint>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error Tiny(ffi::Buffer<ffi::F32> x,
                       ffi::ResultBuffer<ffi::F32> out) {
  const float* in = x.typed_data();
  float* o = out->typed_data();
  const int64_t n = x.element_count();
  for (int64_t i = 0; i < n; ++i) o[i] = in[i] + 1.0f;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(FloorTinyCpu, Tiny,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

static ffi::Error Saxpy(ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> y,
                        float a, ffi::ResultBuffer<ffi::F32> out) {
  const float* px = x.typed_data();
  const float* py = y.typed_data();
  float* o = out->typed_data();
  const int64_t n = x.element_count();
  for (int64_t i = 0; i < n; ++i) o[i] = a * px[i] + py[i];
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(FloorSaxpyCpu, Saxpy,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("a")
                                  .Ret<ffi::Buffer<ffi::F32>>());
