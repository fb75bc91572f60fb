// Template kernels as CUDA code writes them: the primary template carries
// the annotations (its parameters appear in them), and the explicit
// instantiation definitions are the op's variants, chosen by the inputs'
// element types.
#include <cuda_fp16.h>
#include <kernelc.h>

// Three variants (float, double, half), each with its own block size.
template <typename T, int BLOCK>
KC_BLOCKS("(n + BLOCK - 1) / BLOCK")
KC_BLOCK("BLOCK")
KC_ELEMENTWISE
__global__ void scale(KC_IN("n") const T* x, float a,
                      KC_DERIVED("x.size") int64_t n, KC_OUT("n") T* y) {
  int64_t i = blockIdx.x * (int64_t)BLOCK + threadIdx.x;
  if (i < n) y[i] = T(a * float(x[i]));
}
template __global__ void scale<float, 128>(const float*, float, int64_t,
                                           float*);
template __global__ void scale<double, 256>(const double*, float, int64_t,
                                            double*);
template __global__ void scale<__half, 64>(const __half*, float, int64_t,
                                           __half*);

// Two variants of a host kernel template: a running sum.
template <typename T>
KC_KERNEL void running_sum(KC_IN("n") const T* x,
                           KC_DERIVED("x.size") int64_t n,
                           KC_OUT("n") T* y) {
  T acc = 0;
  for (int64_t i = 0; i < n; ++i) y[i] = acc += x[i];
}
template void running_sum<float>(const float*, int64_t, float*);
template void running_sum<double>(const double*, int64_t, double*);

// A template with a template backward: KC_VJP pairs them variant by
// variant.
template <typename T>
KC_GRID("n")
KC_VJP("cube_bwd")
__global__ void cube(KC_IN("n") const T* x, KC_DERIVED("x.size") int64_t n,
                     KC_OUT("n") T* y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * x[i] * x[i];
}
template __global__ void cube<float>(const float*, int64_t, float*);
template __global__ void cube<double>(const double*, int64_t, double*);

template <typename T>
KC_GRID("n")
__global__ void cube_bwd(KC_IN("n") const T* x, KC_IN("n") const T* d_y,
                         KC_DERIVED("x.size") int64_t n,
                         KC_OUT("n") T* d_x) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) d_x[i] = T(3) * x[i] * x[i] * d_y[i];
}
template __global__ void cube_bwd<float>(const float*, const float*, int64_t,
                                         float*);
template __global__ void cube_bwd<double>(const double*, const double*,
                                          int64_t, double*);
