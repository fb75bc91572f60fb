// The frontend: reads annotated C++/CUDA sources with Clang (libTooling) and
// builds the kernel model. It never emits code. C++ errors and kernelc's
// annotation errors are rendered clang-style through clang's diagnostics.
#ifndef KERNELC_COMPILER_FRONTEND_FRONTEND_H_
#define KERNELC_COMPILER_FRONTEND_FRONTEND_H_

#include <string>
#include <string_view>
#include <vector>

#include "compiler/model/model.h"
#include "compiler/util/status.h"

namespace kernelc::frontend {

struct VirtualFile {
  std::string path;  // absolute, in the in-memory file system
  std::string_view contents;
};

struct Options {
  std::vector<std::string> include_dirs;  // -I
  std::vector<std::string> defines;       // -D NAME or NAME=VALUE
  // Headers kernelc provides (kernelc.h, ...) and the directories to put on
  // the system include path for them.
  std::vector<VirtualFile> virtual_files;
  std::vector<std::string> virtual_include_dirs;
};

// Options with kernelc's embedded headers mapped in.
Options DefaultOptions();

// Parses each source as C++17 (.cu files too, with kernelc.h's definitions
// of CUDA's built-ins), reads the annotations and parameter types of every
// kernel, and returns the model. Every problem found in any source is
// rendered into *diagnostics before returning; the result is then a user
// error. An internal error means Clang could not be set up.
Result<model::Module> ParseSources(const std::vector<std::string>& sources,
                                   const Options& options,
                                   std::string* diagnostics);

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_FRONTEND_H_
