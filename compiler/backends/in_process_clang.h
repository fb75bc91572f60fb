// Clang and LLD inside kernelc: what `clang++ ARGS` does, without a
// compiler installed and without starting a process. Clang's driver turns
// the arguments into its jobs; each compile job runs through a
// CompilerInstance (what clang's -cc1 does), and the link job through LLD's
// ELF driver, so a compile and a link read the same headers and libraries,
// from the same search paths, as the clang++ of LLVM 19 would.
#ifndef KERNELC_COMPILER_BACKENDS_IN_PROCESS_CLANG_H_
#define KERNELC_COMPILER_BACKENDS_IN_PROCESS_CLANG_H_

#include <string>
#include <vector>

namespace kernelc::backends {

// The headers and libraries that the Clang inside kernelc compiles and
// links with.
struct ClangRoot {
  // The clang++ that Clang's driver is told it is; it need not exist. The
  // driver reads its name (clang++: C++, linked with libstdc++).
  std::string clang;
  // Clang's resource directory (its include/ has stddef.h and the
  // intrinsics headers).
  std::string resource_dir;
  // The root whose usr/include and usr/lib the compile and the link search
  // (Clang's --sysroot). Empty: this machine's own root. A bundled sysroot
  // has the headers, the C runtime's objects and static libraries, and
  // linker scripts that name the shared runtime libraries (libc.so.6,
  // libstdc++.so.6, ...) by soname: a link finds those where this
  // machine's dynamic loader does, so the package's library is linked
  // against the libraries it will load.
  std::string sysroot;
  // A file that stands for the headers and libraries in the build cache's
  // key: the bundled sysroot's manifest, or empty when the root is this
  // machine's (then kernelc's own executable stands for the Clang in it).
  std::string manifest;
};

// kernelc's bundled toolchain when it has one: the directory `toolchain`
// beside the directory of kernelc's executable, with Clang's resource
// headers (toolchain/clang) and a sysroot (toolchain/sysroot, described by
// toolchain/manifest.json), as the kernelc distribution installs it. Else
// LLVM 19's resource directory and this machine's root, as in a build from
// source.
ClangRoot FindClangRoot();

struct ToolRun {
  int code = 0;        // 0 on success, like a process's exit status
  std::string output;  // the diagnostics, as clang++ and ld.lld print them
};

// Runs `clang++ args...` in this process with `root`'s headers and
// libraries: compiles (-c), precompiles headers (-x c++-header) and links
// (-shared) as clang++ does, with LLD as the linker. Thread-safe; links run one
// at a time, as LLD keeps global state. A crash in Clang or LLD is reported as
// a failed run, not passed on to the process.
ToolRun RunClangInProcess(const ClangRoot& root,
                          const std::vector<std::string>& args);

// "clang version 19.1.7 (in process)": the Clang inside kernelc.
std::string InProcessClangVersion();

}  // namespace kernelc::backends

#endif  // KERNELC_COMPILER_BACKENDS_IN_PROCESS_CLANG_H_
