// Stand-in for CUDA's <vector_functions.h> when a .cu source is
// compiled for the CPU or read by kernelc's frontend: what it declares
// comes from kernelc.h.
#ifndef KERNELC_HOST_VECTOR_FUNCTIONS_H_
#define KERNELC_HOST_VECTOR_FUNCTIONS_H_
#include <kernelc.h>
#endif  // KERNELC_HOST_VECTOR_FUNCTIONS_H_
