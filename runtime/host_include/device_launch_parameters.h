// Stand-in for CUDA's <device_launch_parameters.h> when a .cu source is
// compiled for the CPU or read by kernelc's frontend: what it declares
// comes from kernelc.h.
#ifndef KERNELC_HOST_DEVICE_LAUNCH_PARAMETERS_H_
#define KERNELC_HOST_DEVICE_LAUNCH_PARAMETERS_H_
#include <kernelc.h>
#endif  // KERNELC_HOST_DEVICE_LAUNCH_PARAMETERS_H_
