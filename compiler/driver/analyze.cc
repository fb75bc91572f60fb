#include "compiler/driver/analyze.h"

#include <fmt/format.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <initializer_list>
#include <memory>
#include <set>
#include <utility>

#include "compiler/driver/frontend_options.h"
#include "compiler/driver/utf8.h"
#include "compiler/frontend/frontend.h"
#include "compiler/model/json.h"
#include "compiler/sema/source_check.h"
#include "compiler/util/input_file.h"

namespace kernelc::driver {

namespace {

using diag::Id;

bool HasExtension(const std::string& path,
                  std::initializer_list<llvm::StringRef> extensions) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  for (llvm::StringRef e : extensions)
    if (ext == e) return true;
  return false;
}

// Reports why an input file cannot be used, at `at`; false then.
bool UsableInput(const std::string& path, const InputFile& f,
                 const diag::SourceLoc& at, diag::DiagnosticEngine& diags) {
  switch (f.problem) {
    case InputFile::Problem::kNone:
      return true;
    case InputFile::Problem::kMissing:
      diags.Report<Id::kNoSuchFile>(at, path);
      break;
    case InputFile::Problem::kNotRegular:
      diags.Report<Id::kInputNotRegular>(at, path);
      break;
    case InputFile::Problem::kTooLarge:
      diags.Report<Id::kInputTooLarge>(at, path, f.size, kMaxInputBytes);
      break;
    case InputFile::Problem::kUnreadable:
      diags.Report<Id::kCannotReadBecause>(at, path, f.error);
      break;
  }
  return false;
}

std::string RealPath(const std::string& path) {
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(path, real)) return std::string();
  return std::string(real);
}

// A source that the spec `spec` names, before anything reads it: a .cu or
// .cc file in the spec's directory or below it (where its symbolic links
// lead, too; or in the directory where the spec's own link leads), and a
// regular file within the size limit. A spec, which may
// come from elsewhere, so cannot make kernelc read other files.
// A kernel's PTX (`ptx`) is held to the same rules, as a .ptx file.
bool UsableSpecSource(const std::string& source, const std::string& spec,
                      const diag::SourceLoc& at, diag::DiagnosticEngine& diags,
                      bool ptx = false) {
  if (!llvm::sys::fs::exists(source)) {
    diags.Report<Id::kSpecSourceMissing>(at, source);
    return false;
  }
  if (ptx && !HasExtension(source, {".ptx"})) {
    diags.Report<Id::kSpecPtxNotPtx>(at, source);
    return false;
  }
  if (!ptx && !HasExtension(source, {".cu", ".cc"})) {
    diags.Report<Id::kSpecSourceNotCpp>(at, source);
    return false;
  }
  llvm::StringRef dir = llvm::sys::path::parent_path(spec);
  std::string real_source = RealPath(source);
  // Whether the source really lies in `dir` or below it.
  auto within = [&real_source](llvm::StringRef dir) {
    std::string real_dir = RealPath(dir.empty() ? "." : dir.str());
    return !real_dir.empty() && !real_source.empty() &&
           llvm::StringRef(real_source)
               .starts_with(real_dir == "/" ? real_dir : real_dir + "/");
  };
  // The directory the spec is named in, or the one it really is in: Bazel's
  // sandboxes and runfiles link each input from where it is, so a spec and
  // its sources are links in one directory to files in another.
  const std::string real_spec = RealPath(spec);
  if (!within(dir) && !within(llvm::sys::path::parent_path(real_spec))) {
    diags.Report<Id::kSpecSourceOutside>(at, source,
                                         dir.empty() ? "." : dir.str());
    return false;
  }
  return UsableInput(source, CheckInputFile(source), at, diags);
}

// The model of JSON specs: their kernels, with the sources they name in
// first-use order, each checked against what its source declares.
Result<model::Module> ReadSpecs(const Options& o,
                                const std::vector<std::string>& specs,
                                diag::DiagnosticEngine& diags,
                                std::vector<std::string>* dependencies,
                                const std::string& prelude_dir) {
  model::Module m;
  const int errors_before = diags.error_count();
  // Where each kernel is in its spec; the places must stay where they are.
  std::vector<std::unique_ptr<model::JsonPlaces>> places;
  std::vector<sema::SpecPlace> where;
  for (const std::string& spec : specs) {
    InputFile f = ReadInputFile(spec);
    if (!UsableInput(spec, f, {}, diags)) continue;
    places.push_back(std::make_unique<model::JsonPlaces>());
    Result<model::Module> part =
        model::FromJson(f.contents, spec, diags, places.back().get());
    if (!part.ok()) continue;
    if (part.value().kernels.empty())
      diags.Report<Id::kSpecWithoutKernels>(places.back()->At("$.kernels"));
    for (size_t i = 0; i < part.value().kernels.size(); ++i) {
      where.push_back({places.back().get(), fmt::format("$.kernels[{}]", i)});
      m.kernels.push_back(std::move(part.value().kernels[i]));
    }
  }
  if (diags.error_count() > errors_before) return Error::Reported();
  std::set<std::string> seen, seen_ptx;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const model::Kernel& k = m.kernels[i];
    const std::string& spec = where[i].places->file();
    if (k.ptx && seen_ptx.insert(k.ptx->file).second)
      UsableSpecSource(k.ptx->file, spec,
                       where[i].places->At(where[i].path + ".ptx.file"), diags,
                       /*ptx=*/true);
    if (k.source.empty() || !seen.insert(k.source).second) continue;
    m.sources.push_back(k.source);
    UsableSpecSource(k.source, spec,
                     where[i].places->At(where[i].path + ".source"), diags);
  }
  if (diags.error_count() > errors_before) return Error::Reported();
  // Kernels with only PTX have no source to check them against: the cuda
  // target checks their parameters against the PTX's .entry instead.
  model::Module with_source;
  std::vector<sema::SpecPlace> with_source_where;
  std::vector<size_t> index;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    if (m.kernels[i].source.empty()) continue;
    with_source.kernels.push_back(m.kernels[i]);
    with_source_where.push_back(where[i]);
    index.push_back(i);
  }
  with_source.sources = m.sources;
  if (with_source.kernels.empty()) return m;
  frontend::Options fo = FrontendOptions(o);
  fo.prelude_dir = prelude_dir;
  fo.dependencies = dependencies;
  Result<std::vector<model::DeclaredKernel>> declared =
      frontend::ReadDeclarations(with_source, fo, diags);
  if (!declared.ok()) return declared.error();
  if (Status s = sema::CheckAgainstSources(with_source, declared.value(),
                                           with_source_where, diags);
      !s.ok())
    return s.error();
  // A spec states no guard, and the block-level features it states are
  // those of the body: the source's body decides, as for annotations (the
  // CPU target runs a kernel with block features under the block executor).
  for (size_t i = 0; i < index.size(); ++i) {
    model::Kernel& k = m.kernels[index[i]];
    model::DeclaredKernel& d = declared.value()[i];
    if (k.kind != model::KernelKind::kGlobal || !d.global) continue;
    k.guard = d.guard;
    k.block_features = std::move(d.block_features);
    k.extern_shared = std::move(d.extern_shared);
  }
  return m;
}

// The model of the sources, without the checks of its text.
Result<model::Module> ReadModule(const Options& o,
                                 diag::DiagnosticEngine& diags,
                                 std::vector<std::string>* dependencies,
                                 Progress* progress,
                                 const std::string& prelude_dir) {
  std::vector<std::string> json_specs, cpp_sources;
  for (const std::string& s : o.sources) {
    if (HasExtension(s, {".json"})) {
      json_specs.push_back(s);
    } else if (HasExtension(s, {".cu", ".cc"})) {
      cpp_sources.push_back(s);
    } else {
      diags.Report<Id::kNotASource>({}, s);
      return Error::Reported();
    }
  }
  if (!json_specs.empty() && !cpp_sources.empty()) {
    diags.Report<Id::kSourcesAndSpecs>({});
    return Error::Reported();
  }
  if (cpp_sources.empty()) return ReadSpecs(o, json_specs, diags, dependencies, prelude_dir);
  for (const std::string& s : cpp_sources)
    if (!UsableInput(s, CheckInputFile(s), {}, diags))
      return Error::Reported();
  frontend::Options fo = FrontendOptions(o);
  fo.prelude_dir = prelude_dir;
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
                                 Progress* progress,
                                 const std::string& prelude_dir) {
  if (Status s = RequireUtf8(o.sources, diags); !s.ok()) return s.error();
  Result<model::Module> m =
      ReadModule(o, diags, dependencies, progress, prelude_dir);
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
    // One source is where the error is; of several, none is.
    diag::SourceLoc where;
    if (o.sources.size() == 1) where.file = o.sources[0];
    diags.Report<Id::kNoKernels>(where, fmt::join(o.sources, ", "));
    return Error::Reported();
  }
  return plan;
}

}  // namespace kernelc::driver
