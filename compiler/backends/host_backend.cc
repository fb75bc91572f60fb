#include "compiler/backends/host_backend.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string_view>

#include "compiler/cache/build_cache.h"
#include "compiler/util/file_io.h"
#include "runtime/embedded_headers.h"
#include "runtime/embedded_xla_ffi.h"

namespace kernelc::backends {

namespace {

struct RunResult {
  int code = -1;
  std::string output;  // stdout and stderr
  std::string error;   // why it could not run
};

// Whether #include "path" names `path`: the directive takes the characters
// between the quotes as they are.
bool Spellable(std::string_view path) {
  for (char c : path)
    if (c == '"' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return false;
  return path.empty() || path.back() != '\\';
}

RunResult Run(const std::string& program, const std::vector<std::string>& args,
              const std::string& log_path) {
  std::vector<llvm::StringRef> argv = {program};
  for (const std::string& a : args) argv.push_back(a);
  std::optional<llvm::StringRef> redirects[3] = {llvm::StringRef(""),
                                                 llvm::StringRef(log_path),
                                                 llvm::StringRef(log_path)};
  RunResult r;
  bool failed = false;
  r.code = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects, 0,
                                     0, &r.error, &failed);
  if (failed) r.code = -1;
  r.output = ReadFile(log_path).value_or("");
  return r;
}

}  // namespace

std::string FindHostCxx() {
  if (const char* env = std::getenv("KERNELC_CXX"); env && *env) return env;
  for (const char* c : {KERNELC_LLVM_PREFIX "/bin/clang++", "clang++-19"}) {
    if (llvm::sys::fs::can_execute(c)) return c;
    if (auto p = llvm::sys::findProgramByName(c)) return *p;
  }
  return "";
}

Result<HostToolchain> FindHostToolchain() {
  HostToolchain tc;
  tc.cxx = FindHostCxx();
  if (tc.cxx.empty())
    return Error::Internal(
        "no C++ compiler for the CPU target: install clang-19 or set "
        "KERNELC_CXX");
  llvm::SmallString<128> log;
  llvm::sys::fs::createTemporaryFile("kernelc-cxx-version", "txt", log);
  RunResult r = Run(tc.cxx, {"--version"}, std::string(log));
  llvm::sys::fs::remove(log);
  if (r.code != 0)
    return Error::Internal(fmt::format("cannot run {}: {}", tc.cxx,
                                       r.error.empty() ? r.output : r.error));
  tc.version = r.output.substr(0, r.output.find('\n'));
  return tc;
}

Status BuildHostLibrary(const HostToolchain& tc, const HostBuild& build,
                        diag::DiagnosticEngine& diags) {
  const std::string& work = build.work_dir;
  std::string include = work + "/include";
  std::string host_include = work + "/host_include";
  for (const EmbeddedFile& f : embedded::UserHeaders()) {
    Status s =
        WriteFileIfChanged(fmt::format("{}/{}", work, f.path), f.contents);
    if (!s.ok()) return s;
  }
  std::string ffi_include = work + "/xla_ffi";
  for (const EmbeddedFile& f : embedded::XlaFfiHeaders()) {
    Status s = WriteFileIfChanged(fmt::format("{}/{}", ffi_include, f.path),
                                  f.contents);
    if (!s.ok()) return s;
  }
  for (const auto& [path, contents] : build.sources) {
    Status s = WriteFileIfChanged(fmt::format("{}/{}", work, path), contents);
    if (!s.ok()) return s;
  }

  // Paths in the objects are relative to the scratch directory, so the
  // library does not depend on where it was built.
  std::vector<std::string> common = {
      "-std=c++17",
      "-fPIC",
      "-fvisibility=hidden",
      "-fno-exceptions",
      fmt::format("-ffile-prefix-map={}=.", work),
      "-Wno-unused-command-line-argument"};
  std::vector<std::string> objects;
  std::set<std::string> dependencies;
  std::string log = work + "/compile.log";

  auto compile = [&](const std::string& src, std::vector<std::string> flags,
                     bool user_code) -> Status {
    std::string obj = work + "/" + src + ".o";
    std::vector<std::string> args = common;
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"-c", work + "/" + src, "-o", obj});
    RunResult r = Run(tc.cxx, args, log);
    if (!r.error.empty() && r.code < 0)
      return Error::Internal(fmt::format("cannot run {}: {}", tc.cxx, r.error));
    if (r.code != 0 && !user_code)
      return Error::Internal(
          fmt::format("compiling {} for the CPU failed:\n{}", src, r.output));
    if (r.code != 0) {
      // The compiler's own diagnostics, relayed whole.
      diags.Report<diag::Id::kHostCompileFailed>({}, src, r.output);
      return Error::Reported();
    }
    objects.push_back(obj);
    return Status();
  };

  for (const HostBuild::UserUnit& unit : build.user_units) {
    const std::string& name = unit.file;
    llvm::SmallString<256> abs(unit.source_path);
    llvm::sys::fs::make_absolute(abs);
    llvm::SmallString<256> src_dir(abs);
    llvm::sys::path::remove_filename(src_dir);
    // The unit includes the source as KC_USER_SOURCE. #include takes a
    // path as it is spelled, without escapes: one with a double quote or a
    // control character, or that ends in a backslash, cannot be written
    // there, and is included through a link of kernelc's naming beside the
    // unit (its own directory then searched for its "..." includes).
    std::string include_path = abs.str().str();
    std::vector<std::string> link_flags;
    if (!Spellable(include_path)) {
      include_path = name + ".user_source";
      llvm::SmallString<256> link(work);
      llvm::sys::path::append(link, include_path);
      llvm::sys::fs::remove(link);
      if (std::error_code ec = llvm::sys::fs::create_link(abs, link))
        return Error::Internal(fmt::format("cannot link {} to {}: {}",
                                           link.str(), abs.str(),
                                           ec.message()));
      link_flags.push_back("-iquote" + src_dir.str().str());
    }
    std::vector<std::string> flags = {
        "-O3", "-D__KERNELC_HOST__", "-x", "c++",
        fmt::format("-DKC_USER_SOURCE=\"{}\"", include_path),
        fmt::format("-ffile-prefix-map={}=.", src_dir.str().str()),
        // kernelc's headers before the user's directories (-I comes before
        // -isystem): <cuda_fp16.h> is kernelc's stand-in even when -I
        // names the CUDA toolkit's include directory.
        "-I" + include, "-I" + host_include};
    flags.insert(flags.end(), link_flags.begin(), link_flags.end());
    for (const std::string& d : build.include_dirs) flags.push_back("-I" + d);
    for (const std::string& d : build.defines) flags.push_back("-D" + d);
    // -MMD leaves out system headers, for which the compiler's identity
    // stands; kernelc's own, in the scratch directory, are left out below.
    std::string dep_file = work + "/" + name + ".d";
    if (build.dependencies)
      flags.insert(flags.end(), {"-MMD", "-MF", dep_file});
    Status s = compile(name, flags, /*user_code=*/true);
    if (!s.ok()) return s;
    if (build.dependencies) {
      std::optional<std::string> text = ReadFile(dep_file);
      if (!text)
        return Error::Internal(
            fmt::format("{} wrote no dependency file '{}'", tc.cxx, dep_file));
      for (const std::string& d : cache::ParseDepFile(*text)) {
        llvm::SmallString<256> path(d);
        llvm::sys::fs::make_absolute(work, path);
        llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
        // The generated entry points and kernelc's headers live in the
        // scratch directory.
        if (!llvm::StringRef(path).starts_with(work + "/"))
          dependencies.insert(std::string(path));
      }
    }
  }
  if (build.dependencies)
    build.dependencies->assign(dependencies.begin(), dependencies.end());
  Status s =
      compile("shim.cc", {"-O2", "-isystem", include, "-isystem", ffi_include},
              /*user_code=*/false);
  if (!s.ok()) return s;
  // The CUDA target: the embedded binaries; the shim dlopens libcuda.
  const bool cuda = build.sources.count("cuda_images.cc") > 0;
  if (cuda) {
    s = compile("cuda_images.cc", {"-O0", "-isystem", include},
                /*user_code=*/false);
    if (!s.ok()) return s;
  }

  // --no-undefined: a kernel calling a function nobody defines (say, one
  // that exists only on the GPU) fails here, not when Python loads the
  // library.
  std::vector<std::string> link = {"-shared",          "-o",
                                   build.library_path, "-Wl,--build-id=sha1",
                                   "-Wl,-O1",          "-Wl,--no-undefined"};
  link.insert(link.end(), objects.begin(), objects.end());
  if (cuda) link.push_back("-ldl");
  RunResult r = Run(tc.cxx, link, log);
  if (r.code < 0)
    return Error::Internal(fmt::format("cannot run {}: {}", tc.cxx, r.error));
  if (r.code != 0) {
    diags.Report<diag::Id::kHostLinkFailed>({}, r.output);
    return Error::Reported();
  }
  return Status();
}

}  // namespace kernelc::backends
