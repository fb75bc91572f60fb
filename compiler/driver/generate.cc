#include "compiler/driver/generate.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "compiler/driver/analyze.h"
#include "compiler/driver/identity.h"
#include "compiler/driver/output_names.h"
#include "compiler/driver/paths.h"
#include "compiler/driver/version.h"
#include "compiler/emit/generators.h"
#include "compiler/emit/namer.h"

namespace kernelc::driver {

namespace {

// Python names are escaped user names ("lambda" -> "lambda_"), so two user
// names can meet: a kernel "lambda" beside a kernel "lambda_", or such
// parameters. Reported, at the second, instead of emitting a function that
// cannot work.
Status CheckPythonNames(const sema::ModulePlan& plan,
                        diag::DiagnosticEngine& diags) {
  const int errors_before = diags.error_count();
  // A kernel's op, and its identifier in generated code (which a
  // template's variant has of its own, "<op>__<variant>").
  std::map<std::string, const model::Kernel*> kernels;
  for (const sema::KernelPlan& kp : plan.kernels) {
    const model::Kernel& k = *kp.kernel;
    std::set<std::string> names = {emit::Namer::Python(k.Op()),
                                   emit::Namer::Python(k.Id())};
    for (const std::string& name : names) {
      auto [it, fresh] = kernels.emplace(name, &k);
      if (!fresh && it->second->Op() != k.Op())
        diags.Report<diag::Id::kPythonFunctionClash>(k.loc, it->second->name,
                                                     k.name, it->first);
    }
    std::map<std::string, const model::Param*> params;
    for (const model::Param& p : k.params) {
      auto [pit, pfresh] = params.emplace(emit::Namer::Python(p.name), &p);
      if (!pfresh)
        diags.Report<diag::Id::kPythonArgumentClash>(
            p.loc, pit->second->name, p.name, k.name, pit->first);
    }
  }
  if (diags.error_count() > errors_before) return Error::Reported();
  return Status();
}

// Every file of a package comes from one of these generators, run in this
// order: a new kind of file is one more line here.
Result<emit::Output> EmitPackage(const sema::ModulePlan& plan,
                                 const model::BuildInfo& info,
                                 const TargetUnits& units) {
  std::vector<const emit::PlatformShim*> platforms;
  for (const std::unique_ptr<targets::TargetUnit>& unit : units)
    platforms.push_back(&unit->shim());
  std::vector<std::unique_ptr<const emit::Generator>> generators;
  generators.push_back(std::make_unique<emit::ShimGenerator>());
  generators.push_back(std::make_unique<emit::HostEntriesGenerator>());
  generators.push_back(std::make_unique<emit::CudaImagesGenerator>());
  generators.push_back(std::make_unique<emit::FoldProgramsGenerator>());
  generators.push_back(std::make_unique<emit::PythonPackageGenerator>());
  generators.push_back(std::make_unique<emit::StubsGenerator>());
  generators.push_back(std::make_unique<emit::PyTypedGenerator>());
  generators.push_back(std::make_unique<emit::ManifestGenerator>());
  return emit::RunGenerators(
      emit::EmitRequest(plan, info, std::move(platforms)), generators);
}

}  // namespace

targets::BuildSettings TargetSettings(const Options& o) {
  targets::BuildSettings settings;
  settings.targets = o.targets;
  // Absolute for the compilers, which run elsewhere than kernelc; as the
  // path is given otherwise, with its "." and "..", as kernelc has always
  // handed it to them.
  for (const std::string& d : o.include_dirs) {
    llvm::SmallString<256> abs(d);
    llvm::sys::fs::make_absolute(abs);
    settings.include_dirs.push_back(std::string(abs));
  }
  settings.defines = o.defines;
  settings.cuda_archs = o.cuda_arch;
  settings.use_fast_math = o.use_fast_math;
  settings.lineinfo = o.lineinfo;
  return settings;
}

Result<Generated> Generate(const Options& o, TargetUnits& units,
                           diag::DiagnosticEngine& diags,
                           std::vector<std::string>* dependencies,
                           Progress* progress,
                           const std::string& prelude_dir) {
  Generated g;
  // The files the frontend read: the sources, and the headers that the
  // content hash holds too.
  std::vector<std::string> read;
  Result<sema::ModulePlan> plan =
      Analyze(o, &units, &g.module, diags, &read, progress, prelude_dir);
  if (!plan.ok()) return plan.error();
  if (Status s = CheckPythonNames(plan.value(), diags); !s.ok())
    return s.error();
  std::set<std::string> sources;
  for (const std::string& s : g.module.sources) sources.insert(Absolute(s));
  std::vector<std::string> headers;
  for (const std::string& f : read)
    if (!sources.count(Absolute(f))) headers.push_back(f);
  if (dependencies != nullptr) *dependencies = std::move(read);
  model::BuildInfo& info = g.info;
  info.version = kVersion;
  info.package = o.name;
  info.ffi_api = kFfiApi;
  info.jaxlib_floor = kJaxlibFloor;
  info.targets = o.targets;
  targets::BuildSettings settings = TargetSettings(o);
  settings.progress = progress;
  for (std::unique_ptr<targets::TargetUnit>& unit : units) {
    Status s = unit->CompileKernels(plan.value(), settings, &info, diags);
    if (!s.ok()) return s.error();
  }
  // Everything that reads the sources or reports at their paths is done:
  // from here on the model names its files as the output does.
  g.source_paths = g.module.sources;
  OutputNames names(g.module);
  model::ForEachPath(g.module, [&names](std::string& p) { p = names.Name(p); });
  for (model::CudaBinary& b : info.cuda_binaries)
    b.source = names.Name(b.source);
  info.content_hash = ContentHash(
      o, {&g.module, &g.source_paths, &names, &info, &headers}, units);
  Result<emit::Output> out = EmitPackage(plan.value(), info, units);
  if (!out.ok()) return out.error();
  g.output = std::move(out).value();
  return g;
}

}  // namespace kernelc::driver
