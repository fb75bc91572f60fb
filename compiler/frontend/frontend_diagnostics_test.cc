// The frontend's diagnostics as rendered: kernelc's own from the
// catalogue, and Clang's beside them, in report order.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/frontend/frontend.h"
#include "compiler/frontend/frontend_test_util.h"

namespace kernelc::frontend {
namespace {

using testing::Parse;
using testing::Parsed;

TEST_CASE("a source on disk keeps the path it was given") {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "kernelc_frontend_test";
  std::filesystem::create_directories(dir);
  std::string path = (dir / "disk.cu").string();
  {
    std::ofstream f(path);
    f << "#include <kernelc.h>\n"
         "KC_KERNEL void disk(KC_IN(\"n\") const float* x, float* y) {}\n";
  }
  diag::DiagnosticEngine diags;
  Result<model::Module> r = ParseSources({path}, DefaultOptions(), diags);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == ErrorKind::kReported);
  CHECK(diags.Render() ==
        path +
            ":2:55: error: pointer parameter 'y' of kernel 'disk' needs a "
            "role: KC_IN, KC_INMUT or KC_OUT\n"
            "KC_KERNEL void disk(KC_IN(\"n\") const float* x, float* y) {}\n"
            "                                                      ^\n"
            "1 error generated.\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a missing source is reported, without a location") {
  diag::DiagnosticEngine diags;
  Result<model::Module> r =
      ParseSources({"no/such/file.cu"}, DefaultOptions(), diags);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == ErrorKind::kReported);
  CHECK(diags.Render() ==
        "kernelc: error: no such file or directory: 'no/such/file.cu'\n");
}

TEST_CASE("a C++ syntax error is reported") {
  Parsed p = Parse({{"syntax.cu", R"(#include <kernelc.h>
KC_KERNEL void k(KC_IN("n") const float* x) {
  float y = x[0]
}
)"}});
  REQUIRE_FALSE(p.result.ok());
  CHECK(p.result.error().kind == ErrorKind::kReported);
  CHECK(p.diagnostics ==
        R"(syntax.cu:3:17: error: expected ';' at end of declaration
  float y = x[0]
                ^
                ;
1 error generated.
)");
}

TEST_CASE("all errors of all kernels in all sources are reported") {
  const std::string a = R"(#include <kernelc.h>
KC_KERNEL void k(KC_IN("n") const float* x) { undeclared(); }
KC_GRID("n")
__global__ void g(float* x, char c) {}
KC_KERNEL void h(KC_OUT("n") const float* y) {}
)";
  const std::string b = R"(#include <kernelc.h>
KC_KERNEL void k(KC_IN("n") const int* x) {}
KC_KERNEL void b(kc::Out<float, 1> out) {}
)";
  Parsed p = Parse({{"a.cu", a}, {"b.cu", b}});
  REQUIRE_FALSE(p.result.ok());
  CHECK(p.result.error().kind == ErrorKind::kReported);
  CHECK(p.diagnostics ==
        R"d(a.cu:2:47: error: use of undeclared identifier 'undeclared'
KC_KERNEL void k(KC_IN("n") const float* x) { undeclared(); }
                                              ^
a.cu:4:26: error: pointer parameter 'x' of kernel 'g' needs a role: KC_IN, KC_INMUT or KC_OUT
__global__ void g(float* x, char c) {}
                         ^
a.cu:4:34: error: parameter 'c' of kernel 'g': plain 'char' has implementation-defined signedness; use int8_t or uint8_t
__global__ void g(float* x, char c) {}
                                 ^
a.cu:5:43: error: KC_OUT parameter 'y' of kernel 'h' points to const data; drop the const, or use KC_IN
KC_KERNEL void h(KC_OUT("n") const float* y) {}
                                          ^
b.cu:2:16: error: duplicate kernel name 'k': kernel names must be unique across all sources
KC_KERNEL void k(KC_IN("n") const int* x) {}
               ^
a.cu:2:16: note: kernel 'k' is first defined here
KC_KERNEL void k(KC_IN("n") const float* x) { undeclared(); }
               ^
b.cu:3:36: error: output view 'out' of kernel 'b' needs KC_SHAPE("..."): output shapes must be stated
KC_KERNEL void b(kc::Out<float, 1> out) {}
                                   ^
6 errors generated.
)d");
}

TEST_CASE("an annotation Clang rejects brings no echo from kernelc") {
  // KC_IN(n) has no string: Clang reports it and drops the annotation; the
  // parameter then has no role, which kernelc does not report again.
  Parsed p = Parse({{"echo.cu", R"(#include <kernelc.h>
int n = 1;
KC_GRID(n)
__global__ void k(KC_IN(m) const float* x) {}
)"}});
  REQUIRE_FALSE(p.result.ok());
  CHECK(p.diagnostics ==
        R"(echo.cu:4:25: error: use of undeclared identifier 'm'
__global__ void k(KC_IN(m) const float* x) {}
                        ^
echo.cu:3:9: error: 'annotate' attribute requires parameter 1 to be a constant expression
KC_GRID(n)
        ^
echo.cu:3:9: note: read of non-const variable 'n' is not allowed in a constant expression
echo.cu:2:5: note: declared here
int n = 1;
    ^
2 errors generated.
)");
}

// Each kernelc diagnostic, rendered in full. The source is "bad.cu": line 1
// includes kernelc.h, the body follows.
struct DiagCase {
  const char* name;
  const char* body;
  const char* expected;
};

const DiagCase kDiagCases[] = {
    {"member function",
     R"d(struct S {
  KC_KERNEL void m(KC_IN("n") const float* x) {}
};)d",
     R"d(bad.cu:3:18: error: kernel 'm' cannot be a member function; define it at namespace scope
  KC_KERNEL void m(KC_IN("n") const float* x) {}
                 ^
1 error generated.
)d"},
    {"function template without variants",
     R"d(template <typename T>
KC_KERNEL void t(KC_IN("n") const T* x) {})d",
     R"d(bad.cu:3:16: error: template kernel 't' has no variants: declare each with an explicit instantiation definition, e.g. 'template void t<float>(...);'
KC_KERNEL void t(KC_IN("n") const T* x) {}
               ^
1 error generated.
)d"},
    {"namespace",
     R"d(namespace ns {
KC_KERNEL void k(KC_IN("n") const float* x) {}
})d",
     R"d(bad.cu:3:16: error: kernel 'k' must be defined in the global namespace
KC_KERNEL void k(KC_IN("n") const float* x) {}
               ^
1 error generated.
)d"},
    {"both kinds",
     R"d(KC_KERNEL __global__ void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:1: error: kernel 'k' cannot be both __global__ and KC_KERNEL
KC_KERNEL __global__ void k(KC_IN("n") const float* x) {}
^
1 error generated.
)d"},
    {"variadic", R"d(KC_KERNEL void k(KC_IN("n") const float* x, ...) {})d",
     R"d(bad.cu:2:16: error: kernel 'k' cannot be variadic
KC_KERNEL void k(KC_IN("n") const float* x, ...) {}
               ^
1 error generated.
)d"},
    {"host return",
     R"d(KC_KERNEL int k(KC_IN("n") const float* x) { return 0; })d",
     R"d(bad.cu:2:11: error: host kernel 'k' must return void, not 'int'
KC_KERNEL int k(KC_IN("n") const float* x) { return 0; }
          ^
1 error generated.
)d"},
    {"global return",
     R"d(KC_GRID("n") __global__ int k(KC_IN("n") const float* x) { return 0; })d",
     R"d(bad.cu:2:25: error: __global__ kernel 'k' must return void, not 'int'
KC_GRID("n") __global__ int k(KC_IN("n") const float* x) { return 0; }
                        ^
1 error generated.
)d"},
    {"no grid", R"d(__global__ void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:17: error: __global__ kernel 'k' needs KC_GRID(...) (threads) or KC_BLOCKS(...) (blocks) to state its launch grid
__global__ void k(KC_IN("n") const float* x) {}
                ^
1 error generated.
)d"},
    {"grid on host",
     R"d(KC_GRID("n") KC_KERNEL void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:1: error: KC_GRID cannot be used on host kernel 'k': a KC_KERNEL function runs once per call with whole tensors
KC_GRID("n") KC_KERNEL void k(KC_IN("n") const float* x) {}
^
1 error generated.
)d"},
    {"block on host",
     R"d(KC_BLOCK(64) KC_KERNEL void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:1: error: KC_BLOCK cannot be used on host kernel 'k': a KC_KERNEL function runs once per call with whole tensors
KC_BLOCK(64) KC_KERNEL void k(KC_IN("n") const float* x) {}
^
1 error generated.
)d"},
    {"two grids",
     R"d(KC_GRID("n") KC_GRID("m") __global__ void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:14: error: kernel 'k' has more than one KC_GRID
KC_GRID("n") KC_GRID("m") __global__ void k(KC_IN("n") const float* x) {}
             ^
1 error generated.
)d"},
    {"two blocks",
     R"d(KC_GRID("n") KC_BLOCK(64) KC_BLOCK(32) __global__ void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:27: error: kernel 'k' has more than one KC_BLOCK
KC_GRID("n") KC_BLOCK(64) KC_BLOCK(32) __global__ void k(KC_IN("n") const float* x) {}
                          ^
1 error generated.
)d"},
    {"param annotation on kernel",
     R"d(KC_IN("n") KC_KERNEL void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:1: error: KC_IN applies to parameters, not to kernel 'k'
KC_IN("n") KC_KERNEL void k(KC_IN("n") const float* x) {}
^
1 error generated.
)d"},
    {"unknown kernel annotation",
     R"d(__attribute__((annotate("kc.fast"))) KC_KERNEL void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:16: error: unknown kernelc annotation 'kc.fast' on kernel 'k'
__attribute__((annotate("kc.fast"))) KC_KERNEL void k(KC_IN("n") const float* x) {}
               ^
1 error generated.
)d"},
    {"not a kernel", R"d(void f(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:6: error: function 'f' has kernelc annotations but is not a kernel; mark it KC_KERNEL, or __global__ with KC_GRID
void f(KC_IN("n") const float* x) {}
     ^
1 error generated.
)d"},
    {"duplicate name",
     R"d(KC_KERNEL void k(KC_IN("n") const float* x) {}
KC_KERNEL void k(KC_IN("n") const int* x) {})d",
     R"d(bad.cu:3:16: error: duplicate kernel name 'k': kernel names must be unique across all sources
KC_KERNEL void k(KC_IN("n") const int* x) {}
               ^
bad.cu:2:16: note: kernel 'k' is first defined here
KC_KERNEL void k(KC_IN("n") const float* x) {}
               ^
1 error generated.
)d"},
    {"grid too long",
     R"d(KC_GRID("a", "b", "c", "d")
__global__ void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:1: error: KC_GRID of kernel 'k' takes 1 to 3 strings (threads along x, y, z), not 4
KC_GRID("a", "b", "c", "d")
^
1 error generated.
)d"},
    {"grid not a string",
     R"d(KC_GRID("a", 16)
__global__ void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:14: error: argument 2 of KC_GRID of kernel 'k' must be a string literal
KC_GRID("a", 16)
             ^
1 error generated.
)d"},
    {"block not an integer",
     R"d(KC_GRID("n") KC_BLOCK(2.5)
__global__ void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:23: error: argument 1 of KC_BLOCK of kernel 'k' must be an integer constant, or a string of one (template parameters and macros are constants)
KC_GRID("n") KC_BLOCK(2.5)
                      ^
1 error generated.
)d"},
    {"block below 1",
     R"d(KC_GRID("n", "m") KC_BLOCK(16, -1)
__global__ void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:32: error: KC_BLOCK of kernel 'k' has block size -1 along y; it must be at least 1
KC_GRID("n", "m") KC_BLOCK(16, -1)
                               ^
1 error generated.
)d"},
    {"block count",
     R"d(KC_GRID("n") KC_BLOCK(16, 16)
__global__ void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:14: error: KC_BLOCK of kernel 'k' has 2 sizes but KC_GRID has 1; give one block size per grid dimension
KC_GRID("n") KC_BLOCK(16, 16)
             ^
1 error generated.
)d"},
    {"block too large",
     R"d(KC_GRID("n", "m") KC_BLOCK(64, 32)
__global__ void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:19: error: KC_BLOCK of kernel 'k' asks for 2048 threads per block; at most 1024 are allowed
KC_GRID("n", "m") KC_BLOCK(64, 32)
                  ^
1 error generated.
)d"},
    {"unnamed",
     R"d(KC_KERNEL void k(KC_IN("n") const float* x, const float*) {})d",
     R"d(bad.cu:2:57: error: parameter 2 of kernel 'k' has no name; kernel parameters must be named
KC_KERNEL void k(KC_IN("n") const float* x, const float*) {}
                                                        ^
1 error generated.
)d"},
    {"two roles", R"d(KC_KERNEL void k(KC_IN("n") KC_OUT("n") float* x) {})d",
     R"d(bad.cu:2:29: error: parameter 'x' of kernel 'k' has more than one role annotation: KC_IN and KC_OUT
KC_KERNEL void k(KC_IN("n") KC_OUT("n") float* x) {}
                            ^
1 error generated.
)d"},
    {"two shapes",
     R"d(KC_KERNEL void k(KC_SHAPE("n") KC_SHAPE("m") kc::In<float, 1> x) {})d",
     R"d(bad.cu:2:32: error: parameter 'x' of kernel 'k' has more than one KC_SHAPE
KC_KERNEL void k(KC_SHAPE("n") KC_SHAPE("m") kc::In<float, 1> x) {}
                               ^
1 error generated.
)d"},
    {"two inits",
     R"d(KC_KERNEL void k(KC_OUT("n") KC_INIT(0) KC_INIT(1) float* x) {})d",
     R"d(bad.cu:2:41: error: parameter 'x' of kernel 'k' has more than one KC_INIT
KC_KERNEL void k(KC_OUT("n") KC_INIT(0) KC_INIT(1) float* x) {}
                                        ^
1 error generated.
)d"},
    {"grid on param",
     R"d(KC_KERNEL void k(KC_GRID("n") KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:18: error: KC_GRID cannot be used on parameter 'x' of kernel 'k'
KC_KERNEL void k(KC_GRID("n") KC_IN("n") const float* x) {}
                 ^
1 error generated.
)d"},
    {"shared on param",
     R"d(KC_KERNEL void k(KC_IN("n") __shared__ const float* x) {})d",
     R"d(bad.cu:2:29: error: __shared__ cannot be used on parameter 'x' of kernel 'k'
KC_KERNEL void k(KC_IN("n") __shared__ const float* x) {}
                            ^
1 error generated.
)d"},
    {"unknown param annotation",
     R"d(KC_KERNEL void k(__attribute__((annotate("kc.fast"))) KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:33: error: unknown kernelc annotation 'kc.fast' on parameter 'x' of kernel 'k'
KC_KERNEL void k(__attribute__((annotate("kc.fast"))) KC_IN("n") const float* x) {}
                                ^
1 error generated.
)d"},
    {"shape not a string", R"d(KC_KERNEL void k(KC_IN(16) const float* x) {})d",
     R"d(bad.cu:2:24: error: KC_IN on parameter 'x' of kernel 'k' takes one string literal: the shape
KC_KERNEL void k(KC_IN(16) const float* x) {}
                       ^
1 error generated.
)d"},
    {"view shape not a string",
     R"d(KC_KERNEL void k(KC_SHAPE(16) kc::In<float, 1> x) {})d",
     R"d(bad.cu:2:27: error: KC_SHAPE on parameter 'x' of kernel 'k' takes one string literal: the shape
KC_KERNEL void k(KC_SHAPE(16) kc::In<float, 1> x) {}
                          ^
1 error generated.
)d"},
    {"derived not a string",
     R"d(KC_KERNEL void k(KC_IN("n") const float* x, KC_DERIVED(3) int64_t n) {})d",
     R"d(bad.cu:2:56: error: KC_DERIVED on parameter 'n' of kernel 'k' takes one string literal: the expression
KC_KERNEL void k(KC_IN("n") const float* x, KC_DERIVED(3) int64_t n) {}
                                                       ^
1 error generated.
)d"},
    {"needs a role",
     R"d(KC_GRID("n")
__global__ void saxpy(KC_IN("n") const float* x, float* out) {})d",
     R"d(bad.cu:3:57: error: pointer parameter 'out' of kernel 'saxpy' needs a role: KC_IN, KC_INMUT or KC_OUT
__global__ void saxpy(KC_IN("n") const float* x, float* out) {}
                                                        ^
1 error generated.
)d"},
    {"out to const", R"d(KC_KERNEL void k(KC_OUT("n") const float* x) {})d",
     R"d(bad.cu:2:43: error: KC_OUT parameter 'x' of kernel 'k' points to const data; drop the const, or use KC_IN
KC_KERNEL void k(KC_OUT("n") const float* x) {}
                                          ^
1 error generated.
)d"},
    {"inmut to const", R"d(KC_KERNEL void k(KC_INMUT("n") const float* x) {})d",
     R"d(bad.cu:2:45: error: KC_INMUT parameter 'x' of kernel 'k' points to const data; drop the const, or use KC_IN
KC_KERNEL void k(KC_INMUT("n") const float* x) {}
                                            ^
1 error generated.
)d"},
    {"role on view", R"d(KC_KERNEL void k(KC_IN("n") kc::In<float, 1> x) {})d",
     R"d(bad.cu:2:18: error: KC_IN cannot be used on view parameter 'x' of kernel 'k': its type gives the role; state the shape with KC_SHAPE
KC_KERNEL void k(KC_IN("n") kc::In<float, 1> x) {}
                 ^
1 error generated.
)d"},
    {"shape on pointer",
     R"d(KC_KERNEL void k(KC_SHAPE("n") const float* x) {})d",
     R"d(bad.cu:2:18: error: KC_SHAPE applies only to kc::In, kc::InMut and kc::Out views, not to parameter 'x' of kernel 'k'; a pointer takes its shape from KC_IN, KC_INMUT or KC_OUT
KC_KERNEL void k(KC_SHAPE("n") const float* x) {}
                 ^
1 error generated.
)d"},
    {"shape on scalar", R"d(KC_KERNEL void k(KC_SHAPE("n") int n) {})d",
     R"d(bad.cu:2:18: error: KC_SHAPE applies only to kc::In, kc::InMut and kc::Out views, not to parameter 'n' of kernel 'k'; a pointer takes its shape from KC_IN, KC_INMUT or KC_OUT
KC_KERNEL void k(KC_SHAPE("n") int n) {}
                 ^
1 error generated.
)d"},
    {"out view without shape",
     R"d(KC_KERNEL void k(kc::Out<float, 1> out) {})d",
     R"d(bad.cu:2:36: error: output view 'out' of kernel 'k' needs KC_SHAPE("..."): output shapes must be stated
KC_KERNEL void k(kc::Out<float, 1> out) {}
                                   ^
1 error generated.
)d"},
    {"negative rank",
     R"d(KC_KERNEL void k(KC_SHAPE("n") kc::In<float, -1> x) {})d",
     R"d(bad.cu:2:50: error: view parameter 'x' of kernel 'k' has negative rank -1
KC_KERNEL void k(KC_SHAPE("n") kc::In<float, -1> x) {}
                                                 ^
1 error generated.
)d"},
    {"role on scalar", R"d(KC_KERNEL void k(KC_IN("n") int x) {})d",
     R"d(bad.cu:2:18: error: KC_IN on parameter 'x' of kernel 'k' needs a pointer type, not 'int'
KC_KERNEL void k(KC_IN("n") int x) {}
                 ^
1 error generated.
)d"},
    {"derived float",
     R"d(KC_KERNEL void k(KC_IN("n") const float* x, KC_DERIVED("x.size") float n) {})d",
     R"d(bad.cu:2:72: error: KC_DERIVED parameter 'n' of kernel 'k' must have an integer type, not 'float'
KC_KERNEL void k(KC_IN("n") const float* x, KC_DERIVED("x.size") float n) {}
                                                                       ^
1 error generated.
)d"},
    {"derived pointer", R"d(KC_KERNEL void k(KC_DERIVED("1") int64_t* n) {})d",
     R"d(bad.cu:2:43: error: KC_DERIVED parameter 'n' of kernel 'k' must have an integer type, not 'int64_t *'
KC_KERNEL void k(KC_DERIVED("1") int64_t* n) {}
                                          ^
1 error generated.
)d"},
    {"plain char scalar", R"d(KC_KERNEL void k(char c) {})d",
     R"d(bad.cu:2:23: error: parameter 'c' of kernel 'k': plain 'char' has implementation-defined signedness; use int8_t or uint8_t
KC_KERNEL void k(char c) {}
                      ^
1 error generated.
)d"},
    {"plain char pointer", R"d(KC_KERNEL void k(KC_IN("n") const char* s) {})d",
     R"d(bad.cu:2:41: error: parameter 's' of kernel 'k': plain 'char' has implementation-defined signedness; use int8_t or uint8_t
KC_KERNEL void k(KC_IN("n") const char* s) {}
                                        ^
1 error generated.
)d"},
    {"plain char view",
     R"d(KC_KERNEL void k(KC_SHAPE("n") kc::In<char, 1> s) {})d",
     R"d(bad.cu:2:48: error: parameter 's' of kernel 'k': plain 'char' has implementation-defined signedness; use int8_t or uint8_t
KC_KERNEL void k(KC_SHAPE("n") kc::In<char, 1> s) {}
                                               ^
1 error generated.
)d"},
    {"unsupported element",
     R"d(KC_KERNEL void k(KC_IN("n") const long double* x) {})d",
     R"d(bad.cu:2:48: error: parameter 'x' of kernel 'k' has unsupported element type 'long double'; supported: bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, float, double, __half, __nv_bfloat16
KC_KERNEL void k(KC_IN("n") const long double* x) {}
                                               ^
1 error generated.
)d"},
    {"unsupported view element",
     R"d(KC_KERNEL void k(KC_SHAPE("n") kc::In<float*, 1> x) {})d",
     R"d(bad.cu:2:50: error: parameter 'x' of kernel 'k' has unsupported element type 'float *'; supported: bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, float, double, __half, __nv_bfloat16
KC_KERNEL void k(KC_SHAPE("n") kc::In<float*, 1> x) {}
                                                 ^
1 error generated.
)d"},
    {"half scalar", R"d(KC_KERNEL void k(__half h) {})d",
     R"d(bad.cu:2:25: error: scalar parameter 'h' of kernel 'k' has type '__half', but XLA FFI attributes cannot carry 16-bit floats; use float
KC_KERNEL void k(__half h) {}
                        ^
1 error generated.
)d"},
    {"bfloat16 scalar", R"d(KC_KERNEL void k(__nv_bfloat16 h) {})d",
     R"d(bad.cu:2:32: error: scalar parameter 'h' of kernel 'k' has type '__nv_bfloat16', but XLA FFI attributes cannot carry 16-bit floats; use float
KC_KERNEL void k(__nv_bfloat16 h) {}
                               ^
1 error generated.
)d"},
    {"unsupported scalar", R"d(KC_KERNEL void k(long double x) {})d",
     R"d(bad.cu:2:30: error: scalar parameter 'x' of kernel 'k' has unsupported type 'long double'; supported: bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, float, double
KC_KERNEL void k(long double x) {}
                             ^
1 error generated.
)d"},
    {"struct param",
     R"d(struct Params { int n; };
KC_KERNEL void k(Params p) {})d",
     R"d(bad.cu:3:25: error: parameter 'p' of kernel 'k' has unsupported type 'Params': tensors are pointers with KC_IN, KC_INMUT or KC_OUT, or kc::In/InMut/Out views; scalars are arithmetic types
KC_KERNEL void k(Params p) {}
                        ^
1 error generated.
)d"},
    {"reference param", R"d(KC_KERNEL void k(const float& x) {})d",
     R"d(bad.cu:2:31: error: parameter 'x' of kernel 'k' has unsupported type 'const float &': tensors are pointers with KC_IN, KC_INMUT or KC_OUT, or kc::In/InMut/Out views; scalars are arithmetic types
KC_KERNEL void k(const float& x) {}
                              ^
1 error generated.
)d"},
    {"init on input",
     R"d(KC_KERNEL void k(KC_IN("n") KC_INIT(0) const float* x) {})d",
     R"d(bad.cu:2:29: error: KC_INIT applies only to outputs (KC_OUT pointers and kc::Out views), not to parameter 'x' of kernel 'k'
KC_KERNEL void k(KC_IN("n") KC_INIT(0) const float* x) {}
                            ^
1 error generated.
)d"},
    {"init on scalar", R"d(KC_KERNEL void k(KC_INIT(0) float x) {})d",
     R"d(bad.cu:2:18: error: KC_INIT applies only to outputs (KC_OUT pointers and kc::Out views), not to parameter 'x' of kernel 'k'
KC_KERNEL void k(KC_INIT(0) float x) {}
                 ^
1 error generated.
)d"},
    {"init on in view",
     R"d(KC_KERNEL void k(KC_SHAPE("n") KC_INIT(0) kc::In<float, 1> x) {})d",
     R"d(bad.cu:2:32: error: KC_INIT applies only to outputs (KC_OUT pointers and kc::Out views), not to parameter 'x' of kernel 'k'
KC_KERNEL void k(KC_SHAPE("n") KC_INIT(0) kc::In<float, 1> x) {}
                               ^
1 error generated.
)d"},
    {"init arity",
     R"d(KC_KERNEL void k(KC_OUT("n") __attribute__((annotate("kc.init", 1, 2))) float* x) {})d",
     R"d(bad.cu:2:45: error: KC_INIT on parameter 'x' of kernel 'k' takes one value
KC_KERNEL void k(KC_OUT("n") __attribute__((annotate("kc.init", 1, 2))) float* x) {}
                                            ^
1 error generated.
)d"},
    {"init not a number",
     R"d(KC_KERNEL void k(KC_OUT("n") KC_INIT("zero") float* x) {})d",
     R"d(bad.cu:2:38: error: KC_INIT value of parameter 'x' of kernel 'k' must be an integer or floating-point constant
KC_KERNEL void k(KC_OUT("n") KC_INIT("zero") float* x) {}
                                     ^
1 error generated.
)d"},
    {"init not constant",
     R"d(int zero = 0;
KC_KERNEL void k(KC_OUT("n") KC_INIT(zero) float* x) {})d",
     R"d(bad.cu:3:38: error: 'annotate' attribute requires parameter 1 to be a constant expression
KC_KERNEL void k(KC_OUT("n") KC_INIT(zero) float* x) {}
                                     ^
bad.cu:3:38: note: read of non-const variable 'zero' is not allowed in a constant expression
bad.cu:2:5: note: declared here
int zero = 0;
    ^
1 error generated.
)d"},
    {"clang error in annotation",
     R"d(KC_KERNEL void k(KC_IN(n) const float* x) {})d",
     R"d(bad.cu:2:24: error: use of undeclared identifier 'n'
KC_KERNEL void k(KC_IN(n) const float* x) {}
                       ^
1 error generated.
)d"},
    {"grid in threads and in blocks",
     R"d(KC_GRID("n") KC_BLOCKS("n / 256")
__global__ void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:14: error: kernel 'k' has both KC_GRID and KC_BLOCKS; give one: KC_GRID counts threads, KC_BLOCKS counts blocks
KC_GRID("n") KC_BLOCKS("n / 256")
             ^
1 error generated.
)d"},
    {"traced tensor",
     R"d(KC_KERNEL void k(KC_TRACED KC_IN("n") const float* x) {})d",
     R"d(bad.cu:2:18: error: KC_TRACED applies to scalar parameters; 'x' of kernel 'k' is not a scalar
KC_KERNEL void k(KC_TRACED KC_IN("n") const float* x) {}
                 ^
1 error generated.
)d"},
    {"optional output",
     R"d(KC_KERNEL void k(KC_IN("n") const float* x, KC_OPTIONAL KC_OUT("n") float* y) {})d",
     R"d(bad.cu:2:45: error: KC_OPTIONAL applies to input tensors (KC_IN pointers and kc::In views); 'y' of kernel 'k' is not one
KC_KERNEL void k(KC_IN("n") const float* x, KC_OPTIONAL KC_OUT("n") float* y) {}
                                            ^
1 error generated.
)d"},
    {"macro that is no integer constant",
     R"d(#define SCALE 2.5
KC_GRID("n * SCALE")
__global__ void k(KC_IN("n") const float* x) {})d",
     R"d(bad.cu:3:14: error: macro 'SCALE' in the annotations of kernel 'k' expands to '2.5', which is not an integer constant expression that fits int64
KC_GRID("n * SCALE")
             ^
1 error generated.
)d"},
    {"syntax error",
     R"d(KC_KERNEL void k(KC_IN("n") const float* x) {
  int i = 0
})d",
     R"d(bad.cu:3:12: error: expected ';' at end of declaration
  int i = 0
           ^
           ;
1 error generated.
)d"},
};

TEST_CASE("every kernelc diagnostic, rendered") {
  for (const DiagCase& c : kDiagCases) {
    SECTION(c.name) {
      Parsed p = Parse(
          {{"bad.cu", std::string("#include <kernelc.h>\n") + c.body + "\n"}});
      REQUIRE_FALSE(p.result.ok());
      CHECK(p.result.error().kind == ErrorKind::kReported);
      CHECK(p.diagnostics == c.expected);
    }
  }
}

}  // namespace
}  // namespace kernelc::frontend
