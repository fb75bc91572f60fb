// Read by kernelc's frontend in Clang's CUDA mode only, after Clang's CUDA
// runtime wrapper. The cache-hinted loads and stores of CUDA's
// sm_32_intrinsics.h (__ldcg, __ldca, __ldcs, __ldlu, __ldcv, __stwb, __stcg,
// __stcs, __stwt) on the built-in scalar and vector types: Clang's wrapper
// leaves that header out, since it defines __ldg with its own builtins, and
// declares none of them (only the __half and __nv_bfloat16 overloads of
// cuda_fp16.h and cuda_bf16.h exist there). Declarations are enough: the
// frontend only reads the source, and NVRTC compiles it with the toolkit's
// own definitions.
#ifndef KERNELC_CUDA_SHIM_CACHE_HINTS_H_
#define KERNELC_CUDA_SHIM_CACHE_HINTS_H_

#define KC_CACHE_HINTS_(T)        \
  __device__ T __ldcg(const T*);  \
  __device__ T __ldca(const T*);  \
  __device__ T __ldcs(const T*);  \
  __device__ T __ldlu(const T*);  \
  __device__ T __ldcv(const T*);  \
  __device__ void __stwb(T*, T);  \
  __device__ void __stcg(T*, T);  \
  __device__ void __stcs(T*, T);  \
  __device__ void __stwt(T*, T);

KC_CACHE_HINTS_(char)
KC_CACHE_HINTS_(signed char)
KC_CACHE_HINTS_(unsigned char)
KC_CACHE_HINTS_(short)
KC_CACHE_HINTS_(unsigned short)
KC_CACHE_HINTS_(int)
KC_CACHE_HINTS_(unsigned int)
KC_CACHE_HINTS_(long)
KC_CACHE_HINTS_(unsigned long)
KC_CACHE_HINTS_(long long)
KC_CACHE_HINTS_(unsigned long long)
KC_CACHE_HINTS_(float)
KC_CACHE_HINTS_(double)
KC_CACHE_HINTS_(char2)
KC_CACHE_HINTS_(char4)
KC_CACHE_HINTS_(uchar2)
KC_CACHE_HINTS_(uchar4)
KC_CACHE_HINTS_(short2)
KC_CACHE_HINTS_(short4)
KC_CACHE_HINTS_(ushort2)
KC_CACHE_HINTS_(ushort4)
KC_CACHE_HINTS_(int2)
KC_CACHE_HINTS_(int4)
KC_CACHE_HINTS_(uint2)
KC_CACHE_HINTS_(uint4)
KC_CACHE_HINTS_(longlong2)
KC_CACHE_HINTS_(ulonglong2)
KC_CACHE_HINTS_(float2)
KC_CACHE_HINTS_(float4)
KC_CACHE_HINTS_(double2)

#undef KC_CACHE_HINTS_

#endif  // KERNELC_CUDA_SHIM_CACHE_HINTS_H_
