// Reading the kernels of a build and checking them.
#ifndef KERNELC_COMPILER_DRIVER_ANALYZE_H_
#define KERNELC_COMPILER_DRIVER_ANALYZE_H_

#include <string>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/driver/options.h"
#include "compiler/driver/target_units.h"
#include "compiler/model/model.h"
#include "compiler/sema/sema.h"
#include "compiler/util/progress.h"
#include "compiler/util/status.h"

namespace kernelc::driver {

// Reads the model from o.sources, C++ sources (annotations, read as
// FrontendOptions says) or JSON specs, and analyzes it into *module and
// the returned plan, which points into *module. The targets' units check
// the kernels too, unless `units` is null (inspect describes kernels that
// a target cannot build). What is wrong is reported to `diags`
// (Error::Reported()). For C++ sources, `dependencies` (when set) receives
// the files Clang read, and `progress` (when set) the frontend's stage.
// `prelude_dir`: where the frontend keeps kernelc.h precompiled
// (frontend::Options::prelude_dir); empty: nowhere.
Result<sema::ModulePlan> Analyze(const Options& o, const TargetUnits* units,
                                 model::Module* module,
                                 diag::DiagnosticEngine& diags,
                                 std::vector<std::string>* dependencies,
                                 Progress* progress = nullptr,
                                 const std::string& prelude_dir = "");

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_ANALYZE_H_
