// Derives every identifier kernelc emits, so that naming rules live in one
// place: C++ symbols, FFI target names, Python names (with keyword
// escaping), the library file name.
#ifndef KERNELC_COMPILER_EMIT_NAMER_H_
#define KERNELC_COMPILER_EMIT_NAMER_H_

#include <string>
#include <string_view>

namespace kernelc::emit {

class Namer {
 public:
  // `package`: the Python package name; `hash`: the build's content hash
  // (hex). Symbol and binary names carry its first 12 characters, so two
  // builds with different content never collide in one process.
  Namer(std::string package, std::string hash);

  const std::string& package() const { return package_; }
  const std::string& short_hash() const { return short_hash_; }

  // The shared library's file name: "_kernelc_<hash>.so".
  std::string LibraryFile() const;
  // The XLA FFI target name of a kernel: "<package>.<kernel>.<hash>".
  std::string FfiTarget(std::string_view kernel) const;
  // The exported handler symbol for a kernel on a platform ("cpu", "cuda").
  std::string HandlerSymbol(std::string_view kernel,
                            std::string_view platform) const;
  // The CUDA binaries (kc_cuda_module) of the source at `source_index`.
  std::string CudaModuleSymbol(int source_index) const;
  // Those of its fold program (kernelc/fold.h).
  std::string CudaFoldModuleSymbol(int source_index) const;
  // The fold program's entry for a kernel (an extern "C" __global__).
  static std::string CudaFoldEntry(std::string_view kernel);
  // The entry program's entry that calls a kernel with traced scalars, read
  // on the device (an extern "C" __global__).
  static std::string CudaEntry(std::string_view kernel);
  // The shim's accessor of the module cache of the source at
  // `source_index`, or of its fold program's (`fold`).
  static std::string CudaCacheAccessor(int source_index, bool fold);
  // The CPU entry point that runs a kernel (grid loop or host call).
  std::string CpuEntrySymbol(std::string_view kernel) const;
  // A C++ identifier for handler-local variables derived from user names.
  static std::string CppLocal(std::string_view prefix, std::string_view name);
  // A Python identifier for a user name: escapes keywords and names the
  // generated code reserves ("lambda" -> "lambda_").
  static std::string Python(std::string_view name);

  // Locals of a generated Python function for a shape symbol and a derived
  // value ("_s_n", "_d_n"); the leading underscore keeps them apart from
  // Python() names.
  static std::string PySymbol(std::string_view name);
  static std::string PyDerived(std::string_view name);
  // The attribute that says whether optional input `param` (KC_OPTIONAL)
  // is given: "kc_present_<param>".
  static std::string PresentAttr(std::string_view param);
  // The attribute that gives the number of leading dimensions of a call
  // whose tensors' shapes start with "...": "kc_leading".
  static std::string LeadingAttr();
  // The local of a generated Python function that holds the same:
  // "_present_<param>".
  static std::string PyPresent(std::string_view param);
  // The private function of a template kernel's variant, by the kernel's
  // Id ("_reduce__0"), which the op's function calls.
  static std::string PyVariant(std::string_view id);
  // Module-level private names of a kernel's function ("_saxpy_op": the
  // checks and the FFI call; "_saxpy_vjp", "_saxpy_sharded": its wrappers).
  static std::string PyPrivate(std::string_view kernel, std::string_view what);

  static bool IsPythonKeyword(std::string_view name);
  static bool IsValidPackageName(std::string_view name);

 private:
  std::string package_;
  std::string short_hash_;
};

}  // namespace kernelc::emit

#endif  // KERNELC_COMPILER_EMIT_NAMER_H_
