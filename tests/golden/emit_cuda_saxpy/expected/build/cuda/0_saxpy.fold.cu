#line 1 "<kernelc>"
// The fold program of saxpy.cu (kernelc/fold.h): the source again, with its
// __global__ kernels as device functions, which the entries below call once
// per batch element along the grid's z axis. Launch bounds and grid
// constants belong to the entries now.
#undef __global__
#define __global__ __device__
#undef __launch_bounds__
#define __launch_bounds__(...)
#undef __grid_constant__
#define __grid_constant__
#line 1 "saxpy.cu"
// saxpy: out = a * x + y, with raw pointers and a derived length.
#include <kernelc.h>

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
#line 1 "<kernelc>"
#include <kernelc/fold.h>

// Kernel 'saxpy', one batch element per blockIdx.z.
extern "C" __attribute__((global)) __attribute__((launch_bounds(256))) void kc_fold_saxpy(
    ::kc::fold::Param<decltype(saxpy), 0> a0,
    ::kc::fold::Param<decltype(saxpy), 1> a1,
    ::kc::fold::Param<decltype(saxpy), 2> a2,
    ::kc::fold::Param<decltype(saxpy), 3> a3,
    ::kc::fold::Param<decltype(saxpy), 4> a4,
    const ::kc::fold::Batch kc_batch) {
  ::kc::fold::Shift(a0, ::kc::fold::Offset(kc_batch, 0));
  ::kc::fold::Shift(a1, ::kc::fold::Offset(kc_batch, 1));
  ::kc::fold::Shift(a4, ::kc::fold::Offset(kc_batch, 2));
  saxpy(a0, a1, a2, a3, a4);
}

