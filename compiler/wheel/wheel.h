// Wheels (PEP 427) of built packages: the core metadata (name, PEP 440
// version, Requires-Python, requirements), the platform tag that auditwheel
// would give the package's library (manylinux.h), RECORD with SHA-256
// hashes, and a reproducible zip (entries sorted, one fixed timestamp, fixed
// permissions and compression).
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
  // The distribution's version: PEP 440, in any spelling that packaging
  // accepts ("v1", "1.0.0-dev"); the wheel carries its normal form.
  std::string version;
  // A platform tag ("manylinux_2_28_x86_64", "manylinux2014_x86_64",
  // "linux_x86_64"), checked against the package's library; empty: the
  // widest that the library's symbol versions allow.
  std::string platform;
  // The distribution's name (the core metadata's Name); empty: the
  // package's import name.
  std::string distribution;
  std::string summary;  // one line; empty: one that names the functions
  // More Requires-Dist lines (PEP 508), after jax, jaxlib and numpy.
  std::vector<std::string> requirements;
  std::string requires_python;  // Requires-Python: ">=3.11"
  std::string generator;        // "kernelc 0.1.0"
  // Every entry's modification time, seconds since the epoch (UTC);
  // clamped to zip's range, which starts in 1980.
  int64_t mtime = 0;
};

struct Wheel {
  // {distribution}-{version}-py3-none-{platforms}.whl, the name escaped
  // and the platform tags sorted and joined by dots (PEP 425).
  std::string file_name;
  // Archive path -> bytes, in archive order: the package's files sorted,
  // then the dist-info files, RECORD last.
  std::vector<std::pair<std::string, std::string>> entries;
  std::vector<std::string> platform_tags;  // as WHEEL lists them
};

// Checks what `options` say of the metadata before anything is built: the
// version, the distribution's name, the summary and the requirements; each
// error is reported to `diags` (Error::Reported()). The platform tag needs
// the library and is checked by MakeWheel.
Status CheckOptions(const Options& options, diag::DiagnosticEngine& diags);

// Reads a package directory that `kernelc build` wrote: every file except
// caches (__pycache__) and hidden files. A directory that is not one is
// reported to `diags` (Error::Reported()).
Result<Files> ReadPackage(const std::string& dir,
                          diag::DiagnosticEngine& diags);

// The wheel of a built package. The package name, the FFI API version and
// the jaxlib floor come from its kernelc.json manifest; the jax/jaxlib
// requirement is that floor. Reported to `diags` (Error::Reported()): the
// options' errors (CheckOptions), a package without a manifest or library,
// a platform tag that does not fit the library (ChoosePlatformTags, which
// also warns of a tag that PyPI refuses).
Result<Wheel> MakeWheel(const Files& package, const Options& options,
                        diag::DiagnosticEngine& diags);

// Writes the wheel into `dist_dir` (created if missing) through a temporary
// file and a rename. Returns the wheel's path; a directory or file that
// cannot be written is reported to `diags`.
Result<std::string> WriteWheel(const Wheel& wheel, const std::string& dist_dir,
                               int64_t mtime, diag::DiagnosticEngine& diags);

// "sha256=<urlsafe base64, no padding>" for RECORD.
std::string RecordHash(const std::string& bytes);

}  // namespace kernelc::wheel

#endif  // KERNELC_COMPILER_WHEEL_WHEEL_H_
