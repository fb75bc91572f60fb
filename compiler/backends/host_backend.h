// The CPU backend: compiles each kernel source together with its generated
// entry points (CUDA built-ins provided by kernelc/host.h, kernels inlined
// into their grid loops), compiles the XLA FFI shim, and links them into the
// package's shared library: with the Clang and LLD inside kernelc, or with
// a C++ compiler driver that $KERNELC_CXX names.
#ifndef KERNELC_COMPILER_BACKENDS_HOST_BACKEND_H_
#define KERNELC_COMPILER_BACKENDS_HOST_BACKEND_H_

#include <map>
#include <string>
#include <vector>

#include "compiler/backends/in_process_clang.h"
#include "compiler/diag/engine.h"
#include "compiler/util/progress.h"
#include "compiler/util/status.h"

namespace kernelc::backends {

struct HostToolchain {
  // $KERNELC_CXX: a C++ compiler driver (clang++ or g++), run as a process
  // for each compile and the link. Empty: Clang and LLD inside kernelc, in
  // process, with `root`'s headers and libraries.
  std::string cxx;
  ClangRoot root;
};

// The compiler of the CPU target: $KERNELC_CXX, a path or a name to find on
// PATH, else the Clang inside kernelc. Internal error when $KERNELC_CXX
// names no executable.
Result<HostToolchain> FindHostToolchain();

// The file that identifies the compiler FindHostToolchain would use, for
// the build cache, which must not start a compiler: $KERNELC_CXX's
// executable, the bundled sysroot's manifest, or kernelc's own executable
// when the Clang in it compiles against this machine's root. Empty when
// $KERNELC_CXX names no executable.
std::string HostCompilerFile();

struct HostBuild {
  std::string work_dir;      // scratch directory, already created; absolute
  std::string library_path;  // where to write the shared library
  std::vector<std::string> include_dirs;  // user -I, absolute
  std::vector<std::string> defines;       // user -D
  // A generated C++ source: its text, and the #include lines it opens
  // with, as the text has them (emit::Output::preludes), which the Clang
  // inside kernelc compiles once and keeps precompiled under prelude_dir.
  // No prelude: compiled whole.
  struct Source {
    std::string text;
    std::string prelude;
  };
  // The generated C++ sources, path under work_dir -> source: the XLA FFI
  // shim (shim.cc), the CUDA target's embedded binaries (cuda_images.cc),
  // the CPU's block executor (block_exec.cc, linked with Boost.Context's
  // archive, which kernelc carries), and the files that compile the user's
  // sources.
  std::map<std::string, Source> sources;
  // The files of `sources` that include a user source (the kernels' CPU
  // entry points), in link order, each with where that source is read.
  // They are compiled as the user's code: with the -I and -D above, and
  // failures are the user's to fix.
  struct UserUnit {
    std::string file;
    std::string source_path;
    // When set, what is compiled in place of the source (and of the user
    // headers it includes, by the name their #include spells): the texts
    // with the host code of a whole .cu file left out
    // (model::KernelText). Lines and columns stay the files'.
    std::string text;
    std::vector<std::pair<std::string, std::string>> headers;
  };
  std::vector<UserUnit> user_units;
  // When set, receives the files the user sources read (the sources and
  // the headers they include outside kernelc's own and the system's),
  // absolute, sorted, from the compiler's dependency output.
  std::vector<std::string>* dependencies = nullptr;
  // When set, receives a stage for each compile and the link.
  Progress* progress = nullptr;
  // Where the preludes of `sources` are kept precompiled, a file per
  // prelude and flags, made by the first build that needs it: a directory
  // that belongs to kernelc and its compiler (named by their identity),
  // shared by every build with them. Empty: the sources are compiled
  // whole. Only the Clang inside kernelc uses it; a precompiled header it
  // cannot make or load leaves the source compiled whole, as without one.
  std::string prelude_dir;
};

// Writes kernelc's headers and the generated sources under work_dir,
// compiles (at the same time, one per core) and links. The compiler's
// output for each user source that fails to compile, or for kernels that
// fail to link, is reported to `diags` (Error::Reported()); a failing
// toolchain, or generated code that does not compile, is an internal
// error.
Status BuildHostLibrary(const HostToolchain& tc, const HostBuild& build,
                        diag::DiagnosticEngine& diags);

}  // namespace kernelc::backends

#endif  // KERNELC_COMPILER_BACKENDS_HOST_BACKEND_H_
