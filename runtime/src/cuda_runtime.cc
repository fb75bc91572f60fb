// The CUDA side of the prebuilt runtime (kernelc/cuda.h): the Driver API
// loaded lazily, the module caches' loads, launches, fills and copies.
// Compiled once, with kernelc, into libkernelc_runtime.a; a library whose
// handlers do not use CUDA links none of it.
#include "kernelc/cuda.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace kc::cuda {

// Inside the runtime, an operation's failure is its message, empty on
// success; handlers get 0 or non-zero with the message in a kc_error.
namespace {

// Loads libcuda and resolves the entry points, once per process. Returns
// null and sets *error when there is no usable driver.
const Driver* GetDriver(std::string* error) {
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
std::string Describe(const Driver& d, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.GetErrorName(r, &name) != kSuccess) name = nullptr;
  if (d.GetErrorString(r, &text) != kSuccess) text = nullptr;
  std::string s = name ? name : "CUresult " + std::to_string(r);
  if (text) s += std::string(" (") + text + ")";
  return s;
}

// "13.0" for the CUDA version 13000.
std::string CudaVersionString(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

// 0 for an empty `error`, else non-zero with `error` in *why, cut to fit.
int32_t Report(const std::string& error, kc_error* why) {
  if (error.empty()) return 0;
  const size_t n = error.size() < sizeof why->message - 1
                       ? error.size()
                       : sizeof why->message - 1;
  memcpy(why->message, error.data(), n);
  why->message[n] = '\0';
  return 1;
}

}  // namespace

int32_t ModuleCache::Get(CUstream stream, const int* slots, int count,
                         Function** functions, kc_error* why) {
  return Report(Lookup(stream, slots, count, functions), why);
}

std::string ModuleCache::Lookup(CUstream stream, const int* slots, int count,
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

// The image for a device of compute capability major.minor: its own
// cubin, else a cubin of the same major version and a lower minor (binary
// compatible), else the PTX when it is not newer than the device.
const kc_cuda_image* ModuleCache::Choose(int major, int minor) const {
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

std::string ModuleCache::Load(const Driver& d, CUcontext ctx, Loaded* l) {
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
std::string ModuleCache::DriverTooOld(int driver) const {
  const std::string built = CudaVersionString(desc_->cuda_version);
  return "the CUDA driver supports CUDA " + CudaVersionString(driver) +
         ", older than the NVRTC " + built + " that compiled " +
         desc_->source + ": install an NVIDIA driver for CUDA " + built +
         " or newer, or rebuild the package with a CUDA toolkit no newer "
         "than CUDA " +
         CudaVersionString(driver) + " (kernelc finds it through CUDA_HOME)";
}

std::string ModuleCache::LoadInCurrent(const Driver& d, Loaded* l) {
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

namespace {

// Raises the dynamic shared memory `fn` may use to `bytes`, unless a launch
// before did. Serialized, so that the recorded value is the one last set.
std::string AllowSharedBytes(const Driver& d, Function* fn, int bytes) {
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
std::string LaunchText(Function* fn, const unsigned grid[3],
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

// Launches a fold entry over `fold`'s batch: `grid` of the kernel for one
// element, with gridDim.z spanning the batch (several launches when it is
// longer than CUDA allows). `params` points at each argument of the
// kernel, and its slot `batch_param` (the entry's last parameter) is set to
// each launch's Batch.
std::string LaunchFoldText(Function* fn, const unsigned grid[3],
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
    std::string error =
        LaunchText(fn, folded, block, shared_bytes, stream, params);
    if (!error.empty()) return error;
  }
  return std::string();
}

// Fills `count` elements of `bytes` bytes each at `data` with the element
// whose bit pattern is `bits`, asynchronously on `stream`. `fill64` is the
// module's kc_fill_u64 kernel, used for 8-byte patterns whose halves differ.
std::string FillText(void* data, int64_t count, int bytes, uint64_t bits,
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
      return LaunchText(fill64, grid, block, 0, stream, params);
    }
  }
  if (r != kSuccess) return "cuMemsetAsync: " + Describe(*d, r);
  return std::string();
}

// Copies `bytes` bytes between device buffers, asynchronously on `stream`.
std::string CopyText(void* dst, const void* src, size_t bytes,
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

}  // namespace

int32_t Launch(Function* fn, const unsigned grid[3], const unsigned block[3],
               int64_t shared_bytes, CUstream stream, void** params,
               kc_error* why) {
  return Report(LaunchText(fn, grid, block, shared_bytes, stream, params),
                why);
}

int32_t LaunchFold(Function* fn, const unsigned grid[3],
                   const unsigned block[3], int64_t shared_bytes,
                   CUstream stream, void** params, int batch_param,
                   const FoldLaunch& fold, kc_error* why) {
  return Report(LaunchFoldText(fn, grid, block, shared_bytes, stream, params,
                               batch_param, fold),
                why);
}

int32_t Fill(void* data, int64_t count, int bytes, uint64_t bits,
             CUstream stream, Function* fill64, kc_error* why) {
  return Report(FillText(data, count, bytes, bits, stream, fill64), why);
}

int32_t CopyAsync(void* dst, const void* src, size_t bytes, CUstream stream,
                  kc_error* why) {
  return Report(CopyText(dst, src, bytes, stream), why);
}

}  // namespace kc::cuda
