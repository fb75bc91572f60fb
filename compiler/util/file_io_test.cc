#include "compiler/util/file_io.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>

#include <catch2/catch.hpp>
#include <set>

namespace kernelc {
namespace {

std::string TempDir() {
  llvm::SmallString<128> dir;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("kernelc-file-io-test", dir));
  return std::string(dir);
}

// Every entry under `dir`, relative, dot files included.
std::set<std::string> Entries(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end;
       !ec && it != end; it.increment(ec))
    out.insert(it->path().substr(dir.size() + 1));
  return out;
}

TEST_CASE(
    "MakeFileInPlace renames what it made into place, or leaves nothing") {
  std::string dir = TempDir();
  const std::string path = dir + "/made.pch";
  std::string seen;
  REQUIRE(MakeFileInPlace(path, [&](const std::string& temp) {
    seen = temp;
    return WriteFileIfChanged(temp, "one").ok();
  }));
  CHECK(seen.rfind(dir + "/.made.pch.kernelc-tmp-", 0) == 0);
  CHECK(*ReadFile(path) == "one");
  CHECK(Entries(dir) == std::set<std::string>{"made.pch"});
  // A failed make leaves the file as it was, and no temporary.
  CHECK_FALSE(MakeFileInPlace(path, [&](const std::string& temp) {
    REQUIRE(WriteFileIfChanged(temp, "half").ok());
    return false;
  }));
  CHECK(*ReadFile(path) == "one");
  CHECK(Entries(dir) == std::set<std::string>{"made.pch"});
  REQUIRE(MakeFileInPlace(path, [&](const std::string& temp) {
    return WriteFileIfChanged(temp, "two").ok();
  }));
  CHECK(*ReadFile(path) == "two");
}

TEST_CASE("WriteFilesIfChanged says which files it wrote") {
  std::string dir = TempDir();
  std::vector<std::string> written;
  REQUIRE(
      WriteFilesIfChanged(dir, {{"a.py", "a1"}, {"sub/b.py", "b1"}}, &written)
          .ok());
  CHECK(written == std::vector<std::string>{"a.py", "sub/b.py"});
  REQUIRE(
      WriteFilesIfChanged(dir, {{"a.py", "a1"}, {"sub/b.py", "b2"}}, &written)
          .ok());
  CHECK(written == std::vector<std::string>{"sub/b.py"});
  REQUIRE(WriteFilesIfChanged(dir, {{"a.py", "a1"}}, &written).ok());
  CHECK(written.empty());
}

TEST_CASE("WriteFilesIfChanged writes all files or none") {
  std::string dir = TempDir();
  REQUIRE(
      WriteFilesIfChanged(dir + "/pkg", {{"a.py", "a1"}, {"b.py", "b1"}}).ok());
  REQUIRE(*ReadFile(dir + "/pkg/a.py") == "a1");
  // A directory where a file must go: nothing changes, nothing is left.
  REQUIRE(!llvm::sys::fs::create_directory(dir + "/pkg/c.so"));
  Status s = WriteFilesIfChanged(
      dir + "/pkg", {{"a.py", "a2"}, {"b.py", "b2"}, {"c.so", "c2"}});
  REQUIRE(!s.ok());
  CHECK(s.error().message ==
        "cannot write '" + dir + "/pkg/c.so': it is a directory");
  CHECK(*ReadFile(dir + "/pkg/a.py") == "a1");
  CHECK(*ReadFile(dir + "/pkg/b.py") == "b1");
  CHECK(Entries(dir) ==
        std::set<std::string>{"pkg", "pkg/a.py", "pkg/b.py", "pkg/c.so"});
  // A new directory that a failed write created is removed again.
  REQUIRE(WriteFileIfChanged(dir + "/blocker", "x").ok());
  REQUIRE(
      !WriteFilesIfChanged(dir, {{"another/sub/a.py", "a"}, {"blocker/b", "b"}})
           .ok());
  CHECK(!llvm::sys::fs::exists(dir + "/another"));
  CHECK(Entries(dir) == std::set<std::string>{"blocker", "pkg", "pkg/a.py",
                                              "pkg/b.py", "pkg/c.so"});
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("ReadFile of a directory is nullopt") {
  std::string dir = TempDir();
  CHECK(!ReadFile(dir).has_value());
  CHECK(!ReadFile(dir + "/missing").has_value());
  llvm::sys::fs::remove_directories(dir);
}

}  // namespace
}  // namespace kernelc
