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
#ifndef KERNELC_CUDA_H_
#define KERNELC_CUDA_H_

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "kernelc/fold.h"

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

// Loads libcuda and resolves the entry points, once per process. Returns
// null and sets *error when there is no usable driver.
inline const Driver* GetDriver(std::string* error) {
  struct Loaded {
    Driver driver{};
    std::string error;
  };
  static const Loaded* loaded = [] {
    Loaded* l = new Loaded();
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      l->error = std::string("cannot load the CUDA driver (libcuda.so.1): ") +
                 (why ? why : "not found");
      return l;
    }
    // cuGetProcAddress_v2 (CUDA >= 12.0) has a fifth, status, parameter.
    using GetProc2 = CUresult (*)(const char*, void**, int, uint64_t, int*);
    using GetProc1 = CUresult (*)(const char*, void**, int, uint64_t);
    GetProc2 get2 =
        reinterpret_cast<GetProc2>(dlsym(lib, "cuGetProcAddress_v2"));
    GetProc1 get1 = reinterpret_cast<GetProc1>(dlsym(lib, "cuGetProcAddress"));
    if (!get2 && !get1) {
      l->error = "the CUDA driver has no cuGetProcAddress: it is too old";
      return l;
    }
    auto resolve = [&](const char* name, auto* fn) {
      void* p = nullptr;
      CUresult r;
      if (get2) {
        int status = 0;
        r = get2(name, &p, kDriverApiVersion, kGetProcLegacyStream, &status);
      } else {
        r = get1(name, &p, kDriverApiVersion, kGetProcLegacyStream);
      }
      if (r != kSuccess || !p) {
        if (l->error.empty())
          l->error = std::string("the CUDA driver lacks ") + name;
        return;
      }
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(p);
    };
    Driver& d = l->driver;
    resolve("cuInit", &d.Init);
    resolve("cuGetErrorName", &d.GetErrorName);
    resolve("cuGetErrorString", &d.GetErrorString);
    resolve("cuStreamGetCtx", &d.StreamGetCtx);
    resolve("cuStreamIsCapturing", &d.StreamIsCapturing);
    resolve("cuThreadExchangeStreamCaptureMode",
            &d.ThreadExchangeStreamCaptureMode);
    resolve("cuCtxGetCurrent", &d.CtxGetCurrent);
    resolve("cuCtxPushCurrent", &d.CtxPushCurrent);
    resolve("cuCtxPopCurrent", &d.CtxPopCurrent);
    resolve("cuCtxGetDevice", &d.CtxGetDevice);
    resolve("cuDeviceGetAttribute", &d.DeviceGetAttribute);
    resolve("cuDriverGetVersion", &d.DriverGetVersion);
    resolve("cuModuleLoadData", &d.ModuleLoadData);
    resolve("cuModuleUnload", &d.ModuleUnload);
    resolve("cuModuleGetFunction", &d.ModuleGetFunction);
    resolve("cuFuncSetAttribute", &d.FuncSetAttribute);
    resolve("cuLaunchKernel", &d.LaunchKernel);
    resolve("cuMemcpyDtoDAsync", &d.MemcpyDtoDAsync);
    resolve("cuMemsetD8Async", &d.MemsetD8Async);
    resolve("cuMemsetD16Async", &d.MemsetD16Async);
    resolve("cuMemsetD32Async", &d.MemsetD32Async);
    if (l->error.empty()) {
      CUresult r = d.Init(0);
      if (r != kSuccess)
        l->error = "cuInit failed with CUresult " + std::to_string(r);
    }
    return l;
  }();
  if (!loaded->error.empty()) {
    *error = loaded->error;
    return nullptr;
  }
  return &loaded->driver;
}

// "CUDA_ERROR_INVALID_VALUE (invalid argument)" for a failed call.
inline std::string Describe(const Driver& d, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.GetErrorName(r, &name) != kSuccess) name = nullptr;
  if (d.GetErrorString(r, &text) != kSuccess) text = nullptr;
  std::string s = name ? name : "CUresult " + std::to_string(r);
  if (text) s += std::string(" (") + text + ")";
  return s;
}

// "13.0" for the CUDA version 13000.
inline std::string CudaVersionString(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

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
  // Functions stay valid as long as the cache. Returns an empty string on
  // success, else why not.
  std::string Get(CUstream stream, const int* slots, int count,
                  Function** functions) {
    std::string error;
    const Driver* d = GetDriver(&error);
    if (!d) return error;
    // While a stream is being captured into a CUDA graph it must not be
    // queried beyond this; the capturing thread has the context current.
    CUcontext ctx = nullptr;
    int capturing = 0;
    CUresult r = d->StreamIsCapturing(stream, &capturing);
    if (r != kSuccess) return "cuStreamIsCapturing: " + Describe(*d, r);
    r = capturing == kCaptureStatusActive ? d->CtxGetCurrent(&ctx)
                                          : d->StreamGetCtx(stream, &ctx);
    if (r != kSuccess)
      return "cannot find the stream's context: " + Describe(*d, r);
    std::lock_guard<std::mutex> lock(mu_);
    for (Loaded& l : loaded_) {
      if (l.ctx == ctx) {
        for (int i = 0; i < count; ++i) functions[i] = &l.functions[slots[i]];
        return std::string();
      }
    }
    Loaded l;
    l.ctx = ctx;
    // The initialize stage loads the module before any capture. Should the
    // first call come while this thread captures a CUDA graph, loading is
    // not a stream operation, so this thread's capture mode is relaxed
    // around it (module loads count as unsafe in the stricter modes).
    int mode = kCaptureModeRelaxed;
    if (capturing == kCaptureStatusActive) {
      r = d->ThreadExchangeStreamCaptureMode(&mode);
      if (r != kSuccess)
        return "cuThreadExchangeStreamCaptureMode: " + Describe(*d, r);
    }
    error = Load(*d, ctx, &l);
    if (capturing == kCaptureStatusActive) {
      r = d->ThreadExchangeStreamCaptureMode(&mode);
      if (error.empty() && r != kSuccess)
        error = "cuThreadExchangeStreamCaptureMode: " + Describe(*d, r);
    }
    if (!error.empty()) return error;
    for (int i = 0; i < count; ++i) functions[i] = &l.functions[slots[i]];
    loaded_.push_back(std::move(l));  // the Functions do not move
    return std::string();
  }

  // One kernel: Get(stream, &slot, 1, function).
  std::string Get(CUstream stream, int slot, Function** function) {
    return Get(stream, &slot, 1, function);
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
  const kc_cuda_image* Choose(int major, int minor) const {
    const int device = major * 10 + minor;
    const kc_cuda_image* best = nullptr;
    for (int i = 0; i < desc_->num_images; ++i) {
      const kc_cuda_image& im = desc_->images[i];
      if (im.is_ptx || im.sm / 10 != major || im.sm > device) continue;
      if (!best || im.sm > best->sm) best = &im;
    }
    if (best) return best;
    for (int i = 0; i < desc_->num_images; ++i) {
      const kc_cuda_image& im = desc_->images[i];
      if (im.is_ptx && im.sm <= device) return &im;
    }
    return nullptr;
  }

  std::string Load(const Driver& d, CUcontext ctx, Loaded* l) {
    CUresult r = d.CtxPushCurrent(ctx);
    if (r != kSuccess) return "cuCtxPushCurrent: " + Describe(d, r);
    std::string error = LoadInCurrent(d, l);
    CUcontext popped = nullptr;
    r = d.CtxPopCurrent(&popped);
    if (error.empty() && r != kSuccess)
      error = "cuCtxPopCurrent: " + Describe(d, r);
    return error;
  }

  // What to do about a driver older than the NVRTC that compiled the
  // images.
  std::string DriverTooOld(int driver) const {
    const std::string built = CudaVersionString(desc_->cuda_version);
    return "the CUDA driver supports CUDA " + CudaVersionString(driver) +
           ", older than the NVRTC " + built + " that compiled " +
           desc_->source + ": install an NVIDIA driver for CUDA " + built +
           " or newer, or rebuild the package with a CUDA toolkit no newer "
           "than CUDA " +
           CudaVersionString(driver) + " (kernelc finds it through CUDA_HOME)";
  }

  std::string LoadInCurrent(const Driver& d, Loaded* l) {
    CUdevice dev = 0;
    int major = 0, minor = 0;
    CUresult r = d.CtxGetDevice(&dev);
    if (r == kSuccess)
      r = d.DeviceGetAttribute(&major, kAttrComputeCapabilityMajor, dev);
    if (r == kSuccess)
      r = d.DeviceGetAttribute(&minor, kAttrComputeCapabilityMinor, dev);
    if (r != kSuccess)
      return "cannot read the device's compute capability: " + Describe(d, r);
    // CUDA keeps binaries compatible within a major version only: a driver
    // of an older major version cannot load what a newer NVRTC made (its
    // PTX ISA, its cubins' ABI), so that is said before trying.
    int driver = 0;
    if (d.DriverGetVersion(&driver) != kSuccess) driver = 0;  // unknown
    const int built = desc_->cuda_version;
    const bool older = driver > 0 && built > 0 && driver < built;
    if (older && driver / 1000 < built / 1000) return DriverTooOld(driver);
    const kc_cuda_image* im = Choose(major, minor);
    if (!im) {
      std::string list;
      for (int i = 0; i < desc_->num_images; ++i)
        list += std::string(i ? ", " : "") +
                (desc_->images[i].is_ptx ? "compute_" : "sm_") +
                std::to_string(desc_->images[i].sm);
      return "no binary of " + std::string(desc_->source) +
             " runs on this GPU (sm_" + std::to_string(major * 10 + minor) +
             "); built for " + list + ": rebuild with --cuda-arch";
    }
    r = d.ModuleLoadData(&l->module, im->data);
    if (r != kSuccess) {
      std::string error = std::string("cannot load the ") +
                          (im->is_ptx ? "PTX" : "cubin") + " of " +
                          desc_->source + " for sm_" + std::to_string(im->sm) +
                          ": " + Describe(d, r);
      // Within a major version, PTX of a newer minor version (and the odd
      // cubin) still needs a newer driver.
      const bool image_error =
          r == kErrorInvalidImage || r == kErrorNoBinaryForGpu ||
          r == kErrorInvalidPtx || r == kErrorUnsupportedPtxVersion;
      if (image_error && older)
        error += ": " + DriverTooOld(driver);
      else if (image_error && driver > 0 && built > 0)
        error += " (the driver supports CUDA " + CudaVersionString(driver) +
                 "; NVRTC " + CudaVersionString(built) + " compiled it)";
      return error;
    }
    l->functions = std::vector<Function>(desc_->num_kernels);
    for (int i = 0; i < desc_->num_kernels; ++i) {
      r = d.ModuleGetFunction(&l->functions[i].handle, l->module,
                              desc_->kernels[i]);
      if (r != kSuccess) {
        // Nothing is cached after a failure, so the next call loads the
        // module afresh: this one goes.
        d.ModuleUnload(l->module);
        l->module = nullptr;
        l->functions.clear();
        return std::string("no kernel '") + desc_->kernels[i] + "' in " +
               desc_->source + ": " + Describe(d, r);
      }
    }
    return std::string();
  }

  const kc_cuda_module* desc_;
  std::mutex mu_;
  std::vector<Loaded> loaded_;  // one per context; modules live as long as it
};

// Raises the dynamic shared memory `fn` may use to `bytes`, unless a launch
// before did. Serialized, so that the recorded value is the one last set.
inline std::string AllowSharedBytes(const Driver& d, Function* fn, int bytes) {
  static std::mutex* const mu = new std::mutex;
  std::lock_guard<std::mutex> lock(*mu);
  if (bytes <= fn->shared_bytes_allowed.load(std::memory_order_relaxed))
    return std::string();
  CUresult r =
      d.FuncSetAttribute(fn->handle, kFuncAttrMaxDynamicSharedBytes, bytes);
  if (r != kSuccess)
    return "cannot allow " + std::to_string(bytes) +
           " bytes of dynamic shared memory: " + Describe(d, r);
  fn->shared_bytes_allowed.store(bytes, std::memory_order_release);
  return std::string();
}

// Launches `fn` on `stream`. `params` points at each kernel argument.
inline std::string Launch(Function* fn, const unsigned grid[3],
                          const unsigned block[3], int64_t shared_bytes,
                          CUstream stream, void** params) {
  std::string error;
  const Driver* d = GetDriver(&error);
  if (!d) return error;
  if (static_cast<int64_t>(block[0]) * block[1] * block[2] > 1024)
    return "a block of " + std::to_string(block[0]) + "x" +
           std::to_string(block[1]) + "x" + std::to_string(block[2]) +
           " threads exceeds CUDA's limit of 1024";
  if (shared_bytes < 0 || shared_bytes > INT32_MAX)
    return "dynamic shared memory of " + std::to_string(shared_bytes) +
           " bytes is out of range";
  // Above 48 KiB a kernel must opt in to more dynamic shared memory; once
  // per kernel and size, not per launch.
  if (shared_bytes > fn->shared_bytes_allowed.load(std::memory_order_acquire)) {
    error = AllowSharedBytes(*d, fn, static_cast<int>(shared_bytes));
    if (!error.empty()) return error;
  }
  CUresult r = d->LaunchKernel(
      fn->handle, grid[0], grid[1], grid[2], block[0], block[1], block[2],
      static_cast<unsigned>(shared_bytes), stream, params, nullptr);
  if (r != kSuccess) return "cuLaunchKernel: " + Describe(*d, r);
  return std::string();
}

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
inline std::string LaunchFold(Function* fn, const unsigned grid[3],
                              const unsigned block[3], int64_t shared_bytes,
                              CUstream stream, void** params, int batch_param,
                              const FoldLaunch& fold) {
  ::kc::fold::Batch batch = fold.batch;
  params[batch_param] = &batch;
  for (int64_t base = 0; base < fold.count; base += ::kc::fold::kMaxGridZ) {
    batch.base = base;
    const int64_t z = fold.count - base < ::kc::fold::kMaxGridZ
                          ? fold.count - base
                          : ::kc::fold::kMaxGridZ;
    const unsigned folded[3] = {grid[0], grid[1], static_cast<unsigned>(z)};
    // The driver copies the arguments when the launch is queued.
    std::string error = Launch(fn, folded, block, shared_bytes, stream, params);
    if (!error.empty()) return error;
  }
  return std::string();
}

// Fills `count` elements of `bytes` bytes each at `data` with the element
// whose bit pattern is `bits`, asynchronously on `stream`. `fill64` is the
// module's kc_fill_u64 kernel, used for 8-byte patterns whose halves differ.
inline std::string Fill(void* data, int64_t count, int bytes, uint64_t bits,
                        CUstream stream, Function* fill64) {
  std::string error;
  const Driver* d = GetDriver(&error);
  if (!d) return error;
  if (count <= 0) return std::string();
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(data);
  size_t n = static_cast<size_t>(count);
  CUresult r = kSuccess;
  if (bytes == 8 && (bits >> 32) == (bits & 0xffffffffu)) {
    bytes = 4;
    n *= 2;
  }
  switch (bytes) {
    case 1:
      r = d->MemsetD8Async(p, static_cast<unsigned char>(bits), n, stream);
      break;
    case 2:
      r = d->MemsetD16Async(p, static_cast<unsigned short>(bits), n, stream);
      break;
    case 4:
      r = d->MemsetD32Async(p, static_cast<unsigned int>(bits), n, stream);
      break;
    default: {
      if (!fill64) return "no fill kernel for 8-byte elements";
      unsigned long long value = bits;
      long long total = count;
      void* params[] = {&data, &value, &total};
      const int64_t blocks = (count + 255) / 256;
      if (blocks > 2147483647) return "the output is too large to fill";
      const unsigned grid[3] = {static_cast<unsigned>(blocks), 1, 1};
      const unsigned block[3] = {256, 1, 1};
      return Launch(fill64, grid, block, 0, stream, params);
    }
  }
  if (r != kSuccess) return "cuMemsetAsync: " + Describe(*d, r);
  return std::string();
}

// Copies `bytes` bytes between device buffers, asynchronously on `stream`.
inline std::string CopyAsync(void* dst, const void* src, size_t bytes,
                             CUstream stream) {
  std::string error;
  const Driver* d = GetDriver(&error);
  if (!d) return error;
  CUresult r =
      d->MemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(dst),
                         reinterpret_cast<CUdeviceptr>(src), bytes, stream);
  if (r != kSuccess) return "cuMemcpyDtoDAsync: " + Describe(*d, r);
  return std::string();
}

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
