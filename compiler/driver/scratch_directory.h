// A directory of temporary files that does not outlive its owner.
#ifndef KERNELC_COMPILER_DRIVER_SCRATCH_DIRECTORY_H_
#define KERNELC_COMPILER_DRIVER_SCRATCH_DIRECTORY_H_

#include <llvm/ADT/Twine.h>

#include <string>
#include <system_error>

namespace kernelc::driver {

// A directory that is removed, with everything in it, when this goes out of
// scope: on every return, and when an exception passes on its way to a
// front end's last-resort handler.
class ScratchDirectory {
 public:
  ScratchDirectory() = default;
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory();

  // Creates a new directory: `prefix`, a dash and random characters (each
  // '%' in `prefix` random too); a relative prefix is in the system's
  // temporary directory. Once only.
  std::error_code Create(const llvm::Twine& prefix);
  // Empty until Create succeeds.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_SCRATCH_DIRECTORY_H_
