// kernelc's pipelines, for every front end: the command line (a thin shell
// over these), and in-process front ends. Each takes the options and the
// diagnostics engine of the call, which collects everything it reports, and
// returns what it did; it neither prints nor exits. Errors in the user's
// input are diagnostics in the engine, and the result is then
// Error::Reported(); failures of kernelc or a toolchain are internal errors
// (Error::Internal), which the front end shows itself.
#ifndef KERNELC_COMPILER_DRIVER_DRIVER_H_
#define KERNELC_COMPILER_DRIVER_DRIVER_H_

#include <optional>
#include <string>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/driver/options.h"
#include "compiler/util/progress.h"
#include "compiler/util/status.h"

namespace kernelc::driver {

struct BuildResult {
  std::string package;      // the package's name
  std::string package_dir;  // o.out_dir + "/" + package
  std::string library;      // the library's file name, "_kernelc_<hash>.so"
  // Whether the package came from the build cache (then no compiler ran).
  bool cache_hit = false;
  // The package's files that this build wrote (relative to package_dir,
  // sorted): those whose contents changed. Others are left untouched.
  std::vector<std::string> written;
};

// `kernelc build`: compiles o.sources into the Python package
// o.out_dir/PKG, through the build cache unless o.no_cache. Everything is
// built in a scratch directory beside the package, which is gone when this
// returns; a failed build leaves an earlier package as it was. When set,
// `progress` receives each stage as it finishes: the frontend, NVRTC for
// each architecture, each host compile and the link, or the cache hit.
Result<BuildResult> Build(const Options& o, diag::DiagnosticEngine& diags,
                          Progress* progress = nullptr);

struct EmitResult {
  std::string content_hash;
  // The files written, relative to o.out_dir: package/... and build/...
  std::vector<std::string> written;
};

// `kernelc emit`: the generated sources of a build, without compiling them:
// o.out_dir/package (the Python package but its library) and
// o.out_dir/build (the C++ compiled into the library, and the CUDA images).
Result<EmitResult> Emit(const Options& o, diag::DiagnosticEngine& diags);

struct InspectResult {
  // The model as canonical JSON; for a package directory, its manifest
  // (kernelc.json, indented by two).
  std::string json;
};

// `kernelc inspect`: the model of o.sources, read as a build for o.targets
// reads them (kernels that a target cannot build included), or the manifest
// of a built package when o.sources is one package directory.
Result<InspectResult> Inspect(const Options& o, diag::DiagnosticEngine& diags);

struct WheelResult {
  std::string path;  // the wheel written into o.out_dir
  // When the wheel was built from sources: that build (in a scratch
  // directory, gone by now).
  std::optional<BuildResult> build;
};

// `kernelc wheel`: a wheel (PEP 427) of a built package directory, or of
// o.sources built first (through Build, with the same options and
// `progress`). Reproducible: entries are dated $SOURCE_DATE_EPOCH, else
// 1980-01-01.
Result<WheelResult> Wheel(const Options& o, diag::DiagnosticEngine& diags,
                          Progress* progress = nullptr);

// `kernelc --version`: kernelc's version, then the NVRTC that the cuda
// target would use (version and path) or why there is none.
std::string VersionText();

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_DRIVER_H_
