// A package's generated files, from the sources to the emitters' output.
#ifndef KERNELC_COMPILER_DRIVER_GENERATE_H_
#define KERNELC_COMPILER_DRIVER_GENERATE_H_

#include <string>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/driver/options.h"
#include "compiler/driver/target_units.h"
#include "compiler/emit/generator.h"
#include "compiler/model/artifacts.h"
#include "compiler/model/model.h"
#include "compiler/targets/target.h"

namespace kernelc::driver {

struct Generated {
  // The model, naming its files as the output does (OutputNames).
  model::Module module;
  // Where each of module.sources is read.
  std::vector<std::string> source_paths;
  model::BuildInfo info;
  emit::Output output;
};

// What the targets read of options `o`.
targets::BuildSettings TargetSettings(const Options& o);

// Analyzes the sources, checks that their names make distinct Python
// names, compiles the kernels for each target that compiles before
// emission (cuda), names the package's files, computes the content hash and
// emits. `o` as resolved (ResolvePackageName, CheckOptions); `units` those
// of o.targets. What is wrong with the input is reported to `diags`
// (Error::Reported()). For C++ sources, `dependencies` (when set) receives
// the files Clang's frontend read. `progress` (when set) receives the
// stages: the frontend, each target's compiles. `prelude_dir`: where the
// frontend keeps kernelc.h precompiled (Analyze).
Result<Generated> Generate(const Options& o, TargetUnits& units,
                           diag::DiagnosticEngine& diags,
                           std::vector<std::string>* dependencies = nullptr,
                           Progress* progress = nullptr,
                           const std::string& prelude_dir = "");

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_GENERATE_H_
