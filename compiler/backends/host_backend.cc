#include "compiler/backends/host_backend.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <set>
#include <string_view>

#include "compiler/cache/build_cache.h"
#include "compiler/util/file_io.h"
#include "compiler/util/parallel.h"
#include "compiler/util/quote.h"
#include "runtime/embedded_archives.h"
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

// $KERNELC_CXX as an executable: a path (absolute, or relative to the
// working directory), or a name looked up on PATH. Empty when it names
// none; nullopt when it is not set.
std::optional<std::string> EnvironmentCxx() {
  const char* env = std::getenv("KERNELC_CXX");
  if (env == nullptr || *env == '\0') return std::nullopt;
  llvm::StringRef cxx(env);
  if (cxx.contains('/'))
    return llvm::sys::fs::can_execute(cxx) ? cxx.str() : std::string();
  llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(cxx);
  return found ? *found : std::string();
}

// Whether the compiler takes Clang's own flags: the Clang in kernelc, or a
// $KERNELC_CXX whose executable, links resolved, is a clang (clang++,
// clang++-19, a c++ that links to clang); g++ has none of them.
bool IsClang(const HostToolchain& tc) {
  if (tc.cxx.empty()) return true;
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(tc.cxx, real)) real = tc.cxx;
  return llvm::sys::path::filename(real).contains("clang");
}

// How messages name the compiler.
std::string CompilerName(const HostToolchain& tc) {
  return tc.cxx.empty() ? "the in-process Clang" : tc.cxx;
}

RunResult RunCompiler(const HostToolchain& tc,
                      const std::vector<std::string>& args,
                      const std::string& log_path) {
  if (!tc.cxx.empty()) return Run(tc.cxx, args, log_path);
  ToolRun run = RunClangInProcess(tc.root, args);
  RunResult r;
  r.code = run.code;
  r.output = std::move(run.output);
  return r;
}

// The flags of every compile, for sources under `dir`. Paths in the
// objects are relative to it, so the library does not depend on where it
// was built.
std::vector<std::string> CommonFlags(const std::string& dir) {
  return {"-std=c++17",
          "-fPIC",
          "-fvisibility=hidden",
          "-fno-exceptions",
          fmt::format("-ffile-prefix-map={}=.", dir),
          "-Wno-unused-command-line-argument"};
}

// The flags of kernelc's generated sources, with kernelc's headers and
// XLA's FFI headers under `dir` (the scratch directory, or a precompiled
// prelude's directory).
using GeneratedFlags =
    std::function<std::vector<std::string>(const std::string& dir)>;

std::vector<std::string> ShimFlags(const std::string& dir) {
  return {"-O2", "-isystem", dir + "/include", "-isystem", dir + "/xla_ffi"};
}

// Data only: optimizing it would change nothing.
std::vector<std::string> CudaImagesFlags(const std::string& dir) {
  return {"-O0", "-isystem", dir + "/include"};
}

// Writes kernelc's headers and XLA's FFI headers under `dir`, where
// GeneratedFlags(dir) find them.
Status WriteBundledHeaders(const std::string& dir) {
  for (const EmbeddedFile& f : embedded::UserHeaders()) {
    Status s =
        WriteFileIfChanged(fmt::format("{}/{}", dir, f.path), f.contents);
    if (!s.ok()) return s;
  }
  for (const EmbeddedFile& f : embedded::XlaFfiHeaders()) {
    Status s = WriteFileIfChanged(fmt::format("{}/xla_ffi/{}", dir, f.path),
                                  f.contents);
    if (!s.ok()) return s;
  }
  return Status();
}

// The precompiled header of `prelude`, compiled with `flags`, under
// build.prelude_dir, made when missing; nullopt when there is none to use
// (no prelude directory, a compiler other than the Clang inside kernelc,
// or one that cannot be made). The directory's name stands for the Clang,
// its root and kernelc's executable (the headers the prelude reads are
// compiled into it, and written there); the file is named by the flags and
// the prelude. Clang checks the rest when it loads it (its own version,
// the language options, the headers' sizes and times). Made within the
// stage of the compile that needs it, which it makes longer once. A
// prelude is much of its source's compile time: the shim's (XLA's FFI
// API, kernelc's runtime headers and the standard library headers they
// use) preprocesses to some 40,000 lines, and the CPU built-ins that an
// entry file opens with (<math.h>, <memory>) take two thirds of a small
// kernel's compile.
std::optional<std::string> PrecompiledPrelude(const HostToolchain& tc,
                                              const HostBuild& build,
                                              const std::string& prelude,
                                              const GeneratedFlags& flags) {
  if (build.prelude_dir.empty() || !tc.cxx.empty() || prelude.empty())
    return std::nullopt;
  cache::KeyBuilder name;
  for (const std::string& flag : flags("$DIR")) name.Add("flag", flag);
  name.Add("prelude", prelude);
  const std::string& dir = build.prelude_dir;
  const std::string base = fmt::format("{}/{}", dir, name.Finish());
  const std::string pch = base + ".pch";
  if (llvm::sys::fs::exists(pch)) return pch;

  if (!WriteBundledHeaders(dir).ok() ||
      !WriteFileIfChanged(base + ".h", prelude).ok())
    return std::nullopt;
  std::vector<std::string> args = CommonFlags(dir);
  std::vector<std::string> own = flags(dir);
  args.insert(args.end(), own.begin(), own.end());
  // The templates the prelude instantiates for itself are instantiated
  // once, here, rather than in every source.
  args.insert(args.end(),
              {"-fpch-instantiate-templates", "-x", "c++-header", base + ".h"});
  const bool made = MakeFileInPlace(pch, [&](const std::string& temp) {
    args.insert(args.end(), {"-o", temp});
    return RunClangInProcess(tc.root, args).code == 0;
  });
  if (!made) return std::nullopt;
  return pch;
}

}  // namespace

Result<HostToolchain> FindHostToolchain() {
  HostToolchain tc;
  if (std::optional<std::string> cxx = EnvironmentCxx()) {
    if (cxx->empty())
      return Error::Internal(fmt::format(
          "KERNELC_CXX='{}' names no executable (a path, or a compiler on "
          "PATH such as clang++ or g++)",
          std::getenv("KERNELC_CXX")));
    tc.cxx = std::move(*cxx);
    return tc;
  }
  tc.root = FindClangRoot();
  return tc;
}

std::string HostCompilerFile() {
  if (std::optional<std::string> cxx = EnvironmentCxx()) return *cxx;
  ClangRoot root = FindClangRoot();
  return root.manifest.empty() ? "/proc/self/exe" : root.manifest;
}

Status BuildHostLibrary(const HostToolchain& tc, const HostBuild& build,
                        diag::DiagnosticEngine& diags) {
  const std::string& work = build.work_dir;
  std::string include = work + "/include";
  std::string host_include = work + "/host_include";
  if (Status s = WriteBundledHeaders(work); !s.ok()) return s;
  for (const auto& [path, source] : build.sources) {
    Status s =
        WriteFileIfChanged(fmt::format("{}/{}", work, path), source.text);
    if (!s.ok()) return s;
  }

  const std::vector<std::string> common = CommonFlags(work);
  // The compiles, in link order: each user source with its entry points,
  // the shim, and for the cuda target the embedded binaries (the shim
  // dlopens libcuda).
  struct Compile {
    std::string src;   // under work_dir
    std::string what;  // how the progress names it
    // The flags that its prelude (its opening #include lines) is read
    // with, for kernelc's headers under a directory: the scratch
    // directory, or that of the precompiled prelude.
    GeneratedFlags prelude_flags;
    std::vector<std::string> own_flags;  // those of the source alone
    bool user_code = false;  // its failures are the user's to fix
    std::string dep_file;    // -MMD's output, when asked for
  };
  std::vector<Compile> compiles;
  for (const HostBuild::UserUnit& unit : build.user_units) {
    llvm::SmallString<256> abs(unit.source_path);
    llvm::sys::fs::make_absolute(abs);
    llvm::SmallString<256> src_dir(abs);
    llvm::sys::path::remove_filename(src_dir);
    // A source without its host code: written beside its headers without
    // theirs, under its own name, with a #line naming the source for its
    // diagnostics; the source's directory still serves its other includes.
    std::string include_path = abs.str().str();
    std::vector<std::string> text_flags;
    std::string dir;  // of the copy, when there is one
    if (!unit.text.empty()) {
      dir = work + "/" + unit.file + ".src";
      include_path = dir + "/" + llvm::sys::path::filename(abs).str();
      std::vector<std::pair<std::string, std::string>> files = unit.headers;
      files.push_back({llvm::sys::path::filename(abs).str(),
                       fmt::format("#line 1 \"{}\"\n{}",
                                   EscapeForLiteral(abs.str()), unit.text)});
      for (const auto& [file, text] : files) {
        llvm::SmallString<256> path(dir);
        llvm::sys::path::append(path, file);
        llvm::SmallString<256> parent(path);
        llvm::sys::path::remove_filename(parent);
        if (std::error_code ec = llvm::sys::fs::create_directories(parent))
          return Error::Internal(fmt::format("cannot create '{}': {}",
                                             parent.str().str(), ec.message()));
        Status s = WriteFileIfChanged(std::string(path), text);
        if (!s.ok()) return s;
      }
      text_flags = {"-iquote", src_dir.str().str()};
    }
    // The unit includes the source as KC_USER_SOURCE. #include takes a
    // path as it is spelled, without escapes: one with a double quote or a
    // control character, or that ends in a backslash, cannot be written
    // there, and is included through a link of kernelc's naming beside the
    // unit (the source's own directory then searched for its "..."
    // includes).
    std::vector<std::string> link_flags;
    if (!Spellable(include_path)) {
      const std::string target = include_path;
      include_path = unit.file + ".user_source";
      llvm::SmallString<256> link(work);
      llvm::sys::path::append(link, include_path);
      llvm::sys::fs::remove(link);
      if (std::error_code ec = llvm::sys::fs::create_link(target, link))
        return Error::Internal(fmt::format("cannot link {} to {}: {}",
                                           link.str(), target, ec.message()));
      link_flags.push_back("-iquote" + (dir.empty() ? src_dir.str().str() : dir));
    }
    Compile c;
    c.src = unit.file;
    c.what = unit.source_path;
    c.user_code = true;
    // What the entry file's prelude, kernelc's headers, is read with: every
    // flag that can change how a header reads, the user's among them.
    std::vector<std::string> search = link_flags;
    for (const std::string& d : build.include_dirs) search.push_back("-I" + d);
    for (const std::string& d : build.defines) search.push_back("-D" + d);
    // CUDA code passes values that only some threads set through its own
    // functions (`int v; if (lane == 0) v = atomicAdd(...); v =
    // broadcast(v);`), which Clang would take for undefined behaviour and
    // compile into every thread doing the atomicAdd (seen with Clang 19,
    // through a __noinline__ function).
    if (IsClang(tc))
      search.insert(search.end(), {"-Xclang", "-no-enable-noundef-analysis"});
    // The kernels' built-ins are thread-local (kernelc/host.h), reached
    // through __tls_get_addr. TLS descriptors (-mtls-dialect=gnu2) would
    // save some 16 instructions per call, but glibc before 2.40 resolves
    // a descriptor of a module in dynamic TLS without preserving the vector
    // registers (glibc bug 31372): with Debian 12's glibc 2.36, a process
    // that loads several packages then read wrong scalars.
    search.insert(search.end(), text_flags.begin(), text_flags.end());
    c.prelude_flags = [search](const std::string& dir) {
      std::vector<std::string> flags = {
          "-O3", "-D__KERNELC_HOST__", "-x", "c++",
          // kernelc's headers before the user's directories (-I comes
          // before -isystem): <cuda_fp16.h> is kernelc's stand-in even
          // when -I names the CUDA toolkit's include directory.
          "-I" + dir + "/include", "-I" + dir + "/host_include"};
      flags.insert(flags.end(), search.begin(), search.end());
      return flags;
    };
    c.own_flags = {fmt::format("-DKC_USER_SOURCE=\"{}\"", include_path),
                   fmt::format("-ffile-prefix-map={}=.", src_dir.str().str())};
    // -MMD leaves out system headers, for which the compiler's identity
    // stands; kernelc's own, in the scratch directory or with a
    // precompiled prelude, are left out below.
    if (build.dependencies) {
      c.dep_file = work + "/" + unit.file + ".d";
      c.own_flags.insert(c.own_flags.end(), {"-MMD", "-MF", c.dep_file});
    }
    compiles.push_back(std::move(c));
  }
  auto add_generated = [&](std::string src, std::string what,
                           GeneratedFlags flags) {
    Compile c;
    c.src = std::move(src);
    c.what = std::move(what);
    c.prelude_flags = std::move(flags);
    compiles.push_back(std::move(c));
  };
  add_generated("shim.cc", "XLA FFI shim", ShimFlags);
  const bool cuda = build.sources.count("cuda_images.cc") > 0;
  if (cuda) add_generated("cuda_images.cc", "CUDA binaries", CudaImagesFlags);
  // The archives that kernelc carries, prebuilt: its runtime (the
  // handlers' out-of-line part and the block executor) and the block
  // executor's context switch. The linker takes from them what the library
  // uses.
  std::vector<std::string> archives;
  for (const EmbeddedFile& f : embedded::Archives()) {
    std::string path = fmt::format("{}/lib/{}", work, f.path);
    Status s = WriteFileIfChanged(path, f.contents);
    if (!s.ok()) return s;
    archives.push_back(path);
  }

  // They run at the same time, as many as there are cores: the shim, with
  // the XLA FFI headers, takes longer than a kernel source. The engine is
  // not thread-safe, so a compile only records how it failed; the failures
  // are reported below, in link order.
  struct Outcome {
    Status internal;           // a toolchain failure, or generated code
    bool user_failed = false;  // a user source that does not compile
    std::string output;        // the compiler's output when it failed
  };
  std::vector<Outcome> outcomes(compiles.size());
  std::vector<std::string> objects;
  for (const Compile& c : compiles)
    objects.push_back(work + "/" + c.src + ".o");
  auto run = [&](size_t i) {
    const Compile& c = compiles[i];
    Progress::Stage stage(build.progress, "host compile", c.what);
    const std::vector<std::string> io = {"-c", work + "/" + c.src, "-o",
                                         objects[i]};
    // A source with its prelude precompiled, the headers read where the
    // precompiled header was made from them (so mapped to "." as well);
    // compiled whole when that fails, as a header Clang will not load (a
    // stale or damaged one) fails. When the whole source then compiles,
    // the header was at fault: it is removed, and the next build makes it
    // anew. When it does not, the diagnostics are those of the whole
    // source, as without a precompiled header.
    std::optional<std::string> pch =
        PrecompiledPrelude(tc, build, build.sources.at(c.src).prelude,
                           c.prelude_flags);
    auto compile = [&](const std::string& dir, bool with_pch) {
      std::vector<std::string> args = common;
      std::vector<std::string> flags = c.prelude_flags(dir);
      if (with_pch) args.push_back(fmt::format("-ffile-prefix-map={}=.", dir));
      args.insert(args.end(), flags.begin(), flags.end());
      args.insert(args.end(), c.own_flags.begin(), c.own_flags.end());
      if (with_pch) args.insert(args.end(), {"-include-pch", *pch});
      args.insert(args.end(), io.begin(), io.end());
      return RunCompiler(tc, args, work + "/" + c.src + ".log");
    };
    RunResult r;
    if (pch) r = compile(std::string(llvm::sys::path::parent_path(*pch)), true);
    if (!pch || r.code != 0) {
      r = compile(work, false);
      if (pch && r.code == 0) llvm::sys::fs::remove(*pch);
    }
    Outcome& out = outcomes[i];
    if (!r.error.empty() && r.code < 0) {
      out.internal =
          Error::Internal(fmt::format("cannot run {}: {}", tc.cxx, r.error));
    } else if (r.code != 0 && !c.user_code) {
      out.internal = Error::Internal(
          fmt::format("compiling {} for the CPU failed:\n{}", c.src, r.output));
    } else if (r.code != 0) {
      out.user_failed = true;
      out.output = std::move(r.output);
    } else {
      stage.Done();
    }
  };
  ForEachConcurrently(compiles.size(), run);
  // Every user source that does not compile is reported, the compiler's
  // own diagnostics relayed whole, and the build stops at them; a failure
  // of kernelc's generated code is the result only when they compiled.
  bool reported = false;
  for (size_t i = 0; i < compiles.size(); ++i) {
    if (!outcomes[i].user_failed) continue;
    diags.Report<diag::Id::kHostCompileFailed>({}, compiles[i].src,
                                               outcomes[i].output);
    reported = true;
  }
  if (reported) return Error::Reported();
  for (const Outcome& out : outcomes)
    if (!out.internal.ok()) return out.internal;

  if (build.dependencies) {
    std::set<std::string> dependencies;
    for (const Compile& c : compiles) {
      if (c.dep_file.empty()) continue;
      std::optional<std::string> text = ReadFile(c.dep_file);
      if (!text)
        return Error::Internal(fmt::format("{} wrote no dependency file '{}'",
                                           CompilerName(tc), c.dep_file));
      for (const std::string& d : cache::ParseDepFile(*text)) {
        llvm::SmallString<256> path(d);
        llvm::sys::fs::make_absolute(work, path);
        llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
        // The generated entry points and kernelc's headers live in the
        // scratch directory, or in that of the precompiled preludes.
        const llvm::StringRef p(path);
        if (!p.starts_with(work + "/") &&
            (build.prelude_dir.empty() ||
             !p.starts_with(build.prelude_dir + "/")))
          dependencies.insert(std::string(path));
      }
    }
    build.dependencies->assign(dependencies.begin(), dependencies.end());
  }

  // --no-undefined: a kernel calling a function nobody defines (say, one
  // that exists only on the GPU) fails here, not when Python loads the
  // library.
  Progress::Stage link_stage(
      build.progress, "link",
      std::string(llvm::sys::path::filename(build.library_path)));
  std::vector<std::string> link = {"-shared",          "-o",
                                   build.library_path, "-Wl,--build-id=sha1",
                                   "-Wl,-O1",          "-Wl,--no-undefined"};
  link.insert(link.end(), objects.begin(), objects.end());
  // Linked into the library, and kept out of its exports; as a group, so
  // that the prebuilt runtime finds the context switch whatever their
  // order.
  link.push_back("-Wl,--start-group");
  for (const std::string& a : archives) {
    link.push_back(a);
    link.push_back(
        fmt::format("-Wl,--exclude-libs,{}", llvm::sys::path::filename(a)));
  }
  link.push_back("-Wl,--end-group");
  if (cuda) link.push_back("-ldl");
  // The library exports its handlers only (-fvisibility=hidden), but an
  // entry point compiled in clones has a resolver that compilers give
  // default visibility, whatever the flags: kept local.
  const std::string exports = work + "/exports.map";
  if (Status s = WriteFileIfChanged(exports,
                                    "{ global: *; local: *.resolver; };\n");
      !s.ok())
    return s;
  link.push_back("-Wl,--version-script," + exports);
  RunResult r = RunCompiler(tc, link, work + "/link.log");
  if (r.code < 0)
    return Error::Internal(fmt::format("cannot run {}: {}", tc.cxx, r.error));
  if (r.code != 0) {
    diags.Report<diag::Id::kHostLinkFailed>({}, r.output);
    return Error::Reported();
  }
  link_stage.Done();
  return Status();
}

}  // namespace kernelc::backends
