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

using diag::Id;

// The model of JSON specs: their kernels, with the sources they name, in
// first-use order.
Result<model::Module> ReadSpecs(const std::vector<std::string>& specs,
                                diag::DiagnosticEngine& diags) {
  model::Module m;
  const int errors_before = diags.error_count();
  for (const std::string& spec : specs) {
    std::optional<std::string> text = ReadFile(spec);
    if (!text) {
      diags.Report<Id::kCannotRead>({}, spec);
      return Error::Reported();
    }
    Result<model::Module> part = model::FromJson(*text, spec, diags);
    if (!part.ok()) continue;
    for (model::Kernel& k : part.value().kernels)
      m.kernels.push_back(std::move(k));
  }
  if (diags.error_count() > errors_before) return Error::Reported();
  std::set<std::string> seen;
  for (const model::Kernel& k : m.kernels)
    if (seen.insert(k.source).second) m.sources.push_back(k.source);
  for (const std::string& s : m.sources) {
    if (!llvm::sys::fs::exists(s)) {
      diags.Report<Id::kSpecSourceMissing>({}, s);
      return Error::Reported();
    }
  }
  return m;
}

// The model of the sources, without the checks of its text.
Result<model::Module> ReadModule(const Options& o,
                                 diag::DiagnosticEngine& diags,
                                 std::vector<std::string>* dependencies,
                                 Progress* progress) {
  std::vector<std::string> json_specs, cpp_sources;
  for (const std::string& s : o.sources)
    (llvm::StringRef(s).ends_with(".json") ? json_specs : cpp_sources)
        .push_back(s);
  if (!json_specs.empty() && !cpp_sources.empty()) {
    diags.Report<Id::kSourcesAndSpecs>({});
    return Error::Reported();
  }
  if (cpp_sources.empty()) return ReadSpecs(json_specs, diags);
  for (const std::string& s : cpp_sources) {
    if (!llvm::sys::fs::exists(s)) {
      diags.Report<Id::kNoSuchFile>({}, s);
      return Error::Reported();
    }
  }
  frontend::Options fo = FrontendOptions(o);
  fo.dependencies = dependencies;
  Progress::Stage stage(progress, "frontend",
                        fmt::format("{}", fmt::join(cpp_sources, ", ")));
  Result<model::Module> m = frontend::ParseSources(cpp_sources, fo, diags);
  if (m.ok()) stage.Done();
  return m;
}

}  // namespace

Result<sema::ModulePlan> Analyze(const Options& o, const TargetUnits* units,
                                 model::Module* module,
                                 diag::DiagnosticEngine& diags,
                                 std::vector<std::string>* dependencies,
                                 Progress* progress) {
  if (Status s = RequireUtf8(o.sources, diags); !s.ok()) return s.error();
  Result<model::Module> m = ReadModule(o, diags, dependencies, progress);
  if (!m.ok()) return m.error();
  if (Status s = RequireUtf8(m.value(), diags); !s.ok()) return s.error();
  *module = std::move(m).value();
  const int errors_before = diags.error_count();
  Result<sema::ModulePlan> plan = sema::Analyze(*module, diags);
  if (plan.ok() && units != nullptr) {
    targets::BuildSettings settings;
    settings.targets = o.targets;
    for (const std::unique_ptr<targets::TargetUnit>& unit : *units)
      unit->Check(*module, settings, diags);
  }
  if (diags.error_count() > errors_before) return Error::Reported();
  if (!plan.ok()) return plan.error();
  if (module->kernels.empty()) {
    diags.Report<Id::kNoKernels>({}, fmt::join(o.sources, ", "));
    return Error::Reported();
  }
  return plan;
}

}  // namespace kernelc::driver
