#include "compiler/driver/analyze.h"

#include <fmt/format.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>

#include <set>
#include <utility>

#include "compiler/driver/frontend_options.h"
#include "compiler/driver/utf8.h"
#include "compiler/frontend/frontend.h"
#include "compiler/model/json.h"
#include "compiler/util/file_io.h"

namespace kernelc::driver {

namespace {

// The model of JSON specs: their kernels, with the sources they name, in
// first-use order.
Result<model::Module> ReadSpecs(const std::vector<std::string>& specs,
                                Diagnostics& diagnostics) {
  model::Module m;
  diag::DiagnosticSink diags;
  for (const std::string& spec : specs) {
    std::optional<std::string> text = ReadFile(spec);
    if (!text) return Error::User(fmt::format("cannot read '{}'", spec));
    Result<model::Module> part = model::FromJson(*text, spec, diags);
    if (!part.ok()) continue;
    for (model::Kernel& k : part.value().kernels)
      m.kernels.push_back(std::move(k));
  }
  diagnostics.Add(diags);
  if (diags.has_errors()) return diagnostics.ErrorsIn(diags);
  std::set<std::string> seen;
  for (const model::Kernel& k : m.kernels)
    if (seen.insert(k.source).second) m.sources.push_back(k.source);
  for (const std::string& s : m.sources)
    if (!llvm::sys::fs::exists(s))
      return Error::User(fmt::format(
          "kernel source '{}' named by the spec does not exist", s));
  return m;
}

// The model of the sources, without the checks of its text.
Result<model::Module> ReadModule(const Options& o, Diagnostics& diagnostics,
                                 std::vector<std::string>* dependencies) {
  std::vector<std::string> json_specs, cpp_sources;
  for (const std::string& s : o.sources)
    (llvm::StringRef(s).ends_with(".json") ? json_specs : cpp_sources)
        .push_back(s);
  if (!json_specs.empty() && !cpp_sources.empty())
    return Error::User(
        "give either annotated sources or JSON specs, not both: a spec names "
        "its kernels' sources itself");
  if (cpp_sources.empty()) return ReadSpecs(json_specs, diagnostics);
  for (const std::string& s : cpp_sources)
    if (!llvm::sys::fs::exists(s))
      return Error::User(fmt::format("no such file: '{}'", s));
  frontend::Options fo = FrontendOptions(o);
  fo.dependencies = dependencies;
  std::string rendered;
  Result<model::Module> m = frontend::ParseSources(cpp_sources, fo, &rendered);
  diagnostics.AddRendered(rendered);
  if (!m.ok() && m.error().kind == ErrorKind::kUser)
    return diagnostics.Reported(m.error());
  return m;
}

}  // namespace

Result<sema::ModulePlan> Analyze(const Options& o, const TargetUnits* units,
                                 model::Module* module,
                                 Diagnostics& diagnostics,
                                 std::vector<std::string>* dependencies) {
  if (Status s = RequireUtf8(o.sources); !s.ok()) return s.error();
  Result<model::Module> m = ReadModule(o, diagnostics, dependencies);
  if (!m.ok()) return m.error();
  if (Status s = RequireUtf8(m.value()); !s.ok()) return s.error();
  *module = std::move(m).value();
  diag::DiagnosticSink diags;
  Result<sema::ModulePlan> plan = sema::Analyze(*module, diags);
  if (plan.ok() && units != nullptr) {
    targets::BuildSettings settings;
    settings.targets = o.targets;
    for (const std::unique_ptr<targets::TargetUnit>& unit : *units)
      unit->Check(*module, settings, diags);
  }
  diagnostics.Add(diags);
  if (diags.has_errors()) return diagnostics.ErrorsIn(diags);
  if (module->kernels.empty())
    return Error::User(fmt::format(
        "no kernels found in {}: mark __global__ kernels with KC_GRID and host "
        "kernels with KC_KERNEL",
        fmt::join(o.sources, ", ")));
  return plan;
}

}  // namespace kernelc::driver
