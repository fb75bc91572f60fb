// The C++ frontend: reads kernel sources with Clang's libTooling and builds
// the model from their kernelc annotations and parameter types. It reads and
// diagnoses; it never emits code, and expressions (shapes, grid, derived
// values) are kept verbatim for a later stage to parse.
#ifndef KERNELC_COMPILER_FRONTEND_FRONTEND_H_
#define KERNELC_COMPILER_FRONTEND_FRONTEND_H_

#include <string>
#include <string_view>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/model/declared.h"
#include "compiler/model/model.h"
#include "compiler/util/status.h"

namespace kernelc::frontend {

// A file that exists only in memory for the duration of a parse. A relative
// path is taken relative to the process's working directory.
struct VirtualFile {
  std::string path;
  std::string_view contents;  // copied by ParseSources
};

struct Options {
  std::vector<std::string> include_dirs;  // -I, searched first
  std::vector<std::string> defines;       // -D: "NAME" or "NAME=VALUE"
  // Headers kernelc provides (kernelc.h, the cuda_fp16.h stand-in, ...),
  // mapped into an in-memory file system over the real one, and their
  // directories: kernelc.h's, the stand-ins for CUDA's headers (read as the
  // CPU sees a source) and the shims for Clang's CUDA mode. Both dialects
  // search kernelc's directories before the user's. Sources may be virtual
  // files too.
  std::vector<VirtualFile> virtual_files;
  std::string kernelc_include_dir;  // e.g. "/__kernelc__/include"
  std::string host_include_dir;     // e.g. "/__kernelc__/host_include"
  std::string cuda_shim_dir;        // e.g. "/__kernelc__/cuda_shim"
  // How .cu sources are read. kHost: as C++ with kernelc's host definitions
  // of CUDA's built-ins and its stand-ins for <cuda_runtime.h>,
  // <cuda_fp16.h> and <cuda_bf16.h> (the view of the cpu target, which
  // compiles them the same way). kCudaDevice: as CUDA device code against the
  // CUDA toolkit's own headers in `cuda_include_dirs` (the view of the cuda
  // target alone: any CUDA header works, cooperative groups and CUB
  // included).
  enum class Dialect { kHost, kCudaDevice };
  Dialect dialect = Dialect::kHost;
  // The CUDA toolkit's include directories (include/ and include/cccl/).
  // kCudaDevice reads the toolkit's headers from them; kHost reports an
  // #include that resolves into them, since those headers need a CUDA
  // compiler.
  std::vector<std::string> cuda_include_dirs;
  // The GPU architecture kCudaDevice parses for (__CUDA_ARCH__): 80 is
  // sm_80.
  int cuda_arch = 80;
  // Read each source as if it began with #include <kernelc.h>: a JSON
  // spec's source, which the CPU entry points compile after kernelc.h (for
  // its __global__ and CUDA's built-ins) and need not include it itself.
  bool include_kernelc_h = false;
  // Clang's resource directory and the root whose headers the sources see
  // (Clang's -resource-dir and --sysroot), as the CPU backend compiles
  // them. Empty: LLVM 19's resource directory, and this machine's root.
  std::string resource_dir;
  std::string sysroot;
  // Where kernelc.h is kept precompiled for sources read as the CPU sees
  // them that open with it (a file per set of flags, made by the first
  // parse that needs it, remade when a header it read changes): a
  // directory of kernelc's (the build cache's prelude directory). Empty:
  // every source is read whole. Either way the model is the same.
  std::string prelude_dir;
  // When set, receives the files the sources read, sorted, without system
  // headers (kernelc's embedded headers among them): the sources and the
  // headers they include, named as Clang found them (relative paths stay
  // relative to the working directory). Filled only on success.
  std::vector<std::string>* dependencies = nullptr;
};

// Options with kernelc's embedded user headers mapped under /__kernelc__/,
// in the kHost dialect.
Options DefaultOptions();

// The version of the Clang that reads the sources ("14.0.6"): what it
// accepts shapes the model, so it is part of a build's identity.
std::string ClangVersion();

// Parses each source as C++17 in the options' dialect (kHost, in effect
// `clang -fsyntax-only -x c++ -std=c++17 -D__KERNELC_FRONTEND__`; kCudaDevice,
// Clang's CUDA mode for the device side), reads the annotations and
// parameter types of every exported kernel and returns the model:
// Module::sources as given, kernels in source order. Both dialects give the
// same model for a source that both can read.
//
// Every problem found, Clang's own errors in the sources and kernelc's errors
// in the annotations (from the catalogue), is reported to `diags` in the
// order found: both through Clang's DiagnosticsEngine and a
// DiagnosticAdapter. All errors of all
// kernels in all sources are reported before returning. File names in
// diagnostics and in the model are the paths as given (a relative path
// stays relative). Clang's warnings are left out: the backends compile the
// sources and report those.
//
// Returns Error::Reported() when an error was reported, and
// Error::Internal for a failure that is not the user's (Clang could not be
// set up).
Result<model::Module> ParseSources(const std::vector<std::string>& sources,
                                   const Options& options,
                                   diag::DiagnosticEngine& diags);

// Reads what the sources of `spec`, the model of a JSON spec, define of its
// kernels, which need no annotations there (model/declared.h): parallel to
// spec.kernels. Each source (each kernel's `source`, once) is parsed as
// ParseSources parses it, and Clang's errors in it are reported to `diags`
// (Error::Reported()). A kernel the source does not define is not an error
// here: its DeclaredKernel says so.
Result<std::vector<model::DeclaredKernel>> ReadDeclarations(
    const model::Module& spec, const Options& options,
    diag::DiagnosticEngine& diags);

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_FRONTEND_H_
