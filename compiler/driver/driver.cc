#include "compiler/driver/driver.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>

#include "compiler/backends/host_backend.h"
#include "compiler/backends/nvrtc_backend.h"
#include "compiler/cache/build_cache.h"
#include "compiler/driver/analyze.h"
#include "compiler/driver/generate.h"
#include "compiler/driver/identity.h"
#include "compiler/driver/install.h"
#include "compiler/driver/paths.h"
#include "compiler/driver/scratch_directory.h"
#include "compiler/driver/target_units.h"
#include "compiler/driver/toolkit_headers.h"
#include "compiler/driver/version.h"
#include "compiler/emit/namer.h"
#include "compiler/model/json.h"
#include "compiler/util/file_io.h"
#include "compiler/wheel/wheel.h"

namespace kernelc::driver {

namespace {

using diag::Id;

// The options of a command that builds: checked, with the package's name.
Result<Options> Resolve(Options o, diag::DiagnosticEngine& diags) {
  if (Status s = CheckOptions(o, diags); !s.ok()) return s.error();
  if (Status s = ResolvePackageName(o, diags); !s.ok()) return s.error();
  return o;
}

Status CreateOutDir(const std::string& dir, diag::DiagnosticEngine& diags) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    diags.Report<Id::kCannotCreateDirectory>({}, dir, ec.message());
    return Error::Reported();
  }
  return Status();
}

// A pipeline's result, with a user error that file I/O below the engine
// returned reported to `diags`: every error in the user's input leaves a
// pipeline as a diagnostic.
template <typename T>
Result<T> Reported(Result<T> result, diag::DiagnosticEngine& diags) {
  if (result.ok() || result.error().kind != ErrorKind::kUser) return result;
  diags.Report<Id::kLibraryError>({}, result.error().message);
  return Error::Reported();
}

// Stores a finished build in the cache, when the cache can tell when it
// goes stale. `dependencies`: the files the host compile read.
void StoreInCache(const cache::BuildCache& build_cache, const std::string& key,
                  const Options& o, const Generated& g,
                  const TargetUnits& units,
                  const std::vector<std::string>& frontend_dependencies,
                  std::vector<std::string> dependencies,
                  const cache::Files& files, diag::DiagnosticEngine& diags) {
  // A JSON spec's sources are not read by the frontend; the host compile of
  // the user's sources (the cpu target) names their headers, and without
  // it they are unknown: such a build is not cached.
  // A spec whose kernels are all PTX names every file it reads.
  bool dependencies_known = !frontend_dependencies.empty() ||
                            !dependencies.empty() || g.module.sources.empty();
  // The key names the toolchains found first; when one of those could not
  // be loaded and another compiled the kernels, the key does not identify
  // the compiler, and the build is not cached.
  bool keyed =
      std::all_of(units.begin(), units.end(),
                  [](const std::unique_ptr<targets::TargetUnit>& unit) {
                    return unit->CompiledWithKeyedToolchain();
                  });
  if (!dependencies_known || !keyed) return;
  for (const std::string& d : frontend_dependencies)
    dependencies.push_back(Absolute(d));
  // The sources a JSON spec names are read too.
  for (const std::string& src : g.source_paths)
    dependencies.push_back(Absolute(src));
  // And the PTX files of its PTX kernels.
  for (const model::Kernel& k : g.module.kernels)
    if (k.ptx) dependencies.push_back(Absolute(k.ptx->file));
  // The key holds the sources on the command line already; a lookup need
  // not read and hash them a second time.
  for (const std::string& src : o.sources)
    dependencies.erase(
        std::remove(dependencies.begin(), dependencies.end(), Absolute(src)),
        dependencies.end());
  std::sort(dependencies.begin(), dependencies.end());
  dependencies.erase(std::unique(dependencies.begin(), dependencies.end()),
                     dependencies.end());
  std::vector<std::string> toolkit_headers;
  for (const std::unique_ptr<targets::TargetUnit>& unit : units) {
    std::vector<std::string> dirs = unit->UnreportedIncludeDirs();
    if (dirs.empty()) continue;
    std::vector<std::string> headers =
        CudaToolkitHeaders(g.source_paths, o.include_dirs, dirs);
    toolkit_headers.insert(toolkit_headers.end(), headers.begin(),
                           headers.end());
  }
  Status s = build_cache.Store(key, dependencies, files, toolkit_headers);
  // A cache that cannot be written costs speed, not correctness.
  if (!s.ok()) diags.Report<Id::kCacheNotWritten>({}, s.error().message);
}

Result<BuildResult> BuildPackage(const Options& options,
                                 diag::DiagnosticEngine& diags,
                                 Progress* progress) {
  Result<Options> resolved = Resolve(options, diags);
  if (!resolved.ok()) return resolved.error();
  const Options& o = resolved.value();
  BuildResult result;
  result.package = o.name;
  result.package_dir = o.out_dir + "/" + o.name;
  TargetUnits units = MakeTargetUnits(o.targets);

  std::optional<cache::BuildCache> build_cache;
  std::string cache_key;
  // The cache directory, and the identity of kernelc and its compiler,
  // read once: the key's first part, and the name of the directory of
  // their precompiled preludes in the cache directory. Without the cache
  // nothing is read or written there.
  std::string cache_dir;
  std::string toolchain;
  Progress::Stage cache_stage(progress, "build cache", "hit");
  if (!o.no_cache) {
    cache_dir = o.cache_dir.empty() ? cache::DefaultDirectory() : o.cache_dir;
    if (!cache_dir.empty()) toolchain = ToolchainIdentity();
    if (!toolchain.empty()) cache_key = CacheKey(o, toolchain, units);
    if (!cache_key.empty()) {
      build_cache.emplace(cache_dir);
      if (std::optional<cache::Files> hit = build_cache->Lookup(cache_key)) {
        std::string library = LibraryOf(*hit);
        if (!library.empty() && hit->count(library)) {
          if (Status s = CreateOutDir(o.out_dir, diags); !s.ok())
            return s.error();
          Status s = InstallPackage(result.package_dir, *hit, library,
                                    &result.written);
          if (!s.ok()) return s.error();
          result.library = library;
          result.cache_hit = true;
          cache_stage.Done();
          return result;
        }
      }
    }
  }

  // The files Clang's frontend read: the sources and their headers, which
  // the targets' compilers read too.
  std::vector<std::string> frontend_dependencies;
  // The precompiled preludes depend on kernelc and its compiler only: kept
  // in the cache directory, beside the build cache's entries, for every
  // build with them.
  const std::string prelude_dir =
      toolchain.empty() ? "" : cache::PreludeDirectory(cache_dir, toolchain);
  Result<Generated> generated =
      Generate(o, units, diags, build_cache ? &frontend_dependencies : nullptr,
               progress, prelude_dir);
  if (!generated.ok()) return generated.error();
  const Generated& g = generated.value();
  Result<backends::HostToolchain> tc = backends::FindHostToolchain();
  if (!tc.ok()) return tc.error();

  if (Status s = CreateOutDir(o.out_dir, diags); !s.ok()) return s.error();
  // Everything is built in a scratch directory; the package directory is
  // touched only once the library exists. Those that killed builds left
  // here go first.
  ScratchDirectory::ReclaimAbandoned(o.out_dir);
  ScratchDirectory scratch;
  llvm::SmallString<256> prefix(o.out_dir);
  llvm::sys::fs::make_absolute(prefix);
  llvm::sys::path::append(prefix, fmt::format(".{}.kernelc-%%%%%%", o.name));
  if (std::error_code ec = scratch.Create(prefix)) {
    diags.Report<Id::kCannotCreateScratch>({}, o.out_dir, ec.message());
    return Error::Reported();
  }
  emit::Namer namer(g.info.package, g.info.content_hash);
  result.library = namer.LibraryFile();
  targets::BuildSettings settings = TargetSettings(o);
  backends::HostBuild hb;
  hb.work_dir = scratch.path();
  hb.library_path = scratch.path() + "/" + result.library;
  hb.include_dirs = settings.include_dirs;
  hb.defines = settings.defines;
  for (const auto& [path, text] : g.output.build) {
    auto prelude = g.output.preludes.find(path);
    hb.sources[path] = {text, prelude == g.output.preludes.end()
                                  ? std::string()
                                  : prelude->second};
  }
  for (const std::unique_ptr<targets::TargetUnit>& unit : units) {
    std::vector<backends::HostBuild::UserUnit> user_units =
        unit->HostUnits(g.module, g.source_paths, g.output.build);
    hb.user_units.insert(hb.user_units.end(), user_units.begin(),
                         user_units.end());
  }
  std::vector<std::string> dependencies;
  if (build_cache) hb.dependencies = &dependencies;
  hb.progress = progress;
  hb.prelude_dir = prelude_dir;
  if (Status s = backends::BuildHostLibrary(tc.value(), hb, diags); !s.ok())
    return s.error();
  cache::Files files = g.output.package;
  std::optional<std::string> library = ReadFile(hb.library_path);
  if (!library)
    return Error::Internal(
        fmt::format("the linker wrote no '{}'", hb.library_path));
  files[result.library] = std::move(*library);
  if (Status s = InstallPackage(result.package_dir, files, result.library,
                                &result.written);
      !s.ok())
    return s.error();
  if (build_cache)
    StoreInCache(*build_cache, cache_key, o, g, units, frontend_dependencies,
                 std::move(dependencies), files, diags);
  return result;
}

Result<EmitResult> EmitFiles(const Options& options,
                             diag::DiagnosticEngine& diags) {
  Result<Options> resolved = Resolve(options, diags);
  if (!resolved.ok()) return resolved.error();
  const Options& o = resolved.value();
  TargetUnits units = MakeTargetUnits(o.targets);
  Result<Generated> g = Generate(o, units, diags);
  if (!g.ok()) return g.error();
  EmitResult result;
  result.content_hash = g.value().info.content_hash;
  for (const auto& [dir, files] :
       {std::pair{"package", &g.value().output.package},
        std::pair{"build", &g.value().output.build}}) {
    std::vector<std::string> written;
    Status s = WriteFilesIfChanged(fmt::format("{}/{}", o.out_dir, dir), *files,
                                   &written);
    if (!s.ok()) return s.error();
    for (const std::string& w : written)
      result.written.push_back(fmt::format("{}/{}", dir, w));
  }
  return result;
}

// The manifest of a built package (its targets, CUDA architectures and each
// binary's SHA-256, the model), as built.
Result<InspectResult> InspectPackage(const std::string& dir,
                                     diag::DiagnosticEngine& diags) {
  std::string path = dir + "/kernelc.json";
  std::optional<std::string> text = ReadFile(path);
  if (!text) {
    diags.Report<Id::kNotAPackage>({}, dir);
    return Error::Reported();
  }
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("targets")) {
    diags.Report<Id::kNotAManifest>({}, path);
    return Error::Reported();
  }
  return InspectResult{j.dump(2) + "\n"};
}

bool IsOneDirectory(const std::vector<std::string>& sources) {
  return sources.size() == 1 && llvm::sys::fs::is_directory(sources[0]);
}

Result<InspectResult> InspectSources(Options o, diag::DiagnosticEngine& diags) {
  if (IsOneDirectory(o.sources)) return InspectPackage(o.sources[0], diags);
  if (Status s = CheckOptions(o, diags); !s.ok()) return s.error();
  model::Module m;
  Result<sema::ModulePlan> plan =
      Analyze(o, /*units=*/nullptr, &m, diags, /*dependencies=*/nullptr);
  if (!plan.ok()) return plan.error();
  return InspectResult{model::ToCanonicalJson(m)};
}

// The wheel's timestamp: $SOURCE_DATE_EPOCH when set (reproducible-builds
// convention), else zip's earliest date; never the clock.
Result<int64_t> WheelTimestamp(diag::DiagnosticEngine& diags) {
  const char* env = std::getenv("SOURCE_DATE_EPOCH");
  if (!env || !*env) return int64_t{0};
  long long v = 0;
  if (llvm::StringRef(env).getAsInteger(10, v) || v < 0) {
    diags.Report<Id::kBadSourceDateEpoch>({}, env);
    return Error::Reported();
  }
  return static_cast<int64_t>(v);
}

Result<WheelResult> MakeWheel(const Options& o, diag::DiagnosticEngine& diags,
                              Progress* progress) {
  Result<int64_t> mtime = WheelTimestamp(diags);
  if (!mtime.ok()) return mtime.error();
  wheel::Options wo;
  wo.version = o.wheel_version;
  wo.platform = o.platform;
  wo.distribution = o.distribution;
  wo.summary = o.summary;
  wo.requirements = o.requirements;
  wo.requires_python = kRequiresPython;
  wo.generator = fmt::format("kernelc {}", kVersion);
  wo.mtime = mtime.value();
  // The metadata is checked before sources are built.
  if (Status s = wheel::CheckOptions(wo, diags); !s.ok()) return s.error();
  WheelResult result;
  std::string package_dir;
  ScratchDirectory scratch;
  if (IsOneDirectory(o.sources)) {
    package_dir = o.sources[0];
  } else {
    // Sources: built first (through the build cache), in a scratch
    // directory that goes away afterwards.
    if (std::error_code ec = scratch.Create("kernelc-wheel"))
      return Error::Internal(
          fmt::format("cannot create a scratch directory: {}", ec.message()));
    Options b = o;
    b.out_dir = scratch.path();
    Result<BuildResult> built = BuildPackage(b, diags, progress);
    if (!built.ok()) return built.error();
    package_dir = built.value().package_dir;
    result.build = std::move(built).value();
  }
  Result<wheel::Files> files = wheel::ReadPackage(package_dir, diags);
  if (!files.ok()) return files.error();
  Result<wheel::Wheel> w = wheel::MakeWheel(files.value(), wo, diags);
  if (!w.ok()) return w.error();
  Result<std::string> path =
      wheel::WriteWheel(w.value(), o.out_dir, wo.mtime, diags);
  if (!path.ok()) return path.error();
  result.path = std::move(path).value();
  return result;
}

}  // namespace

Result<BuildResult> Build(const Options& o, diag::DiagnosticEngine& diags,
                          Progress* progress) {
  return Reported(BuildPackage(o, diags, progress), diags);
}

Result<EmitResult> Emit(const Options& o, diag::DiagnosticEngine& diags) {
  return Reported(EmitFiles(o, diags), diags);
}

Result<InspectResult> Inspect(const Options& o, diag::DiagnosticEngine& diags) {
  return Reported(InspectSources(o, diags), diags);
}

Result<WheelResult> Wheel(const Options& o, diag::DiagnosticEngine& diags,
                          Progress* progress) {
  return Reported(MakeWheel(o, diags, progress), diags);
}

std::string VersionText() {
  std::string text = fmt::format("kernelc {}", kVersion);
  Result<backends::Nvrtc> nvrtc = backends::FindNvrtc();
  if (nvrtc.ok())
    return text + fmt::format("\nNVRTC {} ({})", nvrtc.value().version(),
                              nvrtc.value().library());
  return text + "\n" + nvrtc.error().message;
}

}  // namespace kernelc::driver
