#include "compiler/driver/scratch_directory.h"

#include <llvm/Support/FileSystem.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "compiler/driver/test_sources.h"

namespace kernelc::driver {
namespace {

using testing::TempDir;

bool Exists(const std::string& path) { return llvm::sys::fs::exists(path); }

TEST_CASE("Scratch directories of killed builds are reclaimed, live ones not") {
  TempDir t;
  const std::string prefix = t.path() + "/.pkg.kernelc-%%%%%%";

  // A live one, in this process.
  ScratchDirectory live;
  REQUIRE(!live.Create(prefix));
  REQUIRE(Exists(live.path() + "/" + ScratchDirectory::kLockFile.str()));

  // One whose owner died: a child creates it and exits without cleaning up,
  // as a killed build does; the system releases its lock.
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ScratchDirectory orphan;
    int ok = orphan.Create(prefix) ? 1 : 0;
    std::string path = orphan.path();
    (void)!::write(pipe_fds[1], path.data(), path.size());
    ::_exit(ok);
  }
  ::close(pipe_fds[1]);
  char buffer[512];
  ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
  ::close(pipe_fds[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(n > 0);
  const std::string orphan(buffer, static_cast<size_t>(n));
  REQUIRE(Exists(orphan));

  // What is not kernelc's, or has no lock file, stays.
  t.Write(".pkg.kernelc-nolock-abcdef/file", "x");
  t.Write("pkg.kernelc-abcdef-ghijkl/" + ScratchDirectory::kLockFile.str(), "");
  t.Write(".pkg.kernelc-abc/" + ScratchDirectory::kLockFile.str(), "");
  t.Write(".pkg.other-abcdef-ghijkl/" + ScratchDirectory::kLockFile.str(), "");

  CHECK(ScratchDirectory::ReclaimAbandoned(t.path()) == 1);
  CHECK_FALSE(Exists(orphan));
  CHECK(Exists(live.path()));
  CHECK(Exists(t.path() + "/.pkg.kernelc-nolock-abcdef/file"));
  CHECK(Exists(t.path() + "/pkg.kernelc-abcdef-ghijkl"));
  CHECK(Exists(t.path() + "/.pkg.kernelc-abc"));
  CHECK(Exists(t.path() + "/.pkg.other-abcdef-ghijkl"));
  CHECK(ScratchDirectory::ReclaimAbandoned(t.path()) == 0);
}

}  // namespace
}  // namespace kernelc::driver
