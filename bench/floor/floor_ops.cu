// The floor the GPU benchmark compares kernelc's generated ops against: the
// same tiny kernel behind a minimal hand-written XLA FFI handler (no shape
// checks, no module cache: the CUDA runtime launches it), and a
// device-to-device copy. Built with nvcc on the GPU machine by
// bench/gpu_bench.py, against the running jaxlib's FFI headers.
#include <cuda_runtime.h>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

__global__ void tiny_kernel(const float* x, int64_t n, float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + 1.0f;
}

static ffi::Error Tiny(cudaStream_t stream, ffi::Buffer<ffi::F32> x,
                       ffi::ResultBuffer<ffi::F32> out) {
  const int64_t n = x.element_count();
  const int64_t blocks = (n + 255) / 256;
  if (blocks > 0)
    tiny_kernel<<<blocks, 256, 0, stream>>>(x.typed_data(), n,
                                            out->typed_data());
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return ffi::Error::Internal(cudaGetErrorString(e));
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(FloorTiny, Tiny,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>(),
                              {ffi::Traits::kCmdBufferCompatible});

static ffi::Error Copy(cudaStream_t stream, ffi::Buffer<ffi::F32> x,
                       ffi::ResultBuffer<ffi::F32> out) {
  cudaError_t e = cudaMemcpyAsync(out->untyped_data(), x.untyped_data(),
                                  x.size_bytes(), cudaMemcpyDeviceToDevice,
                                  stream);
  if (e != cudaSuccess) return ffi::Error::Internal(cudaGetErrorString(e));
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(FloorCopy, Copy,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>(),
                              {ffi::Traits::kCmdBufferCompatible});
