// Drives kernelc's CUDA runtime (kernelc/cuda.h) against the fake libcuda:
// image choice, module loading once per context, launches, fills, copies and
// errors. Prints what each call returned; the test compares the log.
//
//   drv [CUDA_VERSION]   the calls below; CUDA_VERSION (default 13000) is
//                        the NVRTC version the images claim to come from
//   drv choose           only loads a module whose cubin is newer than an
//                        sm_8x device but of its major version, beside
//                        compute_80 PTX
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernelc/cuda.h"

namespace {

alignas(8) const unsigned char kCubin80[] =
    "\x7f"
    "ELF cubin sm_80";
alignas(8) const unsigned char kCubin90[] =
    "\x7f"
    "ELF cubin sm_90";
const unsigned char kPtx90[] = ".version ptx compute_90";
const kc_cuda_image kImages[] = {
    {80, 0, kCubin80, sizeof(kCubin80)},
    {90, 0, kCubin90, sizeof(kCubin90)},
    {90, 1, kPtx90, sizeof(kPtx90)},
};
const char* const kKernels[] = {"_Z4saxpyPKf", "kc_fill_u64"};
kc_cuda_module kModule = {"saxpy.cu", kImages, 3, kKernels, 2, 13000};

alignas(8) const unsigned char kCubin86[] =
    "\x7f"
    "ELF cubin sm_86";
const unsigned char kPtx80[] = ".version ptx compute_80";
const kc_cuda_image kNewerCubin[] = {
    {86, 0, kCubin86, sizeof(kCubin86)},
    {80, 1, kPtx80, sizeof(kPtx80)},
};
const kc_cuda_module kNewerCubinModule = {"newer.cu", kNewerCubin, 2,
                                          kKernels,   2,           13000};

// Why the last call failed: every call below reports here.
kc_error why;

void Print(const char* what, int32_t failed) {
  printf("%s -> %s\n", what, failed == 0 ? "ok" : why.message);
}

}  // namespace

int main(int argc, char** argv) {
  CUstream stream = reinterpret_cast<CUstream>(0x5);
  kc::cuda::Function *fn = nullptr, *fill = nullptr;
  if (argc > 1 && strcmp(argv[1], "choose") == 0) {
    kc::cuda::ModuleCache newer(&kNewerCubinModule);
    Print("get", newer.Get(stream, 0, &fn, &why));
    return 0;
  }
  if (argc > 1) kModule.cuda_version = atoi(argv[1]);
  kc::cuda::ModuleCache cache(&kModule);
  Print("get", cache.Get(stream, 0, &fn, &why));
  Print("get again", cache.Get(stream, 1, &fill, &why));
  if (!fn || !fill) return 1;
  const unsigned grid[3] = {4, 2, 1}, block[3] = {256, 1, 1};
  unsigned long long arg = 0xabcdef;
  void* params[] = {&arg, nullptr};
  Print("launch", kc::cuda::Launch(fn, grid, block, 0, stream, params, &why));
  Print("launch 64k",
        kc::cuda::Launch(fn, grid, block, 65536, stream, params, &why));
  // The limit is raised only when it grows.
  Print("launch 64k again",
        kc::cuda::Launch(fn, grid, block, 65536, stream, params, &why));
  Print("launch 50k",
        kc::cuda::Launch(fn, grid, block, 50000, stream, params, &why));
  Print("launch 80k",
        kc::cuda::Launch(fn, grid, block, 81920, stream, params, &why));
  const unsigned big[3] = {64, 32, 1};
  Print("launch 2048",
        kc::cuda::Launch(fn, grid, big, 0, stream, params, &why));
  void* data = reinterpret_cast<void*>(0x1000);
  Print("fill i8", kc::cuda::Fill(data, 10, 1, kc::cuda::Bits<int8_t>(-3),
                                  stream, fill, &why));
  Print("fill f16", kc::cuda::Fill(data, 10, 2, 0x3e00, stream, fill, &why));
  Print("fill f32",
        kc::cuda::Fill(data, 10, 4, kc::cuda::Bits(2.25f), stream, fill, &why));
  Print("fill i64 -1", kc::cuda::Fill(data, 10, 8, kc::cuda::Bits<int64_t>(-1),
                                      stream, fill, &why));
  Print("fill f64 0.1",
        kc::cuda::Fill(data, 1000, 8, kc::cuda::Bits(0.1), stream, fill, &why));
  Print("fill empty", kc::cuda::Fill(data, 0, 4, 0, stream, fill, &why));
  Print("copy", kc::cuda::CopyAsync(data, reinterpret_cast<void*>(0x2000), 64,
                                    stream, &why));
  kc::cuda::View<2> v = kc::cuda::MakeView<2>(data, std::vector<int64_t>{3, 4});
  printf("view %p %lld %lld size %zu\n", v.data, (long long)v.shape[0],
         (long long)v.shape[1], sizeof(v));
  return 0;
}
