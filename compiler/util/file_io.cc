#include "compiler/util/file_io.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/Twine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <memory>
#include <system_error>
#include <utility>
#include <vector>

namespace kernelc {

bool MakeFileInPlace(const std::string& path,
                     const std::function<bool(const std::string& temp)>& make) {
  llvm::SmallString<256> model(llvm::sys::path::parent_path(path));
  llvm::sys::path::append(
      model, "." + llvm::sys::path::filename(path) + ".kernelc-tmp-%%%%%%%%");
  llvm::SmallString<256> temp;
  if (llvm::sys::fs::createUniqueFile(model, temp)) return false;
  if (make(std::string(temp)) && !llvm::sys::fs::rename(temp, path))
    return true;
  llvm::sys::fs::remove(temp);
  return false;
}

std::optional<std::string> ReadFile(const std::string& path) {
  // Not std::ifstream: libstdc++ throws from a failing read (a directory)
  // even with exceptions off. Volatile: read, not mapped, so a file that
  // shrinks meanwhile gives short contents rather than SIGBUS.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false,
                                  /*IsVolatile=*/true);
  if (!buffer) return std::nullopt;
  return (*buffer)->getBuffer().str();
}

namespace {

// One set of writes: temporaries first, renamed into place at the end.
// Whatever has not been committed is undone when this goes away, on every
// path out (exceptions included).
class Transaction {
 public:
  ~Transaction() {
    for (const auto& [tmp, path] : pending_) llvm::sys::fs::remove(tmp);
    // Deepest first, and only while empty: another writer may have put
    // something there meanwhile.
    for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it)
      llvm::sys::fs::remove(*it);
  }

  // Writes `contents` to a temporary file beside `path`, unless `path`
  // already holds exactly these bytes.
  Status Stage(const std::string& path, std::string_view contents) {
    if (std::optional<std::string> old = ReadFile(path);
        old && *old == contents)
      return Status();
    if (llvm::sys::fs::is_directory(path))
      return Error::User("cannot write '" + path + "': it is a directory");
    llvm::StringRef parent = llvm::sys::path::parent_path(path);
    if (!parent.empty()) {
      Status s = CreateDirectories(parent.str());
      if (!s.ok()) return s;
    }
    // A unique name per writer, so that builds writing the same file at
    // once do not share a temporary; a dot file, so that nothing takes a
    // leftover one (after a crash) for part of a package.
    llvm::SmallString<256> model(parent);
    llvm::sys::path::append(
        model, "." + llvm::sys::path::filename(path) + ".kernelc-tmp-%%%%%%%%");
    llvm::SmallString<256> tmp;
    int fd = -1;
    if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, tmp))
      return Error::User("cannot write '" + path + "': " + ec.message());
    pending_.emplace_back(std::string(tmp), path);
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << contents;
    out.close();
    if (out.has_error()) {
      std::string message = out.error().message();
      out.clear_error();
      return Error::User("cannot write '" + path + "': " + message);
    }
    return Status();
  }

  // How many files are staged and not yet renamed into place.
  size_t pending() const { return pending_.size(); }

  // Renames every temporary into place.
  Status Commit() {
    while (!pending_.empty()) {
      auto [tmp, path] = pending_.front();
      if (std::error_code ec = llvm::sys::fs::rename(tmp, path))
        return Error::User("cannot write '" + path + "': " + ec.message());
      pending_.erase(pending_.begin());
    }
    created_dirs_.clear();
    return Status();
  }

 private:
  Status CreateDirectories(const std::string& dir) {
    if (llvm::sys::fs::is_directory(dir)) return Status();
    llvm::StringRef parent = llvm::sys::path::parent_path(dir);
    if (!parent.empty()) {
      Status s = CreateDirectories(parent.str());
      if (!s.ok()) return s;
    }
    std::error_code ec =
        llvm::sys::fs::create_directory(dir, /*IgnoreExisting=*/false);
    if (ec && !llvm::sys::fs::is_directory(dir))
      return Error::User("cannot create '" + dir + "': " + ec.message());
    if (!ec) created_dirs_.push_back(dir);
    return Status();
  }

  std::vector<std::pair<std::string, std::string>> pending_;  // tmp, path
  std::vector<std::string> created_dirs_;                     // in order
};

}  // namespace

Status WriteFileIfChanged(const std::string& path, std::string_view contents) {
  Transaction t;
  Status s = t.Stage(path, contents);
  return s.ok() ? t.Commit() : s;
}

Status WriteFilesIfChanged(const std::string& dir,
                           const std::map<std::string, std::string>& files,
                           std::vector<std::string>* written) {
  Transaction t;
  std::vector<std::string> staged;
  for (const auto& [rel, contents] : files) {
    size_t before = t.pending();
    Status s = t.Stage(dir + "/" + rel, contents);
    if (!s.ok()) return s;
    if (t.pending() > before) staged.push_back(rel);
  }
  Status s = t.Commit();
  if (s.ok() && written != nullptr) *written = std::move(staged);
  return s;
}

}  // namespace kernelc
