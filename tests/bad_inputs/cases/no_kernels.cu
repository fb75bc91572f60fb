#include <kernelc.h>

__global__ void k(const float* x, float* y) {}
