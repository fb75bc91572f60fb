// The CUDA side of a generated library: the CUDA Driver API loaded lazily,
// modules loaded once per CUDA context, kernel launches on the stream XLA
// hands the handler.
//
// libcuda is opened with dlopen("libcuda.so.1") the first time a CUDA
// handler runs, and every entry point comes from cuGetProcAddress, so a
// generated library has no link-time dependency on CUDA: it loads, and its
// CPU ops run, on a machine with no GPU and no driver. The few Driver API
// types and functions used are declared here, so the shim compiles without
// CUDA headers; their values and signatures are those of cuda.h (CUDA 12.0
// ABI, requested as such from cuGetProcAddress).
//
// Nothing here exits, aborts or throws: every failure comes back as a
// message, which the handler turns into an XLA FFI error naming the kernel.
// What is not a template is defined in runtime/src/cuda_runtime.cc, part
// of the prebuilt runtime (libkernelc_runtime.a) that every generated
// library links: compiled once, not in every build's shim.
#ifndef KERNELC_CUDA_H_
#define KERNELC_CUDA_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "kernelc/fold.h"
#include "kernelc/launch.h"

// --- Driver API declarations (cuda.h) --------------------------------------
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef unsigned long long CUdeviceptr;

// --- The embedded binaries of one kernel source ----------------------------
extern "C" {

// One compiled image: a cubin for one architecture, or PTX for the newest
// one (JIT-compiled by the driver on newer GPUs). PTX is NUL-terminated.
typedef struct kc_cuda_image {
  int sm;      // 80 for sm_80 / compute_80
  int is_ptx;  // 0: cubin, 1: PTX
  const unsigned char* data;
  size_t size;  // bytes, the terminating NUL of PTX included
} kc_cuda_image;

// The images of one source and the lowered (mangled) names of its kernels.
typedef struct kc_cuda_module {
  const char* source;  // the user's file, for error messages
  const kc_cuda_image* images;
  int num_images;
  const char* const* kernels;  // lowered names, indexed by kernel slot
  int num_kernels;
  // The CUDA version of the NVRTC that compiled the images, counted as
  // cuDriverGetVersion counts: 1000 * major + 10 * minor (13000 for 13.0).
  // A driver older than that may not load them.
  int cuda_version;
} kc_cuda_module;

}  // extern "C"

namespace kc::cuda {

// The 64-bit fill kernel kernelc appends to every CUDA program (KC_INIT of
// 8-byte elements whose halves differ, which cuMemsetD32 cannot write).
constexpr const char* kFill64Kernel = "kc_fill_u64";

// Driver API entry points, resolved once.
struct Driver {
  CUresult (*Init)(unsigned int);
  CUresult (*GetErrorName)(CUresult, const char**);
  CUresult (*GetErrorString)(CUresult, const char**);
  CUresult (*StreamGetCtx)(CUstream, CUcontext*);
  CUresult (*StreamIsCapturing)(CUstream, int*);
  CUresult (*ThreadExchangeStreamCaptureMode)(int*);
  CUresult (*CtxGetCurrent)(CUcontext*);
  CUresult (*CtxPushCurrent)(CUcontext);
  CUresult (*CtxPopCurrent)(CUcontext*);
  CUresult (*CtxGetDevice)(CUdevice*);
  CUresult (*DeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*DriverGetVersion)(int*);
  CUresult (*ModuleLoadData)(CUmodule*, const void*);
  CUresult (*ModuleUnload)(CUmodule);
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*FuncSetAttribute)(CUfunction, int, int);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void**,
                           void**);
  CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*MemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
  CUresult (*MemsetD32Async)(CUdeviceptr, unsigned int, size_t, CUstream);
};

// cuda.h constants.
constexpr CUresult kSuccess = 0;
constexpr int kAttrComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_...
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kFuncAttrMaxDynamicSharedBytes = 8;      // CU_FUNC_ATTRIBUTE_...
constexpr int kDefaultDynamicSharedBytes = 48 * 1024;  // without opting in
// The module load errors of an image too new for the driver.
constexpr CUresult kErrorInvalidImage = 200;  // CUDA_ERROR_INVALID_IMAGE
constexpr CUresult kErrorNoBinaryForGpu = 209;
constexpr CUresult kErrorInvalidPtx = 218;
constexpr CUresult kErrorUnsupportedPtxVersion = 222;
constexpr int kCaptureStatusActive = 1;   // CU_STREAM_CAPTURE_STATUS_ACTIVE
constexpr int kCaptureModeRelaxed = 2;    // CU_STREAM_CAPTURE_MODE_RELAXED
constexpr int kDriverApiVersion = 12000;  // the ABI the signatures above have
constexpr uint64_t kGetProcLegacyStream = 1;  // CU_GET_PROC_ADDRESS_LEGACY_...

// A kernel of a loaded module, as handlers launch it. It lives as long as
// the ModuleCache that handed it out.
struct Function {
  CUfunction handle = nullptr;
  // The dynamic shared memory the kernel may use: CUDA's default until a
  // launch needs more, then what cuFuncSetAttribute last allowed. Launch
  // raises it only when it grows.
  std::atomic<int> shared_bytes_allowed{kDefaultDynamicSharedBytes};
};

// The kernels of one source, loaded per CUDA context on first use. A
// generated handler owns one ModuleCache per source (a function-local
// static); Get is thread-safe, and after the first call per context it only
// queries the stream's context, takes a mutex and scans a short vector.
class ModuleCache {
 public:
  explicit ModuleCache(const kc_cuda_module* desc) : desc_(desc) {}

  // The kernels in `slots[0, count)` in the context of `stream`, into
  // `functions[0, count)`, loading the module when this context has not got
  // it yet. A handler looks its kernels up once per call with this. The
  // Functions stay valid as long as the cache. Returns 0, or non-zero with
  // the reason in *why.
  int32_t Get(CUstream stream, const int* slots, int count,
              Function** functions, kc_error* why);

  // One kernel: Get(stream, &slot, 1, function, why).
  int32_t Get(CUstream stream, int slot, Function** function, kc_error* why) {
    return Get(stream, &slot, 1, function, why);
  }

 private:
  struct Loaded {
    CUcontext ctx = nullptr;
    CUmodule module = nullptr;
    // By slot. Never resized, so the Functions stay where they are (moving
    // the vector moves no element). No std::unique_ptr: <memory> breaks
    // beside kernelc.h's CUDA keyword macros under GCC.
    std::vector<Function> functions;
  };

  // The image for a device of compute capability major.minor: its own
  // cubin, else a cubin of the same major version and a lower minor (binary
  // compatible), else the PTX when it is not newer than the device.
  const kc_cuda_image* Choose(int major, int minor) const;
  std::string Lookup(CUstream stream, const int* slots, int count,
                     Function** functions);
  std::string Load(const Driver& d, CUcontext ctx, Loaded* l);
  // What to do about a driver older than the NVRTC that compiled the
  // images.
  std::string DriverTooOld(int driver) const;
  std::string LoadInCurrent(const Driver& d, Loaded* l);

  const kc_cuda_module* desc_;
  std::mutex mu_;
  std::vector<Loaded> loaded_;  // one per context; modules live as long as it
};

// The operations that handlers call return as kernelc's CPU entries do:
// 0, or non-zero with the reason in *why.

// Launches `fn` on `stream`. `params` points at each kernel argument.
int32_t Launch(Function* fn, const unsigned grid[3], const unsigned block[3],
               int64_t shared_bytes, CUstream stream, void** params,
               kc_error* why);

// A batch folded into the grid's z axis (kernelc/fold.h): what the fold
// entry reads, and how many elements the batch has.
struct FoldLaunch {
  ::kc::fold::Batch batch;
  int64_t count;
};

// Plans the fold of `batch` (a kc::rt::Batch of kernelc/batch.h) for the
// tensor parameters `tensors` (its Operands, in declaration order: an
// input's operand, a result's for outputs and in-place parameters).
// `dense` are operands whose whole batch is copied in one piece (in-place
// arguments): they must not be broadcast. False when it does not fold: a
// single element, more batch dimensions or tensors than a fold entry takes,
// or a broadcast `dense` operand.
template <typename Batch, typename Operand>
bool PlanFold(const Batch& batch, const Operand* const* tensors, int n,
              const Operand* const* dense, int n_dense, FoldLaunch* out) {
  if (batch.count <= 1 || batch.rank > ::kc::fold::kMaxRank ||
      n > ::kc::fold::kMaxTensors)
    return false;
  for (int i = 0; i < n_dense; ++i) {
    int64_t stride = static_cast<int64_t>(dense[i]->bytes);
    for (int d = batch.rank - 1; d >= 0; --d) {
      if (batch.shape[d] != 1 && dense[i]->step[d] != stride) return false;
      stride *= batch.shape[d];
    }
  }
  *out = FoldLaunch{};
  out->count = batch.count;
  out->batch.rank = batch.rank;
  for (int d = 0; d < batch.rank; ++d) {
    out->batch.shape[d] = batch.shape[d];
    for (int t = 0; t < n; ++t) out->batch.step[t][d] = tensors[t]->step[d];
  }
  return true;
}

// Launches a fold entry over `fold`'s batch: `grid` of the kernel for one
// element, with gridDim.z spanning the batch (several launches when it is
// longer than CUDA allows). `params` points at each argument of the
// kernel, and its slot `batch_param` (the entry's last parameter) is set to
// each launch's Batch.
int32_t LaunchFold(Function* fn, const unsigned grid[3],
                   const unsigned block[3], int64_t shared_bytes,
                   CUstream stream, void** params, int batch_param,
                   const FoldLaunch& fold, kc_error* why);

// Fills `count` elements of `bytes` bytes each at `data` with the element
// whose bit pattern is `bits`, asynchronously on `stream`. `fill64` is the
// module's kc_fill_u64 kernel, used for 8-byte patterns whose halves differ.
int32_t Fill(void* data, int64_t count, int bytes, uint64_t bits,
             CUstream stream, Function* fill64, kc_error* why);

// Copies `bytes` bytes between device buffers, asynchronously on `stream`.
int32_t CopyAsync(void* dst, const void* src, size_t bytes, CUstream stream,
                  kc_error* why);

// A kc::In / kc::InMut / kc::Out argument as the kernel receives it: the
// layout of kc::detail::ViewData (a data pointer, then the shape).
template <int R>
struct View {
  void* data;
  int64_t shape[R > 0 ? R : 1];
};

template <int R, typename Dims>
View<R> MakeView(void* data, const Dims& dims) {
  View<R> v{data, {}};
  for (int d = 0; d < R; ++d) v.shape[d] = dims[d];
  return v;
}

// A tensor as a Numba-CUDA kernel takes an array: Numba's array model
// flattened into 5 + 2 * R kernel parameters, one per member, the PTX ABI
// "numba" (README, "PTX kernels"). meminfo and parent are null (the kernel
// never touches reference counts); the strides are a C-contiguous array's,
// in bytes, as XLA's buffers are.
template <int R>
struct NumbaArray {
  void* meminfo;
  void* parent;
  int64_t nitems;
  int64_t itemsize;
  void* data;
  int64_t shape[R > 0 ? R : 1];
  int64_t strides[R > 0 ? R : 1];
};

template <int R, typename Dims>
NumbaArray<R> MakeNumbaArray(void* data, const Dims& dims, int64_t itemsize) {
  NumbaArray<R> a{nullptr, nullptr, 1, itemsize, data, {}, {}};
  for (int d = 0; d < R; ++d) {
    a.shape[d] = dims[d];
    a.nitems *= dims[d];
  }
  int64_t stride = itemsize;
  for (int d = R - 1; d >= 0; --d) {
    a.strides[d] = stride;
    stride *= dims[d];
  }
  return a;
}

// The bit pattern of a fill value.
template <typename T>
uint64_t Bits(T value) {
  uint64_t bits = 0;
  memcpy(&bits, &value, sizeof(T));
  return bits;
}

}  // namespace kc::cuda

#endif  // KERNELC_CUDA_H_
