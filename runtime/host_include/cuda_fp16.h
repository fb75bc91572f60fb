// Stand-in for CUDA's <cuda_fp16.h> when a .cu source is compiled for the CPU
// or read by kernelc's frontend: the types it names come from kernelc.h.
#ifndef KERNELC_HOST_CUDA_FP16_H_
#define KERNELC_HOST_CUDA_FP16_H_
#include <kernelc.h>
#endif  // KERNELC_HOST_CUDA_FP16_H_
