// A target (model::Target) as a unit: what kernelc does differently for
// one platform that the kernels run on, behind one interface. The driver
// makes one unit per target of a build (it names each implementation; there
// is no registry) and calls each in turn: its checks on the analyzed
// kernels, its part of the build cache's key and of the content hash, its
// compile steps, and its part of the generated package (its
// emit::PlatformShim).
#ifndef KERNELC_COMPILER_TARGETS_TARGET_H_
#define KERNELC_COMPILER_TARGETS_TARGET_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/backends/host_backend.h"
#include "compiler/cache/build_cache.h"
#include "compiler/diag/engine.h"
#include "compiler/emit/platform_shim.h"
#include "compiler/model/artifacts.h"
#include "compiler/model/model.h"
#include "compiler/model/target.h"
#include "compiler/sema/sema.h"
#include "compiler/util/progress.h"
#include "compiler/util/status.h"

namespace kernelc::targets {

// The build's options as the targets read them.
struct BuildSettings {
  std::vector<model::Target> targets;     // all of the build's, sorted
  std::vector<std::string> include_dirs;  // user -I, absolute
  std::vector<std::string> defines;       // user -D
  // The cuda target: "sm_80,sm_90" (empty: its default), and NVRTC's
  // --use_fast_math and --generate-line-info.
  std::string cuda_archs;
  bool use_fast_math = false;
  bool lineinfo = false;
  // Receives the stages of the compiles, when set.
  Progress* progress = nullptr;
};

// Named fields of a digest, in order.
using IdentityFields = std::vector<std::pair<std::string, std::string>>;

// One unit per target and build: a unit keeps what it learns in one step
// (the toolchain the cache key names) for the next.
class TargetUnit {
 public:
  virtual ~TargetUnit() = default;

  virtual model::Target target() const = 0;

  // Reports to `diags` each analyzed kernel that cannot be built for this
  // target in a build for `settings.targets`.
  virtual void Check(const model::Module& module, const BuildSettings& settings,
                     diag::DiagnosticEngine& diags) const = 0;

  // Adds this target's toolchain to the build cache's key, identified
  // without running or loading it. False when it cannot be identified: the
  // build then goes without the cache.
  virtual bool AddToCacheKey(cache::KeyBuilder& key) = 0;

  // Compiles the kernels of plan.module before the package is emitted,
  // into this target's part of `info`. Problems in the sources go to
  // `diags`, with a user error.
  virtual Status CompileKernels(const sema::ModulePlan& plan,
                                const BuildSettings& settings,
                                model::BuildInfo* info,
                                diag::DiagnosticEngine& diags) = 0;

  // This target's part of the content hash, from what CompileKernels
  // produced: fields that do not depend on the machine.
  virtual IdentityFields ContentHashFields(
      const model::BuildInfo& info) const = 0;

  // The generated files among `generated` (path -> text, the package's
  // build sources) that compile the user's sources into the package's
  // library for this target, in link order. `module` names its sources as
  // the output does; `source_paths` says where each is read.
  virtual std::vector<backends::HostBuild::UserUnit> HostUnits(
      const model::Module& module, const std::vector<std::string>& source_paths,
      const std::map<std::string, std::string>& generated) const = 0;

  // The generated package's handlers for this target, and their
  // registration. The shim lives as long as the unit.
  virtual const emit::PlatformShim& shim() const = 0;

  // Whether the toolchain that AddToCacheKey named compiled the kernels (it
  // may not have, when it could not be loaded and another was found): a
  // build is cached only then.
  virtual bool CompiledWithKeyedToolchain() const { return true; }

  // The include directories of this target's toolchain, when its compiler
  // reports no dependencies (NVRTC): a cache entry records, by identity,
  // every header under them that the sources can reach. Empty otherwise.
  virtual std::vector<std::string> UnreportedIncludeDirs() const { return {}; }
};

}  // namespace kernelc::targets

#endif  // KERNELC_COMPILER_TARGETS_TARGET_H_
