#include "compiler/driver/frontend_options.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>

#include <algorithm>
#include <optional>

#include "compiler/backends/in_process_clang.h"
#include "compiler/backends/nvrtc_backend.h"

namespace kernelc::driver {

frontend::Options FrontendOptions(const Options& o) {
  frontend::Options fo = frontend::DefaultOptions();
  fo.include_dirs = o.include_dirs;
  fo.defines = o.defines;
  // The headers the CPU backend's Clang compiles with, kernelc's bundled
  // ones where it has them.
  backends::ClangRoot root = backends::FindClangRoot();
  fo.resource_dir = root.resource_dir;
  fo.sysroot = root.sysroot;
  // The toolkit of the NVRTC that the build cache's key names and that
  // compiles the kernels.
  if (std::optional<backends::NvrtcLocation> nvrtc = backends::LocateNvrtc();
      nvrtc && !nvrtc->cuda_include.empty())
    fo.cuda_include_dirs = backends::ToolkitIncludeDirs(nvrtc->cuda_include);
  if (o.targets == std::vector<model::Target>{model::Target::kCuda} &&
      !fo.cuda_include_dirs.empty()) {
    fo.dialect = frontend::Options::Dialect::kCudaDevice;
    // The oldest architecture asked for, within what Clang 19 knows (up to
    // sm_90): __CUDA_ARCH__ selects code, but kernel signatures are what
    // the frontend reads.
    int arch = 0;
    for (llvm::StringRef a : llvm::split(o.cuda_arch, ',')) {
      llvm::StringRef digits = a.trim();
      int sm = 0;
      if (digits.consume_front("sm_") && !digits.getAsInteger(10, sm) &&
          (arch == 0 || sm < arch))
        arch = sm;
    }
    fo.cuda_arch = arch == 0 ? 80 : std::min(arch, 90);
  }
  return fo;
}

}  // namespace kernelc::driver
