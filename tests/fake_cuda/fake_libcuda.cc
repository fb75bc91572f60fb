// A stand-in libcuda.so.1 for testing kernelc's CUDA runtime and generated
// handlers without a GPU: the entry points the runtime resolves through
// cuGetProcAddress_v2, each logging its call to stdout (the caller's stdout,
// so its own lines interleave in order).
//
// Environment:
//   FAKE_CUDA_CC       the device's compute capability, "90" for sm_90
//   FAKE_CUDA_DRIVER   what cuDriverGetVersion reports (default 13000)
//   FAKE_CUDA_FAIL     an entry point that fails, as "cuName" (with
//                      CUDA_ERROR_INVALID_VALUE) or "cuName=CODE"
//   FAKE_CUDA_CAPTURING  set: every stream is being captured
//   FAKE_CUDA_PTX      PTX files (':'-separated) whose .entry declarations
//                      give the kernels' parameter sizes
//
// A stream's context is 0xc0 plus the stream's address divided by 4096, so
// streams in different 4 KiB pages stand for different contexts. Launches
// log each parameter as hex when the kernel's parameter sizes are known
// (from FAKE_CUDA_PTX or a PTX image it loaded): scalars as one number,
// larger ones (tensor views) as 8-byte words joined by ':'.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

typedef int CUresult;
namespace {

std::mutex mu;  // handlers may run on several threads

CUresult Fails(const char* name) {
  const char* f = getenv("FAKE_CUDA_FAIL");
  if (!f) return 0;
  const char* eq = strchr(f, '=');
  size_t n = eq ? static_cast<size_t>(eq - f) : strlen(f);
  if (strlen(name) != n || strncmp(f, name, n) != 0) return 0;
  return eq ? atoi(eq + 1) : 1;
}
#define FAKE_RETURN(name) return Fails(name)

int cc() {
  const char* v = getenv("FAKE_CUDA_CC");
  return v ? atoi(v) : 90;
}

// Kernel name -> the size of each parameter, from PTX .entry declarations:
//   .visible .entry name(
//       .param .u64 name_param_0,
//       .param .align 8 .b8 name_param_1[24]
//   )
std::map<std::string, std::vector<size_t>>& Params() {
  static auto* params = new std::map<std::string, std::vector<size_t>>;
  return *params;
}

void ParsePtx(const std::string& ptx) {
  size_t at = 0;
  while ((at = ptx.find(".entry ", at)) != std::string::npos) {
    at += 7;
    size_t open = ptx.find('(', at), close = ptx.find(')', at);
    if (open == std::string::npos || close == std::string::npos) return;
    std::string name = ptx.substr(at, open - at);
    std::vector<size_t> sizes;
    std::istringstream decls(ptx.substr(open + 1, close - open - 1));
    std::string decl;
    while (std::getline(decls, decl, ',')) {
      if (decl.find(".param") == std::string::npos) continue;
      size_t bits = 0;
      for (const char* t : {".u", ".s", ".b", ".f"}) {
        size_t p = 0;
        while ((p = decl.find(t, p)) != std::string::npos) {
          p += 2;
          if (p < decl.size() && decl[p] >= '0' && decl[p] <= '9') {
            bits = strtoul(decl.c_str() + p, nullptr, 10);
            break;
          }
        }
        if (bits) break;
      }
      size_t count = 1;
      if (size_t b = decl.find('['); b != std::string::npos)
        count = strtoul(decl.c_str() + b + 1, nullptr, 10);
      sizes.push_back(bits / 8 * count);
    }
    Params()[name] = sizes;
    at = close;
  }
}

void LoadPtxFiles() {
  static bool done = false;
  if (done) return;
  done = true;
  const char* files = getenv("FAKE_CUDA_PTX");
  if (!files) return;
  std::istringstream list(files);
  std::string path;
  while (std::getline(list, path, ':')) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    ParsePtx(text.str());
  }
}

// A parameter as hex: one number up to 8 bytes, else 8-byte words.
std::string Hex(const void* p, size_t size) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  std::string out;
  for (size_t word = 0; word < size; word += 8) {
    uint64_t v = 0;
    size_t n = size - word < 8 ? size - word : 8;
    memcpy(&v, b + word, n);
    char buf[32];
    snprintf(buf, sizeof buf, "%s%llx", word ? ":" : "", (unsigned long long)v);
    out += buf;
  }
  return out;
}

int live_modules = 0;

CUresult Init(unsigned) { FAKE_RETURN("cuInit"); }
CUresult DriverGetVersion(int* v) {
  const char* e = getenv("FAKE_CUDA_DRIVER");
  *v = e ? atoi(e) : 13000;
  FAKE_RETURN("cuDriverGetVersion");
}
const char* ErrorName(CUresult r) {
  switch (r) {
    case 1:
      return "CUDA_ERROR_INVALID_VALUE";
    case 200:
      return "CUDA_ERROR_INVALID_IMAGE";
    case 209:
      return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 218:
      return "CUDA_ERROR_INVALID_PTX";
    case 222:
      return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    default:
      return "CUDA_ERROR_UNKNOWN";
  }
}
CUresult GetErrorName(CUresult r, const char** s) {
  *s = ErrorName(r);
  return 0;
}
CUresult GetErrorString(CUresult r, const char** s) {
  *s = r == 1 ? "invalid argument" : "fake error";
  return 0;
}
CUresult StreamGetCtx(void* stream, void** ctx) {
  std::lock_guard<std::mutex> lock(mu);
  printf("cuStreamGetCtx(%p)\n", stream);
  *ctx = reinterpret_cast<void*>(0xc0 +
                                 (reinterpret_cast<uintptr_t>(stream) >> 12));
  FAKE_RETURN("cuStreamGetCtx");
}
CUresult StreamIsCapturing(void*, int* status) {
  const char* c = getenv("FAKE_CUDA_CAPTURING");
  *status = c ? 1 : 0;
  FAKE_RETURN("cuStreamIsCapturing");
}
CUresult ThreadExchangeStreamCaptureMode(int* mode) {
  std::lock_guard<std::mutex> lock(mu);
  static int current = 1;
  printf("cuThreadExchangeStreamCaptureMode(%d)\n", *mode);
  int old = current;
  current = *mode;
  *mode = old;
  return 0;
}
CUresult CtxGetCurrent(void** ctx) {
  std::lock_guard<std::mutex> lock(mu);
  printf("cuCtxGetCurrent\n");
  *ctx = reinterpret_cast<void*>(0xc1);
  return 0;
}
CUresult CtxPushCurrent(void* ctx) {
  std::lock_guard<std::mutex> lock(mu);
  printf("cuCtxPushCurrent(%p)\n", ctx);
  return 0;
}
CUresult CtxPopCurrent(void** ctx) {
  std::lock_guard<std::mutex> lock(mu);
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
// Logs which image: a real ELF64 cubin by its e_flags (where the
// architecture is) and address, PTX by its .target line, anything else by
// its first bytes. ELF images must be 8-byte aligned, as for the driver.
CUresult ModuleLoadData(void** module, const void* image) {
  std::lock_guard<std::mutex> lock(mu);
  const char* s = static_cast<const char*>(image);
  if (memcmp(s,
             "\x7f"
             "ELF\x02",
             5) == 0) {
    uint32_t flags = 0;
    memcpy(&flags, s + 48, 4);
    printf("cuModuleLoadData(cubin e_flags %x at %p)\n", flags, image);
    if (reinterpret_cast<uintptr_t>(image) % 8 != 0) return 200;
  } else if (const char* t = strstr(s, "\n.target ")) {
    printf("cuModuleLoadData(PTX %.*s at %p)\n",
           static_cast<int>(strcspn(t + 1, "\n")), t + 1, image);
    ParsePtx(s);
  } else {
    printf("cuModuleLoadData(%.24s)\n", s);
  }
  *module = const_cast<void*>(image);
  CUresult r = Fails("cuModuleLoadData");
  if (r == 0) ++live_modules;
  return r;
}
CUresult ModuleUnload(void* module) {
  std::lock_guard<std::mutex> lock(mu);
  --live_modules;
  printf("cuModuleUnload(%p), %d loaded\n", module, live_modules);
  FAKE_RETURN("cuModuleUnload");
}
CUresult ModuleGetFunction(void** fn, void*, const char* name) {
  std::lock_guard<std::mutex> lock(mu);
  printf("cuModuleGetFunction(%s)\n", name);
  *fn = const_cast<char*>(name);
  FAKE_RETURN("cuModuleGetFunction");
}
CUresult FuncSetAttribute(void* fn, int attr, int value) {
  std::lock_guard<std::mutex> lock(mu);
  printf("cuFuncSetAttribute(%s, %d, %d)\n", static_cast<char*>(fn), attr,
         value);
  FAKE_RETURN("cuFuncSetAttribute");
}
CUresult LaunchKernel(void* fn, unsigned gx, unsigned gy, unsigned gz,
                      unsigned bx, unsigned by, unsigned bz, unsigned shared,
                      void* stream, void** params, void** extra) {
  std::lock_guard<std::mutex> lock(mu);
  LoadPtxFiles();
  const char* name = static_cast<char*>(fn);
  std::string args;
  auto it = Params().find(name);
  if (it != Params().end()) {
    args = "params [";
    for (size_t i = 0; i < it->second.size(); ++i)
      args += (i ? " " : "") + Hex(params[i], it->second[i]);
    args += "]";
  } else {
    args = "first param " + Hex(params[0], 8);
  }
  printf(
      "cuLaunchKernel(%s, grid %u %u %u, block %u %u %u, shared %u, %p, "
      "%s, extra %p)\n",
      name, gx, gy, gz, bx, by, bz, shared, stream, args.c_str(), extra);
  FAKE_RETURN("cuLaunchKernel");
}
CUresult MemcpyDtoDAsync(uint64_t dst, uint64_t src, size_t n, void* stream) {
  std::lock_guard<std::mutex> lock(mu);
  printf("cuMemcpyDtoDAsync(%llx, %llx, %zu, %p)\n", (unsigned long long)dst,
         (unsigned long long)src, n, stream);
  FAKE_RETURN("cuMemcpyDtoDAsync");
}
CUresult MemsetD8Async(uint64_t p, unsigned char v, size_t n, void* stream) {
  std::lock_guard<std::mutex> lock(mu);
  printf("cuMemsetD8Async(%llx, %x, %zu, %p)\n", (unsigned long long)p, v, n,
         stream);
  FAKE_RETURN("cuMemsetD8Async");
}
CUresult MemsetD16Async(uint64_t p, unsigned short v, size_t n, void* stream) {
  std::lock_guard<std::mutex> lock(mu);
  printf("cuMemsetD16Async(%llx, %x, %zu, %p)\n", (unsigned long long)p, v, n,
         stream);
  FAKE_RETURN("cuMemsetD16Async");
}
CUresult MemsetD32Async(uint64_t p, unsigned v, size_t n, void* stream) {
  std::lock_guard<std::mutex> lock(mu);
  printf("cuMemsetD32Async(%llx, %x, %zu, %p)\n", (unsigned long long)p, v, n,
         stream);
  FAKE_RETURN("cuMemsetD32Async");
}

struct Entry {
  const char* name;
  void* fn;
};
#define E(n, f) \
  { n, reinterpret_cast<void*>(&f) }
const Entry kEntries[] = {
    E("cuInit", Init),
    E("cuDriverGetVersion", DriverGetVersion),
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
    E("cuModuleUnload", ModuleUnload),
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
