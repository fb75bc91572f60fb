#include "compiler/driver/scratch_directory.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>

namespace kernelc::driver {

ScratchDirectory::~ScratchDirectory() {
  if (!path_.empty()) llvm::sys::fs::remove_directories(path_);
}

std::error_code ScratchDirectory::Create(const llvm::Twine& prefix) {
  llvm::SmallString<256> path;
  std::error_code ec = llvm::sys::fs::createUniqueDirectory(prefix, path);
  if (!ec) path_ = std::string(path);
  return ec;
}

}  // namespace kernelc::driver
