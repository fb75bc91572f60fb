#include "compiler/driver/options.h"

#include <fmt/format.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/cache/build_cache.h"
#include "compiler/driver/stdlib_module_names.h"
#include "compiler/driver/version.h"
#include "compiler/emit/namer.h"

namespace kernelc::driver {

namespace {

using model::Target;

constexpr CommandSet kAll = {Command::kBuild, Command::kWheel,
                             Command::kInspect, Command::kEmit};
// Options of the build itself: `wheel` builds sources first, and `emit`
// does all of a build but the compile and link.
constexpr CommandSet kBuilding = {Command::kBuild, Command::kWheel,
                                  Command::kEmit};
// The build cache's own settings.
constexpr CommandSet kCaching = {Command::kBuild, Command::kWheel};
constexpr CommandSet kWheelOnly = {Command::kWheel};

// Options that do not change the package: where it goes, the cache's own
// settings, the wheel's metadata.
constexpr Identity kNotIdentity = {};

}  // namespace

// The digests take the options in this order; the content hash's order
// (--name, --target, -D, -I) is that of the hashes kernelc has always
// computed, so that a package's name does not change with kernelc's
// internals.
const std::vector<OptionSpec>& OptionTable() {
  static const std::vector<OptionSpec> table = {
      // The key reads the sources given; the hash holds the model and the
      // text of every source, also those a JSON spec names.
      {"SRC",
       "annotated .cu/.cc sources, or JSON specs (kernelc inspect); wheel "
       "and inspect also take a package directory that build wrote",
       kAll,
       &Options::sources,
       {"source", KeyUse::kFileContents, HashUse::kIndirect},
       std::nullopt,
       /*required=*/true,
       "sources"},
      {"-o",
       "the output directory (wheel: DIST, where the wheel goes; emit: "
       "package/ and build/ go there)",
       kBuilding, &Options::out_dir, kNotIdentity, std::nullopt,
       /*required=*/true, "out_dir"},
      {"--name",
       "package name (default: the first source's stem)",
       kBuilding,
       &Options::name,
       {"package", KeyUse::kValue, HashUse::kValue}},
      {"--target",
       "cpu (default), cuda or cpu,cuda; inspect reads the sources as a "
       "build for these targets does (cuda alone: as CUDA device code)",
       kAll,
       &Options::targets,
       {"target", KeyUse::kValue, HashUse::kValue}},
      // The CUDA images stand for NVRTC's options in the hash.
      {"--cuda-arch",
       "sm_80,sm_90,... (cuda target; default sm_80,sm_90): a cubin for "
       "each, and PTX for the newest",
       kAll,
       &Options::cuda_arch,
       {"cuda-arch", KeyUse::kValue, HashUse::kIndirect},
       Target::kCuda},
      {"--use-fast-math",
       "compile CUDA kernels with NVRTC's --use_fast_math",
       kBuilding,
       &Options::use_fast_math,
       {"fast-math", KeyUse::kValue, HashUse::kIndirect},
       Target::kCuda},
      {"--lineinfo",
       "line information in the CUDA binaries (NVRTC's "
       "--generate-line-info), so that profilers map kernels to source lines",
       kBuilding,
       &Options::lineinfo,
       {"lineinfo", KeyUse::kValue, HashUse::kIndirect},
       Target::kCuda},
      {"-D",
       "define a macro: NAME or NAME=VALUE",
       kAll,
       &Options::defines,
       {"define", KeyUse::kValue, HashUse::kValue},
       std::nullopt,
       /*required=*/false,
       "defines"},
      {"-I",
       "add a directory to the include path",
       kAll,
       &Options::include_dirs,
       {"include", KeyUse::kPath, HashUse::kOutputPath},
       std::nullopt,
       /*required=*/false,
       "include_dirs"},
      {"--no-cache", "neither read nor write the build cache", kCaching,
       &Options::no_cache, kNotIdentity},
      {"--cache-dir",
       "build cache directory (default: $KERNELC_CACHE_DIR, "
       "$XDG_CACHE_HOME/kernelc or ~/.cache/kernelc)",
       kCaching, &Options::cache_dir, kNotIdentity},
      {"--version",
       "the wheel's version (PEP 440, normalised as pip does: v1 is 1, "
       "1.0-dev is 1.0.dev0; default 0.0.0)",
       kWheelOnly, &Options::wheel_version, kNotIdentity},
      {"--platform",
       "platform tag, checked against the library: manylinux_X_Y_<arch>, "
       "a legacy alias (manylinux2014_<arch>) or linux_<arch> (default: the "
       "widest manylinux tag that the library's symbol versions allow, as "
       "auditwheel decides it)",
       kWheelOnly, &Options::platform, kNotIdentity},
      {"--dist-name",
       "the distribution's name, as pip installs it (default: the package's "
       "name)",
       kWheelOnly, &Options::distribution, kNotIdentity},
      {"--summary", "the distribution's one-line summary", kWheelOnly,
       &Options::summary, kNotIdentity},
      {"--requires",
       "a requirement (PEP 508) besides jax, jaxlib and numpy; repeatable",
       kWheelOnly, &Options::requirements, kNotIdentity},
  };
  return table;
}

namespace {

template <typename... F>
struct Overload : F... {
  using F::operator()...;
};
template <typename... F>
Overload(F...) -> Overload<F...>;

}  // namespace

std::string Keyword(const OptionSpec& spec) {
  if (!spec.keyword.empty()) return std::string(spec.keyword);
  std::string keyword(llvm::StringRef(spec.name).ltrim('-'));
  std::replace(keyword.begin(), keyword.end(), '-', '_');
  return keyword;
}

std::string OptionTableJson() {
  static constexpr std::pair<Command, const char*> kCommands[] = {
      {Command::kBuild, "build"},
      {Command::kWheel, "wheel"},
      {Command::kInspect, "inspect"},
      {Command::kEmit, "emit"}};
  nlohmann::json options = nlohmann::json::array();
  for (const OptionSpec& spec : OptionTable()) {
    nlohmann::json commands = nlohmann::json::array();
    for (const auto& [command, name] : kCommands)
      if (spec.commands.Has(command)) commands.push_back(name);
    const char* kind = std::visit(
        Overload{[](std::string Options::*) { return "text"; },
                 [](bool Options::*) { return "flag"; },
                 [](std::vector<std::string> Options::*) { return "list"; },
                 [](std::vector<Target> Options::*) { return "targets"; }},
        spec.member);
    options.push_back(
        {{"name", spec.name},
         {"keyword", Keyword(spec)},
         {"help", spec.help},
         {"commands", commands},
         {"kind", kind},
         {"path", spec.identity.key == KeyUse::kPath ||
                      spec.identity.key == KeyUse::kFileContents},
         {"needs", spec.needs ? nlohmann::json(model::TargetName(*spec.needs))
                              : nlohmann::json()},
         {"required", spec.required}});
  }
  nlohmann::json table = {{"version", kVersion},
                          {"cache_dir", cache::DefaultDirectory()},
                          {"options", options}};
  return table.dump(2) + "\n";
}

bool IsSet(const Options& o, const OptionSpec& spec) {
  return std::visit(
      Overload{
          [&](std::string Options::*m) { return !(o.*m).empty(); },
          [&](bool Options::*m) { return o.*m; },
          [&](std::vector<std::string> Options::*m) { return !(o.*m).empty(); },
          [&](std::vector<Target> Options::*m) { return !(o.*m).empty(); }},
      spec.member);
}

std::vector<std::string> OptionValues(const Options& o,
                                      const OptionSpec& spec) {
  return std::visit(
      Overload{[&](std::string Options::*m) {
                 return std::vector<std::string>{o.*m};
               },
               [&](bool Options::*m) {
                 return std::vector<std::string>{o.*m ? "1" : "0"};
               },
               [&](std::vector<std::string> Options::*m) { return o.*m; },
               [&](std::vector<Target> Options::*m) {
                 std::vector<std::string> names;
                 for (Target t : o.*m) names.emplace_back(model::TargetName(t));
                 return names;
               }},
      spec.member);
}

Result<std::vector<Target>> ParseTargets(std::string_view text,
                                         diag::DiagnosticEngine& diags) {
  std::vector<Target> targets;
  for (llvm::StringRef name : llvm::split(text, ',')) {
    std::optional<Target> t = model::TargetFromName(name.trim());
    if (!t) {
      diags.Report<diag::Id::kUnknownTarget>({}, name.trim().str());
      return Error::Reported();
    }
    targets.push_back(*t);
  }
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  return targets;
}

Status CheckOptions(Options& o, diag::DiagnosticEngine& diags) {
  std::sort(o.targets.begin(), o.targets.end());
  o.targets.erase(std::unique(o.targets.begin(), o.targets.end()),
                  o.targets.end());
  if (o.targets.empty()) {
    diags.Report<diag::Id::kNoTarget>({});
    return Error::Reported();
  }
  for (const OptionSpec& spec : OptionTable()) {
    if (spec.needs && IsSet(o, spec) &&
        std::find(o.targets.begin(), o.targets.end(), *spec.needs) ==
            o.targets.end()) {
      diags.Report<diag::Id::kOptionNeedsTarget>(
          {}, spec.name, model::TargetName(*spec.needs));
      return Error::Reported();
    }
  }
  return Status();
}

Status ResolvePackageName(Options& o, diag::DiagnosticEngine& diags) {
  if (o.name.empty() && !o.sources.empty()) {
    std::string stem = llvm::sys::path::stem(o.sources[0]).str();
    o.name = stem.substr(0, stem.find('.'));
  }
  if (!emit::Namer::IsValidPackageName(o.name)) {
    diags.Report<diag::Id::kBadPackageName>({}, o.name);
    return Error::Reported();
  }
  if (std::optional<std::string> what = ShadowedModule(o.name)) {
    diags.Report<diag::Id::kPackageNameShadows>({}, o.name, *what,
                                                o.name + "_ops");
    return Error::Reported();
  }
  return Status();
}

std::optional<std::string> ShadowedModule(std::string_view name) {
  for (std::string_view m : generated::kStdlibModuleNames)
    if (m == name)
      return fmt::format("a module of Python's standard library (Python {})",
                         generated::kStdlibModuleNamesVersion);
  // jax, the distributions every jax installation requires (its
  // unconditional requirements: jaxlib, ml_dtypes, numpy, opt_einsum,
  // scipy), the namespace of jax's accelerator plugins, and kernelc's own
  // Python package: the modules that a process importing an op has.
  static constexpr std::string_view kJaxWorld[] = {
      "jax",        "jaxlib", "jax_plugins", "kernelc",
      "ml_dtypes",  "numpy",  "opt_einsum",  "scipy",
  };
  for (std::string_view m : kJaxWorld)
    if (m == name)
      return fmt::format("'{}', which a JAX program imports", m);
  return std::nullopt;
}

}  // namespace kernelc::driver
