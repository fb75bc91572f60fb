// Stand-in for CUDA's <cuda_runtime_api.h> when a .cu source is
// compiled for the CPU or read by kernelc's frontend: what it declares
// comes from kernelc.h.
#ifndef KERNELC_HOST_CUDA_RUNTIME_API_H_
#define KERNELC_HOST_CUDA_RUNTIME_API_H_
#include <kernelc.h>
#endif  // KERNELC_HOST_CUDA_RUNTIME_API_H_
