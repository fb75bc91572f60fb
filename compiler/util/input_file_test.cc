#include "compiler/util/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <string>

namespace kernelc {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/input_file_test_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

TEST_CASE("a regular file is read whole") {
  std::string dir = TempDir();
  std::string path = dir + "/k.cu";
  std::ofstream(path) << "abc\n";
  InputFile f = ReadInputFile(path);
  CHECK(f.ok());
  CHECK(f.contents == "abc\n");
  CHECK(f.size == 4);
  std::remove(path.c_str());
  rmdir(dir.c_str());
}

TEST_CASE("what is not a regular file is refused without blocking") {
  std::string dir = TempDir();
  CHECK(ReadInputFile(dir + "/none").problem == InputFile::Problem::kMissing);
  CHECK(ReadInputFile(dir + "/none/x").problem ==
        InputFile::Problem::kMissing);
  CHECK(ReadInputFile(dir).problem == InputFile::Problem::kNotRegular);
  // A FIFO with no writer: opening it for reading would block.
  std::string fifo = dir + "/fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(ReadInputFile(fifo).problem == InputFile::Problem::kNotRegular);
  // A device that never ends.
  CHECK(ReadInputFile("/dev/zero").problem ==
        InputFile::Problem::kNotRegular);
  // A symbolic link is followed, to whatever it names.
  std::string link = dir + "/link.cu";
  REQUIRE(symlink("/dev/zero", link.c_str()) == 0);
  CHECK(ReadInputFile(link).problem == InputFile::Problem::kNotRegular);
  std::remove(link.c_str());
  std::remove(fifo.c_str());
  rmdir(dir.c_str());
}

TEST_CASE("a file over the limit is refused with its size") {
  std::string dir = TempDir();
  std::string path = dir + "/big.json";
  std::ofstream(path) << std::string(100, 'x');
  InputFile f = ReadInputFile(path, /*max_bytes=*/99);
  CHECK(f.problem == InputFile::Problem::kTooLarge);
  CHECK(f.size == 100);
  CHECK(f.contents.empty());
  CHECK(ReadInputFile(path, /*max_bytes=*/100).ok());
  std::remove(path.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace kernelc
