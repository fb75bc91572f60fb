#include "compiler/emit/namer.h"

#include <catch2/catch.hpp>
#include <string>

namespace kernelc::emit {
namespace {

constexpr char kHash[] =
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

TEST_CASE("Namer keeps the package and the hash's first 12 characters") {
  Namer n("mylib", kHash);
  CHECK(n.package() == "mylib");
  CHECK(n.short_hash() == "0123456789ab");
  // A hash shorter than 12 characters is kept whole.
  CHECK(Namer("mylib", "abc").short_hash() == "abc");
}

TEST_CASE("the library file name carries the hash") {
  CHECK(Namer("mylib", kHash).LibraryFile() == "_kernelc_0123456789ab.so");
  CHECK(Namer("other", "fedcba9876543210").LibraryFile() ==
        "_kernelc_fedcba987654.so");
}

TEST_CASE("the FFI target name is package, kernel and hash") {
  CHECK(Namer("mylib", kHash).FfiTarget("saxpy") == "mylib.saxpy.0123456789ab");
}

TEST_CASE("handler and entry symbols carry package, kernel and hash") {
  Namer n("mylib", kHash);
  CHECK(n.HandlerSymbol("saxpy", "cpu") == "kc_mylib_saxpy_0123456789ab_cpu");
  CHECK(n.HandlerSymbol("saxpy", "cuda") == "kc_mylib_saxpy_0123456789ab_cuda");
  CHECK(n.CpuEntrySymbol("saxpy") == "kc_mylib_saxpy_0123456789ab_cpu_entry");
  // Different content, different symbols.
  Namer other("mylib", "ffff56789abcdef");
  CHECK(other.HandlerSymbol("saxpy", "cpu") != n.HandlerSymbol("saxpy", "cpu"));
  CHECK(other.FfiTarget("saxpy") != n.FfiTarget("saxpy"));
}

TEST_CASE("CUDA modules, their caches and fold entries") {
  Namer n("mylib", kHash);
  CHECK(n.CudaModuleSymbol(1) == "kc_mylib_0123456789ab_cuda_module_1");
  CHECK(n.CudaFoldModuleSymbol(1) ==
        "kc_mylib_0123456789ab_cuda_fold_module_1");
  CHECK(Namer::CudaCacheAccessor(2, false) == "kc_cuda_cache_2");
  CHECK(Namer::CudaCacheAccessor(2, true) == "kc_cuda_fold_cache_2");
  CHECK(Namer::CudaFoldEntry("matmul") == "kc_fold_matmul");
}

TEST_CASE("C++ locals join a prefix and the user's name") {
  CHECK(Namer::CppLocal("arg", "x") == "arg_x");
  CHECK(Namer::CppLocal("dim", "n_rows") == "dim_n_rows");
}

TEST_CASE("Python names escape keywords with a trailing underscore") {
  CHECK(Namer::Python("lambda") == "lambda_");
  CHECK(Namer::Python("class") == "class_");
  CHECK(Namer::Python("None") == "None_");
  CHECK(Namer::Python("async") == "async_");
  CHECK(Namer::Python("nonlocal") == "nonlocal_");
  // Soft keywords are escaped too.
  CHECK(Namer::Python("match") == "match_");
  CHECK(Namer::Python("type") == "type_");
  // Not keywords: case matters, and builtins are ordinary names.
  CHECK(Namer::Python("Lambda") == "Lambda");
  CHECK(Namer::Python("none") == "none");
  CHECK(Namer::Python("print") == "print");
  CHECK(Namer::Python("x") == "x");
  CHECK(Namer::Python("n_rows") == "n_rows");
}

TEST_CASE("Python names with a leading underscore are moved aside") {
  // Generated code keeps its own names ("_kc", "_results", "_s_n") behind a
  // leading underscore; a user's name that starts with one cannot hit them.
  CHECK(Namer::Python("_kc") == "_u_kc");
  CHECK(Namer::Python("_results") == "_u_results");
  CHECK(Namer::Python("_") == "_u_");
  CHECK(Namer::Python("__x") == "_u__x");
}

TEST_CASE("IsPythonKeyword knows the hard and soft keywords") {
  for (const char* k :
       {"False",  "None",     "True",  "and",    "as",       "assert",
        "async",  "await",    "break", "class",  "continue", "def",
        "del",    "elif",     "else",  "except", "finally",  "for",
        "from",   "global",   "if",    "import", "in",       "is",
        "lambda", "nonlocal", "not",   "or",     "pass",     "raise",
        "return", "try",      "while", "with",   "yield",    "match",
        "case",   "type"}) {
    INFO(k);
    CHECK(Namer::IsPythonKeyword(k));
  }
  for (const char* k : {"", "x", "self", "print", "false", "LAMBDA", "lambda_",
                        "int", "exec"}) {
    INFO(k);
    CHECK_FALSE(Namer::IsPythonKeyword(k));
  }
}

TEST_CASE("package names are Python identifiers that are not keywords") {
  for (const char* name :
       {"mylib", "my_lib", "lib2", "_private", "L", "ops_v1"}) {
    INFO(name);
    CHECK(Namer::IsValidPackageName(name));
  }
  for (const char* name : {"", "2lib", "my-lib", "my.lib", "my lib", "lib!",
                           "class", "import", "None", "caf\xc3\xa9"}) {
    INFO(name);
    CHECK_FALSE(Namer::IsValidPackageName(name));
  }
}

}  // namespace
}  // namespace kernelc::emit
