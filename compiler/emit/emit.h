// The emitters: from the analyzed model to generated files. Emitters never
// touch the filesystem: they return path -> contents, and the driver writes.
#ifndef KERNELC_COMPILER_EMIT_EMIT_H_
#define KERNELC_COMPILER_EMIT_EMIT_H_

#include <map>
#include <string>
#include <vector>

#include "compiler/sema/sema.h"
#include "compiler/util/status.h"

namespace kernelc::emit {

// path (relative, '/'-separated) -> contents. Ordered, so iteration is
// deterministic.
using FileMap = std::map<std::string, std::string>;

struct BuildInfo {
  std::string version;       // kernelc's version
  std::string package;       // Python package name
  std::string content_hash;  // hex SHA-256 of everything that shapes output
  std::string ffi_api;       // XLA FFI API version of the headers, "0.2"
  std::string jaxlib_floor;  // jaxlib those headers come from, "0.8.1"
  std::vector<std::string> targets;  // "cpu", ...
};

struct Output {
  FileMap package;  // files of the Python package directory
  FileMap build;    // C++ sources compiled into the package's library
};

// The kernels' CPU entry points for one source file, compiled with it:
// build/<stem>.host.cc. `source_index` indexes module->sources.
std::string HostSourceName(const std::string& source, int source_index);

Result<Output> EmitPackage(const sema::ModulePlan& plan, const BuildInfo& info);

}  // namespace kernelc::emit

#endif  // KERNELC_COMPILER_EMIT_EMIT_H_
