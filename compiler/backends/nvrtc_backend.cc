#include "compiler/backends/nvrtc_backend.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/SHA256.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "compiler/util/file_io.h"
#include "compiler/util/parallel.h"
#include "compiler/util/quote.h"
#include "kernelc/fold.h"
#include "runtime/embedded_headers.h"

namespace kernelc::backends {

// NVRTC's C API (nvrtc.h), resolved with dlsym. nvrtcResult is an int enum
// and nvrtcProgram an opaque pointer.
struct Nvrtc::Api {
  using Program = struct _nvrtcProgram*;
  const char* (*GetErrorString)(int);
  int (*Version)(int*, int*);
  int (*GetNumSupportedArchs)(int*);
  int (*GetSupportedArchs)(int*);
  int (*CreateProgram)(Program*, const char*, const char*, int,
                       const char* const*, const char* const*);
  int (*DestroyProgram)(Program*);
  int (*AddNameExpression)(Program, const char*);
  int (*CompileProgram)(Program, int, const char* const*);
  int (*GetLoweredName)(Program, const char*, const char**);
  int (*GetProgramLogSize)(Program, size_t*);
  int (*GetProgramLog)(Program, char*);
  int (*GetPTXSize)(Program, size_t*);
  int (*GetPTX)(Program, char*);
  int (*GetCUBINSize)(Program, size_t*);
  int (*GetCUBIN)(Program, char*);
};

Nvrtc::~Nvrtc() = default;  // the library stays loaded for the process
Nvrtc::Nvrtc(Nvrtc&&) noexcept = default;

namespace {

// Candidate NVRTC libraries with the toolkit include directory beside each,
// in search order (README, "The CUDA target"):
//   1. $CUDA_HOME, the toolkit the user names;
//   2. NVIDIA's pip wheels (nvidia/cu13, nvidia/cuda_nvrtc) in the active
//      virtual environment ($VIRTUAL_ENV);
//   3. the active conda environment ($CONDA_PREFIX): conda's CUDA packages
//      (lib/, include/) or pip wheels in it;
//   4. the toolkit of the nvcc on $PATH (<nvcc's directory>/..), where a
//      toolkit lives outside /usr/local/cuda (/opt/cuda, modules);
//   5. /usr/local/cuda.
// kernelc is no Python program, so there is no "running interpreter" to
// ask: a virtual environment counts when it is activated.
std::vector<std::pair<std::string, std::string>> Candidates() {
  std::vector<std::pair<std::string, std::string>> out;
  auto add_root = [&out](const std::string& root) {
    for (const char* lib : {"lib64", "lib"})
      for (const char* so : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
        out.push_back(
            {fmt::format("{}/{}/{}", root, lib, so), root + "/include"});
  };
  auto add_wheels = [&out, &add_root](const std::string& env) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(env + "/lib", ec), end;
         !ec && it != end; it.increment(ec)) {
      std::string nv = it->path() + "/site-packages/nvidia";
      add_root(nv + "/cu13");
      for (const char* so : {"libnvrtc.so.13", "libnvrtc.so.12"})
        out.push_back(
            {nv + "/cuda_nvrtc/lib/" + so, nv + "/cuda_runtime/include"});
    }
  };
  if (const char* home = std::getenv("CUDA_HOME"); home && *home)
    add_root(home);
  if (const char* env = std::getenv("VIRTUAL_ENV"); env && *env)
    add_wheels(env);
  if (const char* conda = std::getenv("CONDA_PREFIX"); conda && *conda) {
    add_root(conda);
    add_wheels(conda);
  }
  if (llvm::ErrorOr<std::string> nvcc = llvm::sys::findProgramByName("nvcc")) {
    llvm::SmallString<256> real;
    if (!llvm::sys::fs::real_path(*nvcc, real)) {
      llvm::sys::path::remove_filename(real);  // bin/
      llvm::sys::path::remove_filename(real);  // the toolkit
      if (!real.empty()) add_root(std::string(real));
    }
  }
  add_root("/usr/local/cuda");
  return out;
}

template <typename F>
bool Resolve(void* h, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(h, name));
  return *fn != nullptr;
}

std::string Sha256Hex(std::string_view data) {
  llvm::SHA256 h;
  h.update(llvm::StringRef(data.data(), data.size()));
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

}  // namespace

Result<Nvrtc> FindNvrtc() {
  Nvrtc n;
  std::vector<std::string> tried;
  for (const auto& [lib, include] : Candidates()) {
    if (!llvm::sys::fs::exists(lib)) continue;
    tried.push_back(lib);
    void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) continue;
    auto api = std::make_unique<Nvrtc::Api>();
    bool ok =
        Resolve(h, "nvrtcGetErrorString", &api->GetErrorString) &&
        Resolve(h, "nvrtcVersion", &api->Version) &&
        Resolve(h, "nvrtcGetNumSupportedArchs", &api->GetNumSupportedArchs) &&
        Resolve(h, "nvrtcGetSupportedArchs", &api->GetSupportedArchs) &&
        Resolve(h, "nvrtcCreateProgram", &api->CreateProgram) &&
        Resolve(h, "nvrtcDestroyProgram", &api->DestroyProgram) &&
        Resolve(h, "nvrtcAddNameExpression", &api->AddNameExpression) &&
        Resolve(h, "nvrtcCompileProgram", &api->CompileProgram) &&
        Resolve(h, "nvrtcGetLoweredName", &api->GetLoweredName) &&
        Resolve(h, "nvrtcGetProgramLogSize", &api->GetProgramLogSize) &&
        Resolve(h, "nvrtcGetProgramLog", &api->GetProgramLog) &&
        Resolve(h, "nvrtcGetPTXSize", &api->GetPTXSize) &&
        Resolve(h, "nvrtcGetPTX", &api->GetPTX) &&
        Resolve(h, "nvrtcGetCUBINSize", &api->GetCUBINSize) &&
        Resolve(h, "nvrtcGetCUBIN", &api->GetCUBIN);
    if (!ok) {
      dlclose(h);
      continue;
    }
    int major = 0, minor = 0, count = 0;
    if (api->Version(&major, &minor) != 0 ||
        api->GetNumSupportedArchs(&count) != 0 || count <= 0) {
      dlclose(h);
      continue;
    }
    n.archs_.resize(count);
    if (api->GetSupportedArchs(n.archs_.data()) != 0) {
      dlclose(h);
      continue;
    }
    n.api_ = std::move(api);
    n.handle_ = h;
    n.library_ = lib;
    n.version_ = fmt::format("{}.{}", major, minor);
    n.cuda_version_ = 1000 * major + 10 * minor;
    if (llvm::sys::fs::exists(include + "/cuda_fp16.h"))
      n.cuda_include_ = include;
    return n;
  }
  return Error::Internal(fmt::format(
      "no usable NVRTC for the cuda target{}: install the CUDA toolkit "
      "(/usr/local/cuda), set CUDA_HOME, or pip install NVIDIA's NVRTC wheel "
      "(nvidia-cuda-nvrtc) in the active virtual environment",
      tried.empty() ? "" : fmt::format(" (tried {})", fmt::join(tried, ", "))));
}

std::vector<std::string> ToolkitIncludeDirs(const std::string& include) {
  std::vector<std::string> dirs = {include};
  if (llvm::sys::fs::is_directory(include + "/cccl"))
    dirs.push_back(include + "/cccl");
  return dirs;
}

std::optional<NvrtcLocation> LocateNvrtc() {
  for (const auto& [lib, include] : Candidates()) {
    if (!llvm::sys::fs::exists(lib)) continue;
    NvrtcLocation loc;
    loc.library = lib;
    if (llvm::sys::fs::exists(include + "/cuda_fp16.h"))
      loc.cuda_include = include;
    return loc;
  }
  return std::nullopt;
}

Result<std::vector<int>> ParseCudaArchs(const std::string& text,
                                        const Nvrtc& nvrtc,
                                        diag::DiagnosticEngine& diags) {
  std::set<int> archs;
  for (llvm::StringRef part : llvm::split(text, ',')) {
    std::string a = part.trim().str();
    int sm = 0;
    if (a.size() < 5 || a.compare(0, 3, "sm_") != 0 ||
        a.find_first_not_of("0123456789", 3) != std::string::npos ||
        llvm::StringRef(a).substr(3).getAsInteger(10, sm)) {
      diags.Report<diag::Id::kCudaArchSyntax>({}, a);
      return Error::Reported();
    }
    const std::vector<int>& ok = nvrtc.supported_archs();
    if (std::find(ok.begin(), ok.end(), sm) == ok.end()) {
      std::vector<std::string> names;
      for (int s : ok) names.push_back(fmt::format("sm_{}", s));
      diags.Report<diag::Id::kCudaArchUnsupported>({}, nvrtc.version(), a,
                                                   fmt::join(names, ", "));
      return Error::Reported();
    }
    archs.insert(sm);
  }
  if (archs.empty()) {
    diags.Report<diag::Id::kCudaArchMissing>({});
    return Error::Reported();
  }
  return std::vector<int>(archs.begin(), archs.end());
}

std::vector<std::string> NvrtcFlags(const CudaBuild& build, int arch) {
  std::vector<std::string> flags = {
      fmt::format("--gpu-architecture=sm_{}", arch), "-std=c++17",
      // Functions without __host__/__device__ are device functions, as
      // they are CPU functions for the CPU target: one source for both.
      "-default-device"};
  if (build.fast_math) flags.push_back("--use_fast_math");
  if (build.lineinfo) flags.push_back("--generate-line-info");
  for (const std::string& d : build.defines) flags.push_back("-D" + d);
  return flags;
}

bool ParseNvrtcLog(const std::string& log, diag::DiagnosticEngine& diags) {
  // "file(12): error: message", then the source line and a caret line, both
  // indented by two spaces.
  static const std::regex head(
      R"(^(.+)\((\d+)\): (catastrophic error|error|warning|remark)(?: #\d+-D)?: (.*)$)");
  std::vector<std::string> lines;
  for (llvm::StringRef l : llvm::split(log, '\n')) lines.push_back(l.str());
  bool any = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, head)) continue;
    diag::SourceLoc loc;
    loc.file = m[1].str();
    loc.line = std::stoi(m[2].str());
    loc.col = 1;
    if (i + 2 < lines.size()) {
      size_t caret = lines[i + 2].find('^');
      if (caret != std::string::npos &&
          lines[i + 2].find_first_not_of(" ^") == std::string::npos &&
          caret >= 2)
        loc.col = static_cast<int>(caret) - 1;
    }
    std::string what = m[3].str();
    if (what != "remark") {
      // NVRTC's words, relayed as they are: not kernelc's diagnostics.
      diag::Diagnostic d;
      d.severity =
          what == "warning" ? diag::Severity::kWarning : diag::Severity::kError;
      d.loc = std::move(loc);
      d.message = m[4].str();
      diags.Add(std::move(d));
    }
    any = true;
  }
  return any;
}

namespace {

// Appended to every program: the 64-bit fill of KC_INIT (see
// kernelc/cuda.h), under a #line of its own so that no diagnostic of it is
// ever attributed to the user's file.
constexpr const char* kFillKernel = R"(
#line 1 "<kernelc>"
extern "C" __global__ void kc_fill_u64(unsigned long long* p,
                                       unsigned long long v, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}
)";

std::string Log(const Nvrtc::Api& api, Nvrtc::Api::Program prog) {
  size_t n = 0;
  if (api.GetProgramLogSize(prog, &n) != 0 || n == 0) return "";
  std::string log(n, '\0');
  if (api.GetProgramLog(prog, log.data()) != 0) return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  return log;
}

// kernelc's headers, in memory: <kernelc.h>, <kernelc/...>, and the C
// library stand-ins <stdint.h>, <stddef.h>, <math.h>, ...
struct Headers {
  std::vector<std::string> names, texts;
  std::vector<const char*> name_ptrs, text_ptrs;

  Headers() {
    for (const EmbeddedFile& f : embedded::UserHeaders()) {
      llvm::StringRef path(f.path.data(), f.path.size());
      for (llvm::StringRef prefix : {"include/", "device_include/"}) {
        if (path.starts_with(prefix)) {
          names.push_back(path.substr(prefix.size()).str());
          texts.push_back(std::string(f.contents));
        }
      }
    }
    Index();
  }

  // kernelc's, and the user's headers as `t` gives them: without their
  // host code, under the name their #include spells.
  Headers(const Headers& base, const model::KernelText& t) : Headers(base) {
    for (const model::KernelText::Header& h : t.headers) {
      if (h.cuda.empty()) continue;
      names.push_back(h.name);
      texts.push_back(h.cuda);
    }
    Index();
  }
  Headers(const Headers& other) : names(other.names), texts(other.texts) {
    Index();
  }

 private:
  void Index() {
    name_ptrs.clear();
    text_ptrs.clear();
    for (size_t i = 0; i < names.size(); ++i) {
      name_ptrs.push_back(names[i].c_str());
      text_ptrs.push_back(texts[i].c_str());
    }
  }
};

// One program compiled for every architecture: a cubin each, and PTX for
// the newest (the last).
struct Compiled {
  std::vector<model::CudaImage> images;
  std::vector<std::string> lowered;  // of the name expressions, in order
  std::string log;                   // of the first architecture
  std::string failed_log;            // set when NVRTC rejected the program
  int failed_arch = 0;
};

// One architecture's compile of a program: its cubin, PTX when it is the
// newest, and for the first the lowered names.
struct ArchCompiled {
  std::vector<model::CudaImage> images;
  std::vector<std::string> lowered;
  std::string log;
  bool failed = false;
};

Result<ArchCompiled> CompileForArch(const Nvrtc& nvrtc, const Headers& headers,
                                    const std::string& program,
                                    const std::string& name,
                                    const std::vector<std::string>& names,
                                    const CudaBuild& build,
                                    const std::string& source_dir, size_t ai) {
  const Nvrtc::Api& api = nvrtc.api();
  ArchCompiled out;
  const int arch = build.archs[ai];
  const bool newest = ai + 1 == build.archs.size();
  std::vector<std::string> flags = NvrtcFlags(build, arch);
  flags.push_back("--include-path=" + source_dir);
  for (const std::string& d : build.include_dirs)
    flags.push_back("--include-path=" + d);
  if (!nvrtc.cuda_include().empty())
    for (const std::string& d : ToolkitIncludeDirs(nvrtc.cuda_include()))
      flags.push_back("--include-path=" + d);
  std::vector<const char*> argv;
  for (const std::string& f : flags) argv.push_back(f.c_str());
  Progress::Stage stage(
      build.progress, fmt::format("nvrtc sm_{}", arch),
      names.empty() ? fmt::format("{} (batch fold)", name) : name);

  Nvrtc::Api::Program prog = nullptr;
  int r = api.CreateProgram(&prog, program.c_str(), name.c_str(),
                            static_cast<int>(headers.names.size()),
                            headers.text_ptrs.data(), headers.name_ptrs.data());
  if (r != 0)
    return Error::Internal(
        fmt::format("nvrtcCreateProgram: {}", api.GetErrorString(r)));
  struct Destroy {
    const Nvrtc::Api& api;
    Nvrtc::Api::Program* p;
    ~Destroy() { api.DestroyProgram(p); }
  } destroy{api, &prog};
  for (const std::string& k : names) api.AddNameExpression(prog, k.c_str());
  r = api.CompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  out.log = Log(api, prog);
  if (r != 0) {
    out.failed = true;
    return out;
  }
  if (ai == 0) {
    for (const std::string& k : names) {
      const char* lowered = nullptr;
      if (api.GetLoweredName(prog, k.c_str(), &lowered) != 0 || !lowered)
        return Error::Internal(
            fmt::format("NVRTC gave no lowered name for kernel '{}'", k));
      out.lowered.push_back(lowered);
    }
  }
  for (bool is_ptx : {false, true}) {
    if (is_ptx && !newest) break;
    model::CudaImage im;
    im.sm = arch;
    im.is_ptx = is_ptx;
    const char* kind = is_ptx ? "PTX" : "cubin";
    size_t n = 0;
    if ((is_ptx ? api.GetPTXSize : api.GetCUBINSize)(prog, &n) != 0 || n == 0)
      return Error::Internal(
          fmt::format("NVRTC produced no {} for sm_{}", kind, arch));
    im.data.resize(n);
    if ((is_ptx ? api.GetPTX : api.GetCUBIN)(prog, im.data.data()) != 0)
      return Error::Internal(
          fmt::format("nvrtcGet{} failed", is_ptx ? "PTX" : "CUBIN"));
    while (is_ptx && !im.data.empty() && im.data.back() == '\0')
      im.data.pop_back();
    im.sha256 = Sha256Hex(im.data);
    out.images.push_back(std::move(im));
  }
  stage.Done();
  return out;
}

// The architectures compile at the same time (NVRTC compiles distinct
// programs on as many threads as it is given), each on a core; the result
// is as if they ran in order and stopped at the first that failed.
Result<Compiled> CompileProgram(const Nvrtc& nvrtc, const Headers& headers,
                                const std::string& program,
                                const std::string& name,
                                const std::vector<std::string>& names,
                                const CudaBuild& build,
                                const std::string& source_dir) {
  std::vector<std::optional<Result<ArchCompiled>>> archs(build.archs.size());
  auto run = [&](size_t ai) {
    archs[ai] = CompileForArch(nvrtc, headers, program, name, names, build,
                               source_dir, ai);
  };
  ForEachConcurrently(archs.size(), run);
  Compiled out;
  for (size_t ai = 0; ai < archs.size(); ++ai) {
    Result<ArchCompiled>& a = *archs[ai];
    if (!a.ok()) return a.error();
    if (a.value().failed) {
      out.failed_log = std::move(a.value().log);
      out.failed_arch = build.archs[ai];
      return out;
    }
    if (ai == 0) {
      out.log = std::move(a.value().log);
      out.lowered = std::move(a.value().lowered);
    }
    for (model::CudaImage& im : a.value().images)
      out.images.push_back(std::move(im));
  }
  return out;
}

// The kernels of a source whose batch can fold into the grid's z axis
// (kernelc/fold.h) as the model shows them: __global__, with a grid of one
// or two dimensions and at most kMaxTensors tensors, not elementwise (those
// fold into dimension 0).
std::vector<const model::Kernel*> FoldCandidates(
    const model::Module& module, const std::vector<std::string>& kernels) {
  std::vector<const model::Kernel*> out;
  for (const std::string& name : kernels) {
    const model::Kernel* k = module.FindKernel(name);
    if (k == nullptr || k->grid.size() >= 3 || k->FoldsElementwise()) continue;
    const auto tensors = std::count_if(
        k->params.begin(), k->params.end(), [](const model::Param& p) {
          return model::IsTensor(p.role) || p.traced;
        });
    if (tensors > ::kc::fold::kMaxTensors) continue;
    out.push_back(k);
  }
  return out;
}

// Of `candidates`, those that use neither blockIdx.z nor gridDim.z
// according to the PTX of `bin`, the program that compiled them.
std::vector<const model::Kernel*> WithoutGridZ(
    const std::vector<const model::Kernel*>& candidates,
    const model::CudaBinary& bin) {
  PtxFunctions ptx;
  for (const model::CudaImage& im : bin.images)
    if (im.is_ptx) ptx = ParsePtxFunctions(im.data);
  std::vector<const model::Kernel*> out;
  for (const model::Kernel* k : candidates) {
    const auto at = std::find(bin.kernels.begin(), bin.kernels.end(), k->name);
    if (!UsesGridZ(ptx, bin.lowered[at - bin.kernels.begin()]))
      out.push_back(k);
  }
  return out;
}

}  // namespace

PtxFunctions ParsePtxFunctions(std::string_view ptx) {
  // A header line names the function before its last '(', and the body
  // runs from the next '{' at depth 0 to its '}'.
  PtxFunctions functions;
  std::string current;
  PtxFunction f;
  int depth = 0;
  bool in_body = false;
  for (llvm::StringRef line :
       llvm::split(llvm::StringRef(ptx.data(), ptx.size()), '\n')) {
    llvm::StringRef t = line.trim();
    if (!in_body && depth == 0 &&
        (t.contains(".entry ") || t.contains(".func ")) && !t.ends_with(";")) {
      llvm::StringRef head = t.substr(0, t.rfind('(')).rtrim();
      current = head.rsplit(' ').second.str();
      if (current.empty()) current = head.str();
      f.callable = t.contains(".func ");
      continue;
    }
    if (current.empty()) continue;
    for (char c : t) {
      if (c == '{') {
        if (depth++ == 0) in_body = true;
      } else if (c == '}') {
        --depth;
      }
    }
    if (in_body) f.body += t.str() + "\n";
    if (in_body && depth == 0) {
      functions[current] = std::move(f);
      f = PtxFunction();
      current.clear();
      in_body = false;
    }
  }
  return functions;
}

bool UsesGridZ(const PtxFunctions& ptx, std::string_view entry) {
  auto uses_z = [](llvm::StringRef b) {
    return b.contains("%ctaid.z") || b.contains("%nctaid.z");
  };
  auto it = ptx.find(entry);
  if (it == ptx.end()) return true;  // unknown: assume it does
  if (uses_z(it->second.body)) return true;
  // A call may reach a function that does: conservatively, any.
  if (!llvm::StringRef(it->second.body).contains("call")) return false;
  for (const auto& [name, f] : ptx)
    if (f.callable && uses_z(f.body)) return true;
  return false;
}

Result<std::vector<model::CudaBinary>> CompileCuda(
    const Nvrtc& nvrtc, const model::Module& module, const CudaBuild& build,
    diag::DiagnosticEngine& diags) {
  const Headers headers;
  std::vector<model::CudaBinary> out;
  for (size_t si = 0; si < module.sources.size(); ++si) {
    const std::string& src = module.sources[si];
    model::CudaBinary bin;
    bin.source = src;
    bin.source_index = static_cast<int>(si);
    for (const model::Kernel& k : module.kernels)
      if (k.source == src && k.kind == model::KernelKind::kGlobal && !k.ptx)
        bin.kernels.push_back(k.name);
    if (bin.kernels.empty()) continue;
    // A whole .cu file: what the frontend left of it (model::KernelText).
    const model::KernelText none;
    const model::KernelText& kernel_text =
        si < module.kernel_texts.size() ? module.kernel_texts[si] : none;
    std::optional<std::string> text =
        kernel_text.cuda.empty() ? ReadFile(src) : kernel_text.cuda;
    if (!text) {
      diags.Report<diag::Id::kCannotRead>({}, src);
      return Error::Reported();
    }
    const Headers source_headers(headers, kernel_text);
    llvm::SmallString<256> dir(src);
    llvm::sys::fs::make_absolute(dir);
    llvm::sys::path::remove_filename(dir);

    // The path is the user's text: escaped, as a string literal needs.
    std::string program = fmt::format("#line 1 \"{}\"\n{}\n{}",
                                      EscapeForLiteral(src), *text,
                                      kFillKernel);
    // The batch fold: a program of its own (kernelc/fold.h), for the
    // kernels whose batch can fold into the grid's z axis and those with
    // traced scalars, which have their entries there and need it. Whether a
    // kernel folds depends on its PTX too (one that uses the grid's z axis
    // does not), which only the kernels' own program gives; so the fold
    // program is compiled at the same time as it, for the kernels the model
    // allows, and again, after it, in the rare case that the PTX rules one
    // out. Should NVRTC reject the fold program (a kernel that launches
    // kernels, say), the batch runs one launch per element instead.
    std::vector<const model::Kernel*> candidates, entries;
    if (build.fold_program) candidates = FoldCandidates(module, bin.kernels);
    for (const std::string& name : bin.kernels)
      if (const model::Kernel* k = module.FindKernel(name); k && k->HasTraced())
        entries.push_back(k);
    if (!entries.empty() && !build.fold_program)
      return Error::Internal("kernels with traced scalars need a fold program");
    auto compile_fold = [&](const std::vector<const model::Kernel*>& fold)
        -> Result<Compiled> {
      Result<std::string> fold_program =
          build.fold_program(src, *text, fold, entries);
      if (!fold_program.ok()) return fold_program.error();
      return CompileProgram(nvrtc, source_headers, fold_program.value(), src,
                            {}, build, std::string(dir));
    };
    const bool folds = !candidates.empty() || !entries.empty();
    std::optional<Result<Compiled>> c, f;
    ForEachConcurrently(folds ? 2 : 1, [&](size_t i) {
      if (i == 0)
        c = CompileProgram(nvrtc, source_headers, program, src, bin.kernels,
                           build, std::string(dir));
      else
        f = compile_fold(candidates);
    });
    if (!c->ok()) return c->error();
    if (!c->value().failed_log.empty()) {
      // NVRTC's diagnostics say what failed; a log they cannot be read out
      // of is shown whole.
      if (!ParseNvrtcLog(c->value().failed_log, diags))
        diags.Report<diag::Id::kNvrtcFailed>({}, nvrtc.version(), src,
                                             c->value().failed_arch,
                                             c->value().failed_log);
      return Error::Reported();
    }
    // Warnings are the same for every architecture: reported once.
    ParseNvrtcLog(c->value().log, diags);
    bin.lowered = std::move(c->value().lowered);
    bin.images = std::move(c->value().images);

    if (folds) {
      const std::vector<const model::Kernel*> fold =
          WithoutGridZ(candidates, bin);
      if (fold.empty() && entries.empty()) {
        out.push_back(std::move(bin));
        continue;
      }
      if (fold.size() != candidates.size()) f = compile_fold(fold);
      if (!f->ok()) return f->error();
      if (!f->value().failed_log.empty() && !entries.empty()) {
        if (!ParseNvrtcLog(f->value().failed_log, diags))
          diags.Report<diag::Id::kNvrtcFailed>({}, nvrtc.version(), src,
                                               f->value().failed_arch,
                                               f->value().failed_log);
        diags.Report<diag::Id::kTracedEntryProgram>(entries.front()->loc,
                                                    entries.front()->name);
        return Error::Reported();
      }
      if (f->value().failed_log.empty()) {
        for (const model::Kernel* k : fold) bin.fold_kernels.push_back(k->name);
        for (const model::Kernel* k : entries)
          bin.entry_kernels.push_back(k->name);
        bin.fold_images = std::move(f->value().images);
        bin.text = std::move(*text);
      }
    }
    out.push_back(std::move(bin));
  }
  return out;
}

}  // namespace kernelc::backends
