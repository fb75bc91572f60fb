#include "compiler/driver/scratch_directory.h"

#include <fcntl.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <sys/file.h>
#include <unistd.h>

namespace kernelc::driver {

namespace {

// Opens `dir`'s lock file and takes its lock without waiting; the open
// descriptor, which holds the lock until it is closed, or -1. flock, not
// fcntl's locks (LLVM's lockFile): those belong to the process, so that a
// second build in the same process would not see the first one's.
int TryLock(llvm::StringRef dir, bool create) {
  llvm::SmallString<256> lock(dir);
  llvm::sys::path::append(lock, ScratchDirectory::kLockFile);
  int fd = ::open(lock.c_str(),
                  O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0),
                  0600);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Whether `name` is kernelc's naming of a build's scratch directory:
// ".NAME.kernelc-" then two groups of six characters joined by a dash (the
// prefix driver.cc gives Create, which adds the second group).
bool IsScratchName(llvm::StringRef name) {
  constexpr llvm::StringLiteral kMark = ".kernelc-";
  constexpr size_t kRandom = 13;  // "XXXXXX-YYYYYY"
  if (!name.starts_with(".") || name.size() < 1 + 1 + kMark.size() + kRandom)
    return false;
  llvm::StringRef random = name.take_back(kRandom);
  return name.drop_back(kRandom).ends_with(kMark) && random[6] == '-';
}

}  // namespace

ScratchDirectory::~ScratchDirectory() {
  // Removed while locked, so that no other build reclaims it meanwhile.
  if (!path_.empty()) llvm::sys::fs::remove_directories(path_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::error_code ScratchDirectory::Create(const llvm::Twine& prefix) {
  llvm::SmallString<256> path;
  std::error_code ec = llvm::sys::fs::createUniqueDirectory(prefix, path);
  if (ec) return ec;
  path_ = std::string(path);
  lock_fd_ = TryLock(path_, /*create=*/true);
  if (lock_fd_ < 0)
    return std::make_error_code(std::errc::resource_unavailable_try_again);
  return {};
}

int ScratchDirectory::ReclaimAbandoned(llvm::StringRef parent) {
  int removed = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(parent, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!IsScratchName(llvm::sys::path::filename(it->path()))) continue;
    // A directory itself, never where a link leads.
    llvm::sys::fs::file_status st;
    if (llvm::sys::fs::status(it->path(), st, /*follow=*/false) ||
        st.type() != llvm::sys::fs::file_type::directory_file)
      continue;
    int fd = TryLock(it->path(), /*create=*/false);
    if (fd < 0) continue;  // alive, or not a scratch directory of this kind
    if (!llvm::sys::fs::remove_directories(it->path())) ++removed;
    ::close(fd);
  }
  return removed;
}

}  // namespace kernelc::driver
