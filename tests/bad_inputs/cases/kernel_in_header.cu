#include "src/header_kernels.cuh"
