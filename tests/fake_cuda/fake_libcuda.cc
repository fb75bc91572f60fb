// A stand-in libcuda.so.1 for testing kernelc's CUDA runtime without a GPU:
// the entry points the runtime resolves through cuGetProcAddress_v2, each
// logging its call to stdout. The device's compute capability comes from
// $FAKE_CUDA_CC ("90" for sm_90); $FAKE_CUDA_FAIL names one entry point that
// fails with CUDA_ERROR_INVALID_VALUE (1).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
namespace {

bool Fails(const char* name) {
  const char* f = getenv("FAKE_CUDA_FAIL");
  return f && strcmp(f, name) == 0;
}
#define FAKE_RETURN(name) return Fails(name) ? 1 : 0

int cc() {
  const char* v = getenv("FAKE_CUDA_CC");
  return v ? atoi(v) : 90;
}

CUresult Init(unsigned) { FAKE_RETURN("cuInit"); }
CUresult GetErrorName(CUresult r, const char** s) {
  *s = r == 1 ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
CUresult GetErrorString(CUresult r, const char** s) {
  *s = r == 1 ? "invalid argument" : "unknown error";
  return 0;
}
CUresult StreamGetCtx(void* stream, void** ctx) {
  printf("cuStreamGetCtx(%p)\n", stream);
  *ctx = reinterpret_cast<void*>(0xc0);
  FAKE_RETURN("cuStreamGetCtx");
}
CUresult StreamIsCapturing(void*, int* status) {
  const char* c = getenv("FAKE_CUDA_CAPTURING");
  *status = c ? 1 : 0;
  FAKE_RETURN("cuStreamIsCapturing");
}
CUresult ThreadExchangeStreamCaptureMode(int* mode) {
  static int current = 1;
  printf("cuThreadExchangeStreamCaptureMode(%d)\n", *mode);
  int old = current;
  current = *mode;
  *mode = old;
  return 0;
}
CUresult CtxGetCurrent(void** ctx) {
  printf("cuCtxGetCurrent\n");
  *ctx = reinterpret_cast<void*>(0xc1);
  return 0;
}
CUresult CtxPushCurrent(void* ctx) {
  printf("cuCtxPushCurrent(%p)\n", ctx);
  return 0;
}
CUresult CtxPopCurrent(void** ctx) {
  printf("cuCtxPopCurrent\n");
  *ctx = nullptr;
  return 0;
}
CUresult CtxGetDevice(int* dev) {
  *dev = 0;
  return 0;
}
CUresult DeviceGetAttribute(int* v, int attr, int) {
  if (attr == 75) *v = cc() / 10;
  if (attr == 76) *v = cc() % 10;
  return 0;
}
CUresult ModuleLoadData(void** module, const void* image) {
  printf("cuModuleLoadData(%.24s)\n", static_cast<const char*>(image));
  *module = const_cast<void*>(image);
  FAKE_RETURN("cuModuleLoadData");
}
CUresult ModuleGetFunction(void** fn, void*, const char* name) {
  printf("cuModuleGetFunction(%s)\n", name);
  *fn = const_cast<char*>(name);
  FAKE_RETURN("cuModuleGetFunction");
}
CUresult FuncSetAttribute(void* fn, int attr, int value) {
  printf("cuFuncSetAttribute(%s, %d, %d)\n", static_cast<char*>(fn), attr,
         value);
  return 0;
}
CUresult LaunchKernel(void* fn, unsigned gx, unsigned gy, unsigned gz,
                      unsigned bx, unsigned by, unsigned bz, unsigned shared,
                      void* stream, void** params, void** extra) {
  printf(
      "cuLaunchKernel(%s, grid %u %u %u, block %u %u %u, shared %u, %p, "
      "first param %llx, extra %p)\n",
      static_cast<char*>(fn), gx, gy, gz, bx, by, bz, shared, stream,
      params ? *static_cast<unsigned long long*>(params[0]) : 0ull, extra);
  FAKE_RETURN("cuLaunchKernel");
}
CUresult MemcpyDtoDAsync(uint64_t dst, uint64_t src, size_t n, void*) {
  printf("cuMemcpyDtoDAsync(%llx, %llx, %zu)\n", (unsigned long long)dst,
         (unsigned long long)src, n);
  return 0;
}
CUresult MemsetD8Async(uint64_t p, unsigned char v, size_t n, void*) {
  printf("cuMemsetD8Async(%llx, %x, %zu)\n", (unsigned long long)p, v, n);
  return 0;
}
CUresult MemsetD16Async(uint64_t p, unsigned short v, size_t n, void*) {
  printf("cuMemsetD16Async(%llx, %x, %zu)\n", (unsigned long long)p, v, n);
  return 0;
}
CUresult MemsetD32Async(uint64_t p, unsigned v, size_t n, void*) {
  printf("cuMemsetD32Async(%llx, %x, %zu)\n", (unsigned long long)p, v, n);
  return 0;
}

struct Entry {
  const char* name;
  void* fn;
};
#define E(n, f) \
  { n, reinterpret_cast<void*>(&f) }
const Entry kEntries[] = {
    E("cuInit", Init),
    E("cuGetErrorName", GetErrorName),
    E("cuGetErrorString", GetErrorString),
    E("cuStreamGetCtx", StreamGetCtx),
    E("cuStreamIsCapturing", StreamIsCapturing),
    E("cuThreadExchangeStreamCaptureMode", ThreadExchangeStreamCaptureMode),
    E("cuCtxGetCurrent", CtxGetCurrent),
    E("cuCtxPushCurrent", CtxPushCurrent),
    E("cuCtxPopCurrent", CtxPopCurrent),
    E("cuCtxGetDevice", CtxGetDevice),
    E("cuDeviceGetAttribute", DeviceGetAttribute),
    E("cuModuleLoadData", ModuleLoadData),
    E("cuModuleGetFunction", ModuleGetFunction),
    E("cuFuncSetAttribute", FuncSetAttribute),
    E("cuLaunchKernel", LaunchKernel),
    E("cuMemcpyDtoDAsync", MemcpyDtoDAsync),
    E("cuMemsetD8Async", MemsetD8Async),
    E("cuMemsetD16Async", MemsetD16Async),
    E("cuMemsetD32Async", MemsetD32Async),
};

}  // namespace

extern "C" CUresult cuGetProcAddress_v2(const char* name, void** fn,
                                        int version, uint64_t flags,
                                        int* status) {
  if (version != 12000 || flags != 1) {
    printf("cuGetProcAddress_v2(%s): unexpected version %d flags %llu\n", name,
           version, (unsigned long long)flags);
    return 1;
  }
  for (const Entry& e : kEntries) {
    if (strcmp(e.name, name) == 0) {
      *fn = e.fn;
      if (status) *status = 0;
      return 0;
    }
  }
  *fn = nullptr;
  if (status) *status = 1;
  return 500;  // CUDA_ERROR_NOT_FOUND
}
