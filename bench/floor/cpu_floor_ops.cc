// The floor of a generated CPU op's per-call cost: saxpy
// (out = a * x + y, float32) behind a minimal hand-written XLA FFI handler,
// with no checks beyond what the FFI binding does, no batching and no
// thread pool: the plain loop, on the calling thread. Built with clang -O3
// by bench/callgrind_percall.py against the running jaxlib's FFI headers,
// and compared there with examples/saxpy.cu as kernelc builds it.
#include <stdint.h>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error Saxpy(ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> y,
                        float a, ffi::ResultBuffer<ffi::F32> out) {
  const int64_t n = static_cast<int64_t>(x.element_count());
  const float* px = x.typed_data();
  const float* py = y.typed_data();
  float* po = out->typed_data();
  for (int64_t i = 0; i < n; ++i) po[i] = a * px[i] + py[i];
  return ffi::Error::Success();
}

extern "C" __attribute__((visibility("default"))) XLA_FFI_Error* FloorSaxpy(
    XLA_FFI_CallFrame* call_frame);
XLA_FFI_DEFINE_HANDLER_SYMBOL(FloorSaxpy, Saxpy,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("a")
                                  .Ret<ffi::Buffer<ffi::F32>>());
