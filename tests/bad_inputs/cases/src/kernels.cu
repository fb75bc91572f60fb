// Kernels that the specs in this directory describe.
__global__ void saxpy(const float* x, const float* y, float* out, float a, long long n) {}
__global__ void dbl(const double* x, double* y, long long n) {}
__global__ void ints(const int* x, int* y) {}
void host_k(const float* x, float* y, long long n) {}
__global__ void writes_in(float* x, float* y) { x[0] = 1.0f; }
__global__ void mut(float* x) {}
