// Wheels (PEP 427) of built packages: the dist-info metadata, RECORD with
// SHA-256 hashes, and a reproducible zip (entries sorted, one fixed
// timestamp, fixed permissions and compression).
#ifndef KERNELC_COMPILER_WHEEL_WHEEL_H_
#define KERNELC_COMPILER_WHEEL_WHEEL_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/util/status.h"

namespace kernelc::wheel {

// Relative path (in the package directory) -> bytes.
using Files = std::map<std::string, std::string>;

struct Options {
  std::string version;    // the distribution's version (PEP 440)
  std::string platform;   // platform tag: "linux_x86_64", ...
  std::string generator;  // "kernelc 0.1.0"
  // Every entry's modification time, seconds since the epoch (UTC);
  // clamped to zip's range, which starts in 1980.
  int64_t mtime = 0;
};

struct Wheel {
  std::string file_name;  // {name}-{version}-py3-none-{platform}.whl
  // Archive path -> bytes, in archive order: the package's files sorted,
  // then the dist-info files, RECORD last.
  std::vector<std::pair<std::string, std::string>> entries;
};

// Reads a package directory that `kernelc build` wrote: every file except
// caches (__pycache__) and hidden files. A directory that is not one is
// reported to `diags` (Error::Reported()).
Result<Files> ReadPackage(const std::string& dir,
                          diag::DiagnosticEngine& diags);

// The wheel of a built package. The package name, the FFI API version and
// the jaxlib floor come from its kernelc.json manifest; the jax/jaxlib
// requirement is that floor. A bad version or platform tag, or a package
// without a manifest or its library, is reported to `diags`
// (Error::Reported()).
Result<Wheel> MakeWheel(const Files& package, const Options& options,
                        diag::DiagnosticEngine& diags);

// Writes the wheel into `dist_dir` (created if missing) through a temporary
// file and a rename. Returns the wheel's path; a directory or file that
// cannot be written is reported to `diags`.
Result<std::string> WriteWheel(const Wheel& wheel, const std::string& dist_dir,
                               int64_t mtime, diag::DiagnosticEngine& diags);

// The platform tag of this machine, as pip computes it for a wheel built
// here and not audited for manylinux: "linux_" + the machine name.
std::string HostPlatformTag();

// "sha256=<urlsafe base64, no padding>" for RECORD.
std::string RecordHash(const std::string& bytes);

}  // namespace kernelc::wheel

#endif  // KERNELC_COMPILER_WHEEL_WHEEL_H_
