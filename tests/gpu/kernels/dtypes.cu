// Elementwise kernels over every element type, for the GPU tests: an
// integer or float kernel adds two tensors and a scalar of the same type,
// a 16-bit float kernel adds two tensors through float, and the bool kernel
// compares two tensors and a scalar.
#include <kernelc.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

KC_GRID("n")
KC_BLOCK(64)
__global__ void add_int8(KC_IN("n") const int8_t* x,
                          KC_IN("n") const int8_t* y,
                          int8_t s,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") int8_t* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<int8_t>(x[i] + y[i] + s);
}

KC_GRID("n")
KC_BLOCK(64)
__global__ void add_int16(KC_IN("n") const int16_t* x,
                          KC_IN("n") const int16_t* y,
                          int16_t s,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") int16_t* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<int16_t>(x[i] + y[i] + s);
}

KC_GRID("n")
KC_BLOCK(64)
__global__ void add_int32(KC_IN("n") const int32_t* x,
                          KC_IN("n") const int32_t* y,
                          int32_t s,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") int32_t* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<int32_t>(x[i] + y[i] + s);
}

KC_GRID("n")
KC_BLOCK(64)
__global__ void add_int64(KC_IN("n") const int64_t* x,
                          KC_IN("n") const int64_t* y,
                          int64_t s,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") int64_t* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<int64_t>(x[i] + y[i] + s);
}

KC_GRID("n")
KC_BLOCK(64)
__global__ void add_uint8(KC_IN("n") const uint8_t* x,
                          KC_IN("n") const uint8_t* y,
                          uint8_t s,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") uint8_t* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<uint8_t>(x[i] + y[i] + s);
}

KC_GRID("n")
KC_BLOCK(64)
__global__ void add_uint16(KC_IN("n") const uint16_t* x,
                          KC_IN("n") const uint16_t* y,
                          uint16_t s,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") uint16_t* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<uint16_t>(x[i] + y[i] + s);
}

KC_GRID("n")
KC_BLOCK(64)
__global__ void add_uint32(KC_IN("n") const uint32_t* x,
                          KC_IN("n") const uint32_t* y,
                          uint32_t s,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") uint32_t* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<uint32_t>(x[i] + y[i] + s);
}

KC_GRID("n")
KC_BLOCK(64)
__global__ void add_uint64(KC_IN("n") const uint64_t* x,
                          KC_IN("n") const uint64_t* y,
                          uint64_t s,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") uint64_t* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<uint64_t>(x[i] + y[i] + s);
}

KC_GRID("n")
KC_BLOCK(64)
__global__ void add_float32(KC_IN("n") const float* x,
                          KC_IN("n") const float* y,
                          float s,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(x[i] + y[i] + s);
}

KC_GRID("n")
KC_BLOCK(64)
__global__ void add_float64(KC_IN("n") const double* x,
                          KC_IN("n") const double* y,
                          double s,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") double* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<double>(x[i] + y[i] + s);
}

KC_GRID("n")
__global__ void add_float16(KC_IN("n") const __half* x,
                          KC_IN("n") const __half* y,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") __half* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = __half(float(x[i]) + float(y[i]));
}

KC_GRID("n")
__global__ void add_bfloat16(KC_IN("n") const __nv_bfloat16* x,
                          KC_IN("n") const __nv_bfloat16* y,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") __nv_bfloat16* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = __nv_bfloat16(float(x[i]) + float(y[i]));
}

// bool: 1-byte elements and a bool scalar.
KC_GRID("n")
KC_BLOCK(64)
__global__ void ne_bool(KC_IN("n") const bool* x,
                        KC_IN("n") const bool* y,
                        bool s,
                        KC_DERIVED("x.size") int64_t n,
                        KC_OUT("x") bool* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = (x[i] != y[i]) != s;
}
