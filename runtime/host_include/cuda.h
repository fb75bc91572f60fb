// Stand-in for CUDA's <cuda.h> when a .cu source is compiled for the CPU or
// read by kernelc's frontend: the types it names come from kernelc.h.
#ifndef KERNELC_HOST_CUDA_H_
#define KERNELC_HOST_CUDA_H_
#include <kernelc.h>
#endif  // KERNELC_HOST_CUDA_H_
