// A directory of temporary files that does not outlive its owner, and is
// reclaimed by a later build when its owner was killed.
#ifndef KERNELC_COMPILER_DRIVER_SCRATCH_DIRECTORY_H_
#define KERNELC_COMPILER_DRIVER_SCRATCH_DIRECTORY_H_

#include <llvm/ADT/StringRef.h>
#include <llvm/ADT/Twine.h>

#include <string>
#include <system_error>

namespace kernelc::driver {

// A directory that is removed, with everything in it, when this goes out of
// scope: on every return, and when an exception passes on its way to a
// front end's last-resort handler. While it lives it holds an exclusive
// flock on its lock file (kLockFile, in the directory), which the system
// releases when the process ends however it ends: a directory whose lock
// nobody holds was left by a build that was killed.
class ScratchDirectory {
 public:
  static constexpr llvm::StringLiteral kLockFile = ".kernelc-scratch-lock";

  ScratchDirectory() = default;
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory();

  // Creates a new directory: `prefix`, a dash and random characters (each
  // '%' in `prefix` random too); a relative prefix is in the system's
  // temporary directory. Then takes its lock. Once only.
  std::error_code Create(const llvm::Twine& prefix);
  // Empty until Create succeeds.
  const std::string& path() const { return path_; }

  // Removes each directory in `parent` whose name is `.NAME.kernelc-` and
  // two groups of six characters joined by a dash (kernelc's naming of a
  // build's scratch directory in its output directory) and that holds a lock file nobody holds: what
  // killed builds left. A directory without a lock file (another tool's, an
  // older kernelc's, or one a build is creating this moment) is left alone.
  // Returns how many were removed; errors only make it remove fewer.
  static int ReclaimAbandoned(llvm::StringRef parent);

 private:
  std::string path_;
  int lock_fd_ = -1;
};

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_SCRATCH_DIRECTORY_H_
