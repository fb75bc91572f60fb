// Read by kernelc's frontend in Clang's CUDA mode only. Clang 14's CUDA
// runtime wrapper includes this header, which CUDA 12 removed together with
// texture references; kernelc reads kernel signatures and never uses
// texture fetches, so it stands empty.
