// kernelc: compiles annotated kernels into a Python package of JAX ops.
//
//   kernelc build SRC... -o OUTDIR [--name PKG] [--target cpu|cuda|cpu,cuda]
//       [--cuda-arch sm_80,sm_90] [--use-fast-math] [-I DIR] [-D N[=V]]
//       [--no-cache] [--cache-dir DIR]
//   kernelc wheel PKGDIR|SRC... -o DIST [--version V] [--platform TAG]
//   kernelc inspect SRC... | PKGDIR
//   kernelc emit SRC... -o DIR       generated sources only
//
// Exit codes: 0 success, 1 errors in the user's input (diagnostics printed),
// 2 internal or toolchain failures.
#include <clang/Basic/Version.h>
#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/SHA256.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

#include "compiler/backends/host_backend.h"
#include "compiler/backends/nvrtc_backend.h"
#include "compiler/cache/build_cache.h"
#include "compiler/diag/diagnostic.h"
#include "compiler/emit/emit.h"
#include "compiler/emit/namer.h"
#include "compiler/frontend/frontend.h"
#include "compiler/model/json.h"
#include "compiler/sema/sema.h"
#include "compiler/util/file_io.h"
#include "compiler/wheel/wheel.h"
#include "runtime/embedded_headers.h"
#include "runtime/embedded_python.h"
#include "runtime/embedded_xla_ffi.h"
#include "templates/embedded_templates.h"

namespace kernelc {
namespace {

constexpr const char* kVersion = "0.1.0";
// The jaxlib whose XLA FFI headers are compiled into kernelc, and their API.
constexpr const char* kJaxlibFloor = "0.8.1";
constexpr const char* kFfiApi = "0.2";

enum Exit { kOk = 0, kUserError = 1, kInternalError = 2 };

struct Options {
  std::vector<std::string> sources;
  std::string out_dir;
  std::string name;
  std::string target = "cpu";
  std::string cuda_arch;
  bool fast_math = false;
  std::vector<std::string> include_dirs;
  std::vector<std::string> defines;
  bool no_cache = false;
  std::string cache_dir;  // empty: cache::DefaultDirectory()
  // kernelc wheel
  std::string wheel_version = "0.0.0";
  std::string platform;  // empty: wheel::HostPlatformTag()
};

int Report(const Error& e) {
  if (!e.message.empty()) {
    fmt::print(stderr, "kernelc: {}{}\n",
               e.kind == ErrorKind::kInternal ? "internal error: " : "error: ",
               e.message);
  }
  return e.kind == ErrorKind::kUser ? kUserError : kInternalError;
}

void PrintDiagnostics(const diag::DiagnosticSink& diags) {
  fmt::print(stderr, "{}", diag::FormatAll(diags, ReadFile));
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// How the frontend reads the sources of a build for `targets`: as the CPU
// sees them, unless the build is for the cuda target alone, which reads
// them as CUDA device code against the toolkit's headers (those NVRTC
// compiles with), so that any CUDA header works. Where no toolkit headers
// are found, NVRTC has none either, and the CPU's view serves.
frontend::Options FrontendOptions(const Options& o,
                                  const std::vector<std::string>& targets) {
  frontend::Options fo = frontend::DefaultOptions();
  fo.include_dirs = o.include_dirs;
  fo.defines = o.defines;
  // The toolkit of the NVRTC that the build cache's key names and that
  // compiles the kernels.
  if (std::optional<backends::NvrtcLocation> nvrtc = backends::LocateNvrtc();
      nvrtc && !nvrtc->cuda_include.empty())
    fo.cuda_include_dirs = backends::ToolkitIncludeDirs(nvrtc->cuda_include);
  if (targets == std::vector<std::string>{"cuda"} &&
      !fo.cuda_include_dirs.empty()) {
    fo.dialect = frontend::Options::Dialect::kCudaDevice;
    // The oldest architecture asked for, within what Clang 19 knows (up to
    // sm_90): __CUDA_ARCH__ selects code, but kernel signatures are what
    // the frontend reads.
    int arch = 0;
    for (llvm::StringRef a : llvm::split(o.cuda_arch, ',')) {
      int sm = 0;
      if (a.trim().consume_front("sm_") && !a.trim().getAsInteger(10, sm) &&
          (arch == 0 || sm < arch))
        arch = sm;
    }
    fo.cuda_arch = arch == 0 ? 80 : std::min(arch, 90);
  }
  return fo;
}

// `text` for a message: bytes that are not UTF-8 as \xNN escapes.
std::string Printable(std::string_view text) {
  std::string out;
  while (!text.empty()) {
    size_t bad = 0;
    if (llvm::json::isUTF8(llvm::StringRef(text.data(), text.size()), &bad)) {
      out += text;
      break;
    }
    out += text.substr(0, bad);
    out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[bad]));
    text.remove_prefix(bad + 1);
  }
  return out;
}

// The generated Python and JSON (the manifest, `inspect`) hold UTF-8 text
// only, and they hold the sources' names and the annotations: a name or
// text of other bytes is the user's to fix, and is reported before any work.
Status RequireUtf8(const std::vector<std::string>& sources) {
  for (const std::string& s : sources)
    if (!llvm::json::isUTF8(s))
      return Error::User(fmt::format(
          "the file name '{}' is not valid UTF-8: kernelc writes source names "
          "into the package's Python and JSON files, so rename the file",
          Printable(s)));
  return Status();
}

Status RequireUtf8(const model::Module& m) {
  Status s = RequireUtf8(m.sources);
  if (!s.ok()) return s;
  // Every other string of the model: names, annotation text, the files of
  // source locations (a kernel annotated in a header, say).
  std::vector<const nlohmann::json*> todo;
  nlohmann::json j = model::ToJson(m);
  todo.push_back(&j);
  while (!todo.empty()) {
    const nlohmann::json* v = todo.back();
    todo.pop_back();
    if (v->is_string() && !llvm::json::isUTF8(v->get_ref<const std::string&>()))
      return Error::User(fmt::format(
          "'{}' in the kernels' sources is not valid UTF-8: kernelc writes it "
          "into the package's Python and JSON files",
          Printable(v->get_ref<const std::string&>())));
    if (v->is_object())
      for (auto it = v->begin(); it != v->end(); ++it) {
        if (!llvm::json::isUTF8(it.key()))
          return Error::User(
              fmt::format("'{}' in the kernels' sources is not valid UTF-8",
                          Printable(it.key())));
        todo.push_back(&it.value());
      }
    if (v->is_array())
      for (const nlohmann::json& e : *v) todo.push_back(&e);
  }
  return Status();
}

// LoadModule without its checks of the text.
Result<model::Module> ReadModule(const Options& o,
                                 const std::vector<std::string>& targets,
                                 std::vector<std::string>* dependencies) {
  std::vector<std::string> json_specs, cpp_sources;
  for (const std::string& s : o.sources)
    (EndsWith(s, ".json") ? json_specs : cpp_sources).push_back(s);
  if (!json_specs.empty() && !cpp_sources.empty())
    return Error::User(
        "give either annotated sources or JSON specs, not both: a spec names "
        "its kernels' sources itself");
  if (cpp_sources.empty()) {
    model::Module m;
    diag::DiagnosticSink diags;
    for (const std::string& spec : json_specs) {
      std::optional<std::string> text = ReadFile(spec);
      if (!text) return Error::User(fmt::format("cannot read '{}'", spec));
      Result<model::Module> part = model::FromJson(*text, spec, diags);
      if (!part.ok()) continue;
      for (model::Kernel& k : part.value().kernels)
        m.kernels.push_back(std::move(k));
    }
    PrintDiagnostics(diags);
    if (diags.has_errors()) return Error::User("");
    // The sources are those the kernels name, in first-use order.
    std::set<std::string> seen;
    for (const model::Kernel& k : m.kernels)
      if (seen.insert(k.source).second) m.sources.push_back(k.source);
    for (const std::string& s : m.sources)
      if (!llvm::sys::fs::exists(s))
        return Error::User(
            fmt::format("kernel source '{}' named by the spec "
                        "does not exist",
                        s));
    return m;
  }
  for (const std::string& s : cpp_sources)
    if (!llvm::sys::fs::exists(s))
      return Error::User(fmt::format("no such file: '{}'", s));
  frontend::Options fo = FrontendOptions(o, targets);
  fo.dependencies = dependencies;
  std::string diagnostics;
  Result<model::Module> m =
      frontend::ParseSources(cpp_sources, fo, &diagnostics);
  fmt::print(stderr, "{}", diagnostics);
  if (!m.ok() && m.error().kind == ErrorKind::kUser) return Error::User("");
  return m;
}

// Reads the model from C++ sources (annotations) or JSON specs. For C++
// sources, `dependencies` (when set) receives the files Clang read.
Result<model::Module> LoadModule(const Options& o,
                                 const std::vector<std::string>& targets,
                                 std::vector<std::string>* dependencies) {
  if (Status s = RequireUtf8(o.sources); !s.ok()) return s.error();
  Result<model::Module> m = ReadModule(o, targets, dependencies);
  if (m.ok())
    if (Status s = RequireUtf8(m.value()); !s.ok()) return s.error();
  return m;
}

// Loads and analyzes; prints diagnostics. The plan points into *module.
// `targets`: what will be built, which decides how sources are read and
// whether kernels must run on the CPU (inspect reads them the same way, and
// describes kernels that cannot).
Result<sema::ModulePlan> Analyze(
    const Options& o, const std::vector<std::string>& targets,
    model::Module* module, std::vector<std::string>* dependencies = nullptr,
    bool describe_only = false) {
  Result<model::Module> m = LoadModule(o, targets, dependencies);
  if (!m.ok()) return m.error();
  *module = std::move(m).value();
  diag::DiagnosticSink diags;
  Result<sema::ModulePlan> plan = sema::Analyze(*module, diags);
  bool cpu = std::find(targets.begin(), targets.end(), "cpu") != targets.end();
  if (plan.ok() && cpu && !describe_only)
    backends::CheckCpuKernels(*module, diags);
  PrintDiagnostics(diags);
  if (diags.has_errors()) return Error::User("");
  if (module->kernels.empty())
    return Error::User(fmt::format(
        "no kernels found in {}: mark __global__ kernels with KC_GRID and host "
        "kernels with KC_KERNEL",
        fmt::join(o.sources, ", ")));
  return plan;
}

std::string Absolute(const std::string& path) {
  llvm::SmallString<256> abs(path);
  llvm::sys::fs::make_absolute(abs);
  llvm::sys::path::remove_dots(abs, /*remove_dot_dot=*/true);
  return std::string(abs);
}

// How the output (banners, docstrings, the manifest, the content hash that
// names the library) names the files of a model: relative to the deepest
// directory that holds them all. Output so depends on how the sources lie
// relative to one another, and not on where the checkout is or which
// directory kernelc runs in: the same sources built in two places give the
// same bytes (the house style keeps absolute paths out of output), and so
// do `kernelc build examples/saxpy.cu` and, in examples/, `kernelc build
// saxpy.cu`, which naming relative to the working directory would not.
// Diagnostics keep the paths as given.
class OutputNames {
 public:
  explicit OutputNames(model::Module& m) {
    bool first = true;
    model::ForEachPath(m, [&](std::string& p) {
      if (p.empty()) return;
      std::string abs = Absolute(p);
      llvm::StringRef dir = llvm::sys::path::parent_path(abs);
      if (first) {
        base_ = dir.str();
        first = false;
      }
      while (!Under(dir, base_))
        base_ = llvm::sys::path::parent_path(base_).str();
    });
  }

  // `path` relative to the common directory; `path` itself when it lies
  // elsewhere (an include directory) or is empty.
  std::string Name(const std::string& path) const {
    if (path.empty()) return path;
    std::string abs = Absolute(path);
    if (base_.empty() || !Under(abs, base_) || abs == base_) return path;
    return abs.substr(base_ == "/" ? 1 : base_.size() + 1);
  }

 private:
  static bool Under(llvm::StringRef path, llvm::StringRef dir) {
    return path == dir || dir == "/" ||
           (path.starts_with(dir) && path.size() > dir.size() &&
            path[dir.size()] == '/');
  }

  std::string base_;
};

// A digest of every file compiled into kernelc: the templates, the Python
// runtime, kernelc's headers and the XLA FFI headers all shape a package,
// and a kernelc rebuilt with other ones keeps its version string. Computed
// once per process (some 300 KB of SHA-256, about a millisecond), for the
// content hash; only a build that misses the cache computes it.
const std::string& EmbeddedFilesDigest() {
  static const std::string digest = [] {
    cache::KeyBuilder key;
    const std::pair<const char*, const std::vector<EmbeddedFile>*> sets[] = {
        {"templates", &embedded::Templates()},
        {"python-runtime", &embedded::PythonRuntime()},
        {"headers", &embedded::UserHeaders()},
        {"xla-ffi", &embedded::XlaFfiHeaders()}};
    for (const auto& [set, files] : sets) {
      key.Add("set", set);
      for (const EmbeddedFile& f : *files) {
        key.Add("path", f.path);
        key.Add("contents", f.contents);
      }
    }
    return key.Finish();
  }();
  return digest;
}

// `source_paths`: where each of m.sources is read.
std::string ContentHash(const Options& o, const model::Module& m,
                        const emit::BuildInfo& info,
                        const std::vector<std::string>& source_paths,
                        const OutputNames& names) {
  const std::vector<std::string>& targets = info.targets;
  llvm::SHA256 h;
  auto add = [&h](std::string_view field, std::string_view value) {
    h.update(fmt::format("{}:{}:", field, value.size()));
    h.update(llvm::StringRef(value.data(), value.size()));
  };
  add("kernelc", kVersion);
  add("kernelc-embedded-files", EmbeddedFilesDigest());
  add("clang", CLANG_VERSION_STRING);
  add("jaxlib-headers", kJaxlibFloor);
  add("package", o.name);
  for (const std::string& t : targets) add("target", t);
  for (const std::string& d : o.defines) add("define", d);
  for (const std::string& i : o.include_dirs) add("include", names.Name(i));
  add("model", model::ToCanonicalJson(m));
  for (size_t i = 0; i < m.sources.size(); ++i)
    add(m.sources[i], ReadFile(source_paths[i]).value_or(""));
  // The CUDA binaries stand for NVRTC's version, flags and included headers.
  if (info.cuda_version != 0)
    add("cuda", "nvrtc " + emit::CudaVersionText(info.cuda_version));
  for (const emit::CudaBinary& b : info.cuda_binaries) {
    for (const emit::CudaImage& im : b.images) add(b.source, im.sha256);
    for (const emit::CudaImage& im : b.fold_images) add("fold", im.sha256);
  }
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

Result<std::vector<std::string>> ParseTargets(const Options& o) {
  std::vector<std::string> targets;
  for (llvm::StringRef t : llvm::split(o.target, ',')) {
    std::string s = t.trim().str();
    if (s != "cpu" && s != "cuda")
      return Error::User(
          fmt::format("unknown target '{}' (expected cpu or cuda)", s));
    if (std::find(targets.begin(), targets.end(), s) == targets.end())
      targets.push_back(s);
  }
  std::sort(targets.begin(), targets.end());  // "cpu" before "cuda"
  bool cuda =
      std::find(targets.begin(), targets.end(), "cuda") != targets.end();
  if (!o.cuda_arch.empty() && !cuda)
    return Error::User("--cuda-arch needs the cuda target");
  if (o.fast_math && !cuda)
    return Error::User("--use-fast-math needs the cuda target");
  return targets;
}

// The default architectures of the cuda target.
constexpr const char* kDefaultCudaArchs = "sm_80,sm_90";

// Compiles the kernels for CUDA with NVRTC; fills info's cuda fields and,
// when set, `nvrtc_library` with the library that compiled them.
Status CompileCudaTarget(const Options& o, const model::Module& m,
                         emit::BuildInfo* info, std::string* nvrtc_library) {
  // A host kernel has no GPU form.
  bool cpu = emit::HasTarget(*info, "cpu");
  diag::DiagnosticSink diags;
  for (const model::Kernel& k : m.kernels)
    if (k.kind == model::KernelKind::kHost && !cpu)
      diags.Error(k.loc, fmt::format("host kernel '{}' (KC_KERNEL) runs only "
                                     "on the CPU: build with --target "
                                     "cpu,cuda",
                                     k.name));
  if (diags.has_errors()) {
    PrintDiagnostics(diags);
    return Error::User("");
  }
  Result<backends::Nvrtc> nvrtc = backends::FindNvrtc();
  if (!nvrtc.ok()) return nvrtc.error();
  Result<std::vector<int>> archs = backends::ParseCudaArchs(
      o.cuda_arch.empty() ? kDefaultCudaArchs : o.cuda_arch, nvrtc.value());
  if (!archs.ok()) return archs.error();
  backends::CudaBuild cb;
  cb.archs = archs.value();
  cb.fast_math = o.fast_math;
  for (const std::string& d : o.include_dirs) {
    llvm::SmallString<256> abs(d);
    llvm::sys::fs::make_absolute(abs);
    cb.include_dirs.push_back(std::string(abs));
  }
  cb.defines = o.defines;
  Result<std::vector<emit::CudaBinary>> bins =
      backends::CompileCuda(nvrtc.value(), m, cb, diags);
  PrintDiagnostics(diags);
  if (!bins.ok()) return bins.error();
  info->cuda_archs = cb.archs;
  info->cuda_fast_math = cb.fast_math;
  info->cuda_binaries = std::move(bins).value();
  info->cuda_version = nvrtc.value().cuda_version();
  if (nvrtc_library) *nvrtc_library = nvrtc.value().library();
  return Status();
}

// The targets to build; fills in the default package name.
Result<std::vector<std::string>> ResolveOptions(Options& o) {
  Result<std::vector<std::string>> targets = ParseTargets(o);
  if (!targets.ok()) return targets.error();
  if (o.name.empty()) {
    std::string stem = llvm::sys::path::stem(o.sources[0]).str();
    o.name = stem.substr(0, stem.find('.'));
  }
  if (!emit::Namer::IsValidPackageName(o.name))
    return Error::User(fmt::format(
        "'{}' is not a valid Python package name: use --name", o.name));
  return targets;
}

// What Generate learns on the way, for the build steps after it.
struct GenerateRecord {
  std::string nvrtc_library;  // as for CompileCudaTarget
  // Where each of the module's sources is read: the module names them for
  // the output (OutputNames) once Generate returns.
  std::vector<std::string> source_paths;
};

// `dependencies`: as for LoadModule.
Result<emit::Output> Generate(Options& o, model::Module* module,
                              emit::BuildInfo* info,
                              std::vector<std::string>* dependencies = nullptr,
                              GenerateRecord* record = nullptr) {
  Result<std::vector<std::string>> targets = ResolveOptions(o);
  if (!targets.ok()) return targets.error();
  Result<sema::ModulePlan> plan =
      Analyze(o, targets.value(), module, dependencies);
  if (!plan.ok()) return plan.error();
  info->version = kVersion;
  info->package = o.name;
  info->ffi_api = kFfiApi;
  info->jaxlib_floor = kJaxlibFloor;
  info->targets = targets.value();
  if (emit::HasTarget(*info, "cuda")) {
    Status s = CompileCudaTarget(o, *module, info,
                                 record ? &record->nvrtc_library : nullptr);
    if (!s.ok()) return s.error();
  }
  // Everything that reads the sources or reports at their paths is done:
  // from here on the model names its files as the output does.
  std::vector<std::string> source_paths = module->sources;
  OutputNames names(*module);
  model::ForEachPath(*module, [&names](std::string& p) { p = names.Name(p); });
  for (emit::CudaBinary& b : info->cuda_binaries)
    b.source = names.Name(b.source);
  info->content_hash = ContentHash(o, *module, *info, source_paths, names);
  if (record) record->source_paths = std::move(source_paths);
  return emit::EmitPackage(plan.value(), *info);
}

// `kernelc inspect PKGDIR`: the manifest of a built package (its targets,
// CUDA architectures and each binary's SHA-256, the model), as built.
int InspectPackage(const std::string& dir) {
  std::string path = dir + "/kernelc.json";
  std::optional<std::string> text = ReadFile(path);
  if (!text)
    return Report(Error::User(fmt::format(
        "'{}' is a directory but not a package built by kernelc (no "
        "kernelc.json)",
        dir)));
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("targets"))
    return Report(
        Error::User(fmt::format("'{}' is not a kernelc manifest", path)));
  fmt::print("{}\n", j.dump(2));
  return kOk;
}

int CmdInspect(Options& o) {
  if (o.sources.size() == 1 && llvm::sys::fs::is_directory(o.sources[0]))
    return InspectPackage(o.sources[0]);
  Result<std::vector<std::string>> targets = ParseTargets(o);
  if (!targets.ok()) return Report(targets.error());
  model::Module m;
  Result<sema::ModulePlan> plan = Analyze(o, targets.value(), &m,
                                          /*dependencies=*/nullptr,
                                          /*describe_only=*/true);
  if (!plan.ok()) return Report(plan.error());
  fmt::print("{}", model::ToCanonicalJson(m));
  return kOk;
}

int CmdEmit(Options& o) {
  model::Module m;
  emit::BuildInfo info;
  Result<emit::Output> out = Generate(o, &m, &info);
  if (!out.ok()) return Report(out.error());
  Status s = WriteFilesIfChanged(o.out_dir + "/package", out.value().package);
  if (s.ok()) s = WriteFilesIfChanged(o.out_dir + "/build", out.value().build);
  return s.ok() ? kOk : Report(s.error());
}

// The build cache's direct key: everything known before any compiler work
// (the headers the sources include are checked per entry). Empty when
// something cannot be read: then the build goes without the cache, and
// reports the problem itself.
// `nvrtc`: for the cuda target, the NVRTC that the key names.
std::string BuildCacheKey(const Options& o,
                          const std::vector<std::string>& targets,
                          std::optional<backends::NvrtcLocation>* nvrtc) {
  cache::KeyBuilder key;
  key.Add("cache-format", "1");
  key.Add("kernelc", kVersion);
  // kernelc by identity, like the host compiler below: a kernelc rebuilt
  // with other emitters, templates or headers keeps its version string.
  // (The content hash, which must not depend on the machine, holds the
  // digest of the embedded files instead.)
  if (!key.AddFileIdentity("kernelc-executable", "/proc/self/exe")) return "";
  key.Add("jaxlib-headers", kJaxlibFloor);
  key.Add("ffi-api", kFfiApi);
  // The host compiler by identity, without running it: its real path,
  // size and modification time (as ccache does).
  std::string cxx = backends::FindHostCxx();
  if (cxx.empty() || !key.AddFileIdentity("cxx", cxx)) return "";
  key.Add("package", o.name);
  for (const std::string& t : targets) key.Add("target", t);
  key.Add("cuda-arch", o.cuda_arch);
  key.Add("fast-math", o.fast_math ? "1" : "0");
  if (std::find(targets.begin(), targets.end(), "cuda") != targets.end()) {
    // NVRTC by identity too, without loading it (loading its 100 MB library
    // would cost a warm build more than all the rest): the library that
    // FindNvrtc tries first, and its toolkit's include directory. The
    // toolkit headers the kernels include are checked per entry.
    *nvrtc = backends::LocateNvrtc();
    if (!*nvrtc || !key.AddFileIdentity("nvrtc", (*nvrtc)->library)) return "";
    key.Add("cuda-include", (*nvrtc)->cuda_include);
  }
  for (const std::string& d : o.defines) key.Add("define", d);
  for (const std::string& i : o.include_dirs) {
    key.Add("include", i);
    key.Add("include-abs", Absolute(i));
  }
  // Where relative paths point: quoted includes resolve beside each
  // source, and a JSON spec names its kernels' sources relative to the
  // working directory; the entries' recorded headers are absolute paths.
  llvm::SmallString<256> cwd;
  if (llvm::sys::fs::current_path(cwd)) return "";
  key.Add("cwd", std::string(cwd));
  for (const std::string& s : o.sources) {
    key.Add("source-abs", Absolute(s));
    if (!key.AddFile("source", s)) return "";
  }
  return key.Finish();
}

// Writes the package's files into OUTDIR/PKG and removes the library of an
// earlier build there under another content hash. The files are written as
// one change (WriteFilesIfChanged), file by file rather than as a new
// directory renamed over the old one: unchanged files keep their
// modification times, and files that are not kernelc's stay. A failure
// leaves the earlier package as it was.
Status InstallPackage(const Options& o, const emit::FileMap& files,
                      const std::string& library_file) {
  std::string pkg_dir = o.out_dir + "/" + o.name;
  std::optional<std::string> old_manifest = ReadFile(pkg_dir + "/kernelc.json");
  Status s = WriteFilesIfChanged(pkg_dir, files);
  if (s.ok() && old_manifest) {
    nlohmann::json j = nlohmann::json::parse(*old_manifest, nullptr, false);
    if (j.is_object() && j.contains("library") && j["library"].is_string()) {
      std::string old_lib = j["library"].get<std::string>();
      if (old_lib != library_file && cache::IsPackagePath(old_lib) &&
          old_lib.find('/') == std::string::npos)
        llvm::sys::fs::remove(pkg_dir + "/" + old_lib);
    }
  }
  return s;
}

// The library file a package's manifest names; empty when the manifest
// names none, or a file that is not directly inside the package.
std::string LibraryOf(const emit::FileMap& files) {
  auto it = files.find("kernelc.json");
  if (it == files.end()) return "";
  nlohmann::json j = nlohmann::json::parse(it->second, nullptr, false);
  if (!j.is_object() || !j.contains("library") || !j["library"].is_string())
    return "";
  std::string library = j["library"].get<std::string>();
  if (!cache::IsPackagePath(library) || library.find('/') != std::string::npos)
    return "";
  return library;
}

// A directory that is removed, with everything in it, when this goes out of
// scope: on every return, and when an exception passes on its way to
// main's last-resort handler.
class ScratchDirectory {
 public:
  ScratchDirectory() = default;
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory() {
    if (!path_.empty()) llvm::sys::fs::remove_directories(path_);
  }

  // Creates a new directory: `prefix`, a dash and random characters (each
  // '%' in `prefix` random too); a relative prefix is in the system's
  // temporary directory.
  std::error_code Create(const llvm::Twine& prefix) {
    llvm::SmallString<256> path;
    std::error_code ec = llvm::sys::fs::createUniqueDirectory(prefix, path);
    if (!ec) path_ = std::string(path);
    return ec;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The CUDA toolkit's headers that NVRTC may have read for the kernels (under
// `cuda_include`). NVRTC reports no dependencies, so they are found by
// following every #include from the sources through NVRTC's include path,
// conditionals ignored: more headers than NVRTC read, each checked by a
// stat on lookup. Reading them all on every lookup instead would cost a
// warm build more than it saves, and a stat of every header in the toolkit
// (thousands, with CCCL) more still.
std::vector<std::string> CudaToolkitHeaders(
    const Options& o, const std::vector<std::string>& source_paths,
    const std::string& cuda_include) {
  if (cuda_include.empty()) return {};
  std::vector<std::string> sources, search_path;
  for (const std::string& s : source_paths) {
    sources.push_back(Absolute(s));
    search_path.push_back(
        std::string(llvm::sys::path::parent_path(sources.back())));
  }
  for (const std::string& d : o.include_dirs)
    search_path.push_back(Absolute(d));
  for (const std::string& d : backends::ToolkitIncludeDirs(cuda_include))
    search_path.push_back(d);
  std::vector<std::string> headers;
  for (std::string& f : cache::IncludeClosure(sources, search_path))
    if (llvm::StringRef(f).starts_with(cuda_include + "/"))
      headers.push_back(std::move(f));
  return headers;
}

int CmdBuild(Options& o) {
  std::optional<cache::BuildCache> build_cache;
  std::string cache_key;
  // The cuda target: the NVRTC the key names.
  std::optional<backends::NvrtcLocation> keyed_nvrtc;
  if (!o.no_cache) {
    Result<std::vector<std::string>> targets = ResolveOptions(o);
    if (!targets.ok()) return Report(targets.error());
    std::string dir =
        o.cache_dir.empty() ? cache::DefaultDirectory() : o.cache_dir;
    if (!dir.empty())
      cache_key = BuildCacheKey(o, targets.value(), &keyed_nvrtc);
    if (!cache_key.empty()) {
      build_cache.emplace(dir);
      if (std::optional<cache::Files> hit = build_cache->Lookup(cache_key)) {
        std::string library = LibraryOf(*hit);
        if (!library.empty() && hit->count(library)) {
          if (std::error_code ec = llvm::sys::fs::create_directories(o.out_dir))
            return Report(Error::User(fmt::format("cannot create '{}': {}",
                                                  o.out_dir, ec.message())));
          Status s = InstallPackage(o, *hit, library);
          return s.ok() ? kOk : Report(s.error());
        }
      }
    }
  }

  model::Module m;
  emit::BuildInfo info;
  // The files Clang's frontend read: the sources and their headers, which
  // NVRTC compiles too.
  std::vector<std::string> frontend_dependencies;
  GenerateRecord record;
  Result<emit::Output> out = Generate(
      o, &m, &info, build_cache ? &frontend_dependencies : nullptr, &record);
  const std::string& nvrtc_library = record.nvrtc_library;
  if (!out.ok()) return Report(out.error());
  Result<backends::HostToolchain> tc = backends::FindHostToolchain();
  if (!tc.ok()) return Report(tc.error());

  if (std::error_code ec = llvm::sys::fs::create_directories(o.out_dir))
    return Report(Error::User(
        fmt::format("cannot create '{}': {}", o.out_dir, ec.message())));
  // Everything is built in a scratch directory; the package directory is
  // touched only once the library exists.
  ScratchDirectory scratch;
  llvm::SmallString<256> model_path(o.out_dir);
  llvm::sys::fs::make_absolute(model_path);
  llvm::sys::path::append(model_path,
                          fmt::format(".{}.kernelc-%%%%%%", o.name));
  if (std::error_code ec = scratch.Create(model_path))
    return Report(
        Error::User(fmt::format("cannot create a scratch directory in "
                                "'{}': {}",
                                o.out_dir, ec.message())));
  emit::Namer namer(info.package, info.content_hash);
  const std::string& work = scratch.path();
  std::string library = work + "/" + namer.LibraryFile();
  backends::HostBuild hb;
  hb.work_dir = work;
  hb.library_path = library;
  for (const std::string& d : o.include_dirs) {
    llvm::SmallString<256> abs(d);
    llvm::sys::fs::make_absolute(abs);
    hb.include_dirs.push_back(std::string(abs));
  }
  hb.defines = o.defines;
  hb.source_paths = record.source_paths;
  std::vector<std::string> dependencies;
  if (build_cache) hb.dependencies = &dependencies;
  Status s = backends::BuildHostLibrary(tc.value(), m, out.value(), hb);
  if (s.ok()) {
    emit::FileMap files = out.value().package;
    std::optional<std::string> lib_bytes = ReadFile(library);
    if (!lib_bytes) {
      s = Error::Internal(fmt::format("the linker wrote no '{}'", library));
    } else {
      files[namer.LibraryFile()] = *lib_bytes;
      s = InstallPackage(o, files, namer.LibraryFile());
    }
    // A JSON spec's sources are not read by the frontend; the CPU build's
    // dependency output names their headers, and without it (cuda only)
    // they are unknown: such a build is not cached.
    bool dependencies_known =
        !frontend_dependencies.empty() || emit::HasTarget(info, "cpu");
    // The key names the first NVRTC library found; when that one could not
    // be loaded and another compiled the kernels, the key does not
    // identify the compiler, and the build is not cached.
    bool nvrtc_keyed = nvrtc_library.empty() ||
                       (keyed_nvrtc && nvrtc_library == keyed_nvrtc->library);
    if (s.ok() && build_cache && dependencies_known && nvrtc_keyed) {
      for (const std::string& d : frontend_dependencies)
        dependencies.push_back(Absolute(d));
      // The sources a JSON spec names are read too.
      for (const std::string& src : record.source_paths)
        dependencies.push_back(Absolute(src));
      // The key holds the sources on the command line already; a lookup
      // need not read and hash them a second time.
      for (const std::string& src : o.sources)
        dependencies.erase(std::remove(dependencies.begin(), dependencies.end(),
                                       Absolute(src)),
                           dependencies.end());
      std::sort(dependencies.begin(), dependencies.end());
      dependencies.erase(std::unique(dependencies.begin(), dependencies.end()),
                         dependencies.end());
      std::vector<std::string> toolkit_headers;
      if (!nvrtc_library.empty())
        toolkit_headers = CudaToolkitHeaders(o, record.source_paths,
                                             keyed_nvrtc->cuda_include);
      Status c =
          build_cache->Store(cache_key, dependencies, files, toolkit_headers);
      // A cache that cannot be written costs speed, not correctness.
      if (!c.ok())
        fmt::print(stderr, "kernelc: warning: {} (build not cached)\n",
                   c.error().message);
    }
  }
  return s.ok() ? kOk : Report(s.error());
}

// The wheel's timestamp: $SOURCE_DATE_EPOCH when set (reproducible-builds
// convention), else zip's earliest date; never the clock.
Result<int64_t> WheelTimestamp() {
  const char* env = std::getenv("SOURCE_DATE_EPOCH");
  if (!env || !*env) return int64_t{0};
  long long v = 0;
  if (llvm::StringRef(env).getAsInteger(10, v) || v < 0)
    return Error::User(
        fmt::format("SOURCE_DATE_EPOCH='{}' is not a number of seconds", env));
  return static_cast<int64_t>(v);
}

int CmdWheel(Options& o) {
  Result<int64_t> mtime = WheelTimestamp();
  if (!mtime.ok()) return Report(mtime.error());
  std::string pkg_dir;
  ScratchDirectory scratch;
  if (o.sources.size() == 1 && llvm::sys::fs::is_directory(o.sources[0])) {
    pkg_dir = o.sources[0];
  } else {
    // Sources: build the package first (through the build cache), in a
    // scratch directory that goes away afterwards.
    if (std::error_code ec = scratch.Create("kernelc-wheel"))
      return Report(Error::Internal(
          fmt::format("cannot create a scratch directory: {}", ec.message())));
    Options b = o;
    b.out_dir = scratch.path();
    int rc = CmdBuild(b);
    if (rc != kOk) return rc;
    pkg_dir = b.out_dir + "/" + b.name;
  }
  Result<wheel::Files> files = wheel::ReadPackage(pkg_dir);
  Result<std::string> path = Error::Internal("");
  if (files.ok()) {
    wheel::Options wo;
    wo.version = o.wheel_version;
    wo.platform = o.platform.empty() ? wheel::HostPlatformTag() : o.platform;
    wo.generator = fmt::format("kernelc {}", kVersion);
    wo.mtime = mtime.value();
    Result<wheel::Wheel> w = wheel::MakeWheel(files.value(), wo);
    path = w.ok() ? wheel::WriteWheel(w.value(), o.out_dir, wo.mtime)
                  : Result<std::string>(w.error());
  } else {
    path = files.error();
  }
  if (!path.ok()) return Report(path.error());
  fmt::print("{}\n", path.value());
  return kOk;
}

// `kernelc --version`: kernelc's version, then the NVRTC that the cuda
// target would use (see FindNvrtc for the search) or why there is none.
std::string VersionText() {
  std::string text = fmt::format("kernelc {}", kVersion);
  Result<backends::Nvrtc> nvrtc = backends::FindNvrtc();
  if (nvrtc.ok())
    return text + fmt::format("\nNVRTC {} ({})", nvrtc.value().version(),
                              nvrtc.value().library());
  return text + "\n" + nvrtc.error().message;
}

void AddCommonOptions(CLI::App* cmd, Options& o) {
  cmd->add_option("SRC", o.sources,
                  "annotated .cu/.cc sources, or JSON specs (kernelc inspect)")
      ->required();
  cmd->add_option("-I", o.include_dirs, "add a directory to the include path");
  cmd->add_option("-D", o.defines, "define a macro: NAME or NAME=VALUE");
}

int Main(int argc, char** argv) {
  CLI::App app{"kernelc: compiles annotated CUDA/C++ kernels into JAX ops",
               "kernelc"};
  app.set_version_flag("--version", VersionText,
                       "print kernelc's version and the NVRTC it uses");
  app.require_subcommand(1);
  Options o;

  CLI::App* build = app.add_subcommand(
      "build", "compile kernels into an importable Python package OUTDIR/PKG");
  AddCommonOptions(build, o);
  build->add_option("-o", o.out_dir, "output directory")->required();
  build->add_option("--name", o.name,
                    "package name (default: the first source's stem)");
  build->add_option("--target", o.target, "cpu (default), cuda or cpu,cuda");
  build->add_option("--cuda-arch", o.cuda_arch,
                    "sm_80,sm_90,... (cuda target; default sm_80,sm_90): a "
                    "cubin for each, and PTX for the newest");
  build->add_flag("--use-fast-math", o.fast_math,
                  "compile CUDA kernels with NVRTC's --use_fast_math");
  build->add_flag("--no-cache", o.no_cache,
                  "neither read nor write the build cache");
  build->add_option("--cache-dir", o.cache_dir,
                    "build cache directory (default: $KERNELC_CACHE_DIR, "
                    "$XDG_CACHE_HOME/kernelc or ~/.cache/kernelc)");

  CLI::App* wheel = app.add_subcommand(
      "wheel",
      "package a built package directory (or sources, built first) as a "
      "wheel in DIST");
  AddCommonOptions(wheel, o);
  wheel->add_option("-o", o.out_dir, "DIST: where the wheel goes")->required();
  wheel->add_option("--version", o.wheel_version,
                    "the wheel's version (PEP 440; default 0.0.0)");
  wheel->add_option("--platform", o.platform,
                    "platform tag (default: this machine's, linux_<arch>)");
  wheel->add_option("--name", o.name, "package name, when building sources");
  wheel->add_option("--target", o.target, "when building sources");
  wheel->add_option("--cuda-arch", o.cuda_arch, "when building sources");
  wheel->add_flag("--use-fast-math", o.fast_math, "when building sources");
  wheel->add_flag("--no-cache", o.no_cache, "when building sources");
  wheel->add_option("--cache-dir", o.cache_dir, "when building sources");

  CLI::App* inspect = app.add_subcommand(
      "inspect",
      "print the kernel model as canonical JSON; for a built package "
      "directory, its manifest (targets, CUDA architectures, binary hashes)");
  AddCommonOptions(inspect, o);
  inspect->add_option("--target", o.target,
                      "read the sources as a build for these targets does: "
                      "cpu (default), cuda (as CUDA device code) or cpu,cuda");
  inspect->add_option("--cuda-arch", o.cuda_arch,
                      "the architecture CUDA device code is read for");

  CLI::App* emit = app.add_subcommand(
      "emit",
      "write the generated sources (package/ and build/) to DIR "
      "without compiling them");
  AddCommonOptions(emit, o);
  emit->add_option("-o", o.out_dir, "output directory")->required();
  emit->add_option("--name", o.name, "package name");
  emit->add_option("--target", o.target, "cpu (default), cuda or cpu,cuda");
  emit->add_option("--cuda-arch", o.cuda_arch, "sm_80,sm_90,... (cuda target)");
  emit->add_flag("--use-fast-math", o.fast_math,
                 "compile CUDA kernels with NVRTC's --use_fast_math");

  // CLI11 would only say that a subcommand is required.
  if (argc > 1 && argv[1][0] != '-' && std::string_view(argv[1]) != "build" &&
      std::string_view(argv[1]) != "inspect" &&
      std::string_view(argv[1]) != "emit" &&
      std::string_view(argv[1]) != "wheel") {
    fmt::print(stderr,
               "kernelc: error: unknown command '{}' (expected build, wheel, "
               "inspect or emit; see --help)\n",
               argv[1]);
    return kUserError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kUserError;
  }
  if (build->parsed()) return CmdBuild(o);
  if (inspect->parsed()) return CmdInspect(o);
  if (wheel->parsed()) return CmdWheel(o);
  return CmdEmit(o);
}

}  // namespace
}  // namespace kernelc

int main(int argc, char** argv) {
  // Errors are results, not exceptions; this is the last resort for one
  // that a library throws all the same (allocation failure, a JSON writer
  // refusing its input). The scratch directories are gone by the time it
  // arrives here: unwinding ran their destructors.
  try {
    return kernelc::Main(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "kernelc: internal error: {}\n", e.what());
  } catch (...) {
    fmt::print(stderr, "kernelc: internal error: an unknown exception\n");
  }
  return kernelc::kInternalError;
}
