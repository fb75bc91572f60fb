#include "compiler/cache/build_cache.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <unistd.h>
#include <utime.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

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

TEST_CASE("IncludeClosure follows every include through the search path") {
  std::string dir = TempDir();
  auto write = [&dir](const std::string& rel, const std::string& text) {
    REQUIRE(WriteFileIfChanged(dir + "/" + rel, text).ok());
  };
  write("src/k.cu",
        "#include \"local.h\"\n"
        "  #  include <lib/a.h>  // spaces\n"
        "#include MACRO_HEADER\n"
        "#include <missing.h>\n");
  write("src/local.h", "#pragma once\n");
  // Both branches count: the closure ignores conditionals.
  write("inc1/lib/a.h",
        "#if 0\n#include \"b.h\"\n#else\n#include_next <lib/a.h>\n#endif\n");
  write("inc1/lib/b.h", "#include \"../c.h\"\n");
  write("inc1/c.h", "");
  write("inc2/lib/a.h", "#include <k.cu>\n");  // a cycle back to the source
  write("inc2/unused.h", "");
  std::vector<std::string> closure = IncludeClosure(
      {dir + "/src/k.cu"},
      {dir + "/inc1", dir + "/inc2", dir + "/src", dir + "/none"});
  std::vector<std::string> expected = {
      dir + "/inc1/c.h",     dir + "/inc1/lib/a.h", dir + "/inc1/lib/b.h",
      dir + "/inc2/lib/a.h", dir + "/src/k.cu",     dir + "/src/local.h"};
  CHECK(closure == expected);
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("A toolchain file is checked by its size and modification time") {
  std::string dir = TempDir();
  std::string header = dir + "/cuda_fp16.h";
  REQUIRE(WriteFileIfChanged(header, "#define X 1\n").ok());
  BuildCache cache(dir + "/cache");
  Files files = {{"a", "bytes"}};
  REQUIRE(cache.Store("ab12", {}, files, {header}).ok());
  REQUIRE(cache.Lookup("ab12").has_value());
  // Same size, another modification time: a miss, without reading it.
  REQUIRE(WriteFileIfChanged(header, "#define X 2\n").ok());
  llvm::sys::fs::file_status st;
  REQUIRE(!llvm::sys::fs::status(header, st));
  int fd = -1;
  REQUIRE(!llvm::sys::fs::openFileForWrite(header, fd,
                                           llvm::sys::fs::CD_OpenExisting));
  REQUIRE(!llvm::sys::fs::setLastAccessAndModificationTime(
      fd, st.getLastModificationTime() + std::chrono::seconds(10)));
  ::close(fd);
  REQUIRE(!cache.Lookup("ab12").has_value());
  llvm::sys::fs::remove(header);
  REQUIRE(!cache.Lookup("ab12").has_value());
  REQUIRE(!cache.Store("ab12", {}, files, {header}).ok());
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("A dependency path that is not UTF-8 is recorded and checked") {
  std::string dir = TempDir();
  std::string header = dir + "/inc\xff/scale.h";
  REQUIRE(WriteFileIfChanged(header, "#define SCALE 2\n").ok());
  BuildCache cache(dir + "/cache");
  Files files = {{"pkg/__init__.py", "x = 1\n"}};
  REQUIRE(cache.Store("ab12", {header}, files, {header}).ok());
  REQUIRE(cache.Lookup("ab12") == files);
  REQUIRE(WriteFileIfChanged(header, "#define SCALE 3\n").ok());
  REQUIRE(!cache.Lookup("ab12").has_value());
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("Package paths are relative paths inside the package") {
  CHECK(IsPackagePath("kernelc.json"));
  CHECK(IsPackagePath("sub/dir/file.py"));
  for (std::string_view bad : std::vector<std::string_view>{
           "", "/etc/passwd", "../escaped.txt", "a/../../b", "./a", "a//b",
           "a/", "a/.", std::string_view("a\0b", 3), "bad\xff.py"})
    CHECK(!IsPackagePath(bad));
}

TEST_CASE("An entry with a file outside the package is a miss") {
  std::string dir = TempDir();
  BuildCache cache(dir);
  REQUIRE(!cache.Store("cd34", {}, {{"../../escaped.txt", "x"}}).ok());
  REQUIRE(!cache.Store("cd34", {}, {{"/tmp/abs.txt", "x"}}).ok());
  // A forged entry, in the format Store writes.
  for (const std::string& name :
       {std::string("../../escaped.txt"), dir + "/abs.txt"}) {
    std::string header = "{\"deps\":[],\"files\":[[\"" + name + "\",1,\"" +
                         Sha256Hex("x") + "\"]]}";
    std::string entry =
        "kce1 " + std::to_string(header.size()) + "\n" + header + "x";
    REQUIRE(WriteFileIfChanged(dir + "/v1/cd/cd34/forged.kce", entry).ok());
    REQUIRE(!cache.Lookup("cd34").has_value());
  }
  // The same entry with a plain name hits: the forgery was the only fault.
  std::string header =
      "{\"deps\":[],\"files\":[[\"ok.txt\",1,\"" + Sha256Hex("x") + "\"]]}";
  REQUIRE(WriteFileIfChanged(
              dir + "/v1/cd/cd34/forged.kce",
              "kce1 " + std::to_string(header.size()) + "\n" + header + "x")
              .ok());
  REQUIRE(cache.Lookup("cd34") == Files{{"ok.txt", "x"}});
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE(
    "A new prelude directory keeps the newest of the other kernelc "
    "executables' ones") {
  const std::string cache = TempDir();
  // Other identities' directories, made 1 to 5 days ago (0: the newest).
  auto identity = [](char c) { return std::string(64, c); };
  auto other = [&](int i) {
    return cache + "/prelude/" + identity(static_cast<char>('a' + i));
  };
  for (int i = 0; i < 5; ++i) {
    REQUIRE(!llvm::sys::fs::create_directories(other(i)));
    REQUIRE(WriteFileIfChanged(other(i) + "/x.pch", "CPCH").ok());
    const time_t when = time(nullptr) - (i + 1) * 24 * 3600;
    utimbuf times = {when, when};
    REQUIRE(utime(other(i).c_str(), &times) == 0);
  }
  // Not of kernelc's naming: left alone, however old.
  REQUIRE(!llvm::sys::fs::create_directories(cache + "/prelude/mine"));
  utimbuf epoch = {0, 0};
  REQUIRE(utime((cache + "/prelude/mine").c_str(), &epoch) == 0);

  const std::string dir = PreludeDirectory(cache, identity('0'));
  CHECK(dir == cache + "/prelude/" + identity('0'));
  CHECK(llvm::sys::fs::is_directory(dir));
  static_assert(kKeptPreludeDirectories == 3);
  for (int i = 0; i < 5; ++i) {
    INFO(i);
    CHECK(llvm::sys::fs::exists(other(i)) == (i < 3));
  }
  CHECK(llvm::sys::fs::exists(cache + "/prelude/mine"));

  // An existing directory prunes nothing.
  REQUIRE(!llvm::sys::fs::create_directories(other(3)));
  REQUIRE(utime(other(3).c_str(), &epoch) == 0);
  CHECK(PreludeDirectory(cache, identity('0')) == dir);
  CHECK(llvm::sys::fs::exists(other(3)));
  llvm::sys::fs::remove_directories(cache);
}

TEST_CASE("A prelude directory that cannot be made is none") {
  const std::string cache = TempDir();
  REQUIRE(WriteFileIfChanged(cache + "/file", "not a directory").ok());
  CHECK(PreludeDirectory(cache + "/file", std::string(64, '0')).empty());
  llvm::sys::fs::remove_directories(cache);
}

}  // namespace
}  // namespace kernelc::cache
