#include "compiler/cache/build_cache.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>

#include <catch2/catch.hpp>

#include "compiler/util/file_io.h"

namespace kernelc::cache {
namespace {

std::string TempDir() {
  llvm::SmallString<128> dir;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("kernelc-cache-test", dir));
  return std::string(dir);
}

TEST_CASE("ParseDepFile reads prerequisites with escapes and continuations") {
  std::string d =
      "out/a.o: /src/a.cc /inc/my\\ header.h \\\n"
      "  /inc/b.h\n"
      "/inc/b.h:\n";
  std::vector<std::string> deps = ParseDepFile(d);
  REQUIRE(deps == std::vector<std::string>{"/src/a.cc", "/inc/my header.h",
                                           "/inc/b.h"});
  REQUIRE(ParseDepFile("x.o:\n").empty());
}

TEST_CASE("KeyBuilder separates fields") {
  KeyBuilder a, b;
  a.Add("x", "ab").Add("y", "c");
  b.Add("x", "a").Add("y", "bc");
  REQUIRE(a.Finish() != b.Finish());
  KeyBuilder c, d;
  c.Add("x", "ab");
  d.Add("x", "ab");
  REQUIRE(c.Finish() == d.Finish());
}

TEST_CASE("A stored entry hits until a dependency changes") {
  std::string dir = TempDir();
  std::string header = dir + "/dep.h";
  REQUIRE(WriteFileIfChanged(header, "int x;").ok());
  BuildCache cache(dir + "/cache");
  Files files = {{"pkg/__init__.py", "print(1)\n"},
                 {"pkg/lib.so", std::string("\0\x01\x02", 3)}};
  REQUIRE(!cache.Lookup("ab12").has_value());
  REQUIRE(cache.Store("ab12", {header}, files).ok());
  std::optional<Files> hit = cache.Lookup("ab12");
  REQUIRE(hit.has_value());
  REQUIRE(*hit == files);
  REQUIRE(!cache.Lookup("ab13").has_value());

  REQUIRE(WriteFileIfChanged(header, "int y;").ok());
  REQUIRE(!cache.Lookup("ab12").has_value());
  // A second entry under the same key for the new header contents; both
  // stay valid for their own header.
  Files other = {{"pkg/__init__.py", "print(2)\n"}};
  REQUIRE(cache.Store("ab12", {header}, other).ok());
  REQUIRE(*cache.Lookup("ab12") == other);
  REQUIRE(WriteFileIfChanged(header, "int x;").ok());
  REQUIRE(*cache.Lookup("ab12") == files);

  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("A damaged entry is a miss") {
  std::string dir = TempDir();
  BuildCache cache(dir);
  REQUIRE(cache.Store("cd34", {}, {{"a", "bytes"}}).ok());
  std::error_code ec;
  std::string entry;
  for (llvm::sys::fs::directory_iterator it(dir + "/v1/cd/cd34", ec), end;
       !ec && it != end; it.increment(ec))
    entry = it->path();
  REQUIRE(!entry.empty());
  std::string data = *ReadFile(entry);
  data.back() = 'X';
  REQUIRE(WriteFileIfChanged(entry, data).ok());
  REQUIRE(!cache.Lookup("cd34").has_value());
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("Storing into an unwritable place is an error, not a crash") {
  BuildCache cache("/proc/kernelc-no-such-dir");
  REQUIRE(!cache.Store("ef56", {}, {{"a", "b"}}).ok());
}

}  // namespace
}  // namespace kernelc::cache
