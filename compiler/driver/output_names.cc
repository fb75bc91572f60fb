#include "compiler/driver/output_names.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Path.h>

#include "compiler/driver/paths.h"

namespace kernelc::driver {

namespace {

bool Under(llvm::StringRef path, llvm::StringRef dir) {
  return path == dir || dir == "/" ||
         (path.starts_with(dir) && path.size() > dir.size() &&
          path[dir.size()] == '/');
}

}  // namespace

OutputNames::OutputNames(model::Module& m) {
  bool first = true;
  model::ForEachPath(m, [&](std::string& p) {
    if (p.empty()) return;
    std::string abs = Absolute(p);
    llvm::StringRef dir = llvm::sys::path::parent_path(abs);
    if (first) {
      base_ = dir.str();
      first = false;
    }
    while (!Under(dir, base_))
      base_ = llvm::sys::path::parent_path(base_).str();
  });
}

std::string OutputNames::Name(const std::string& path) const {
  if (path.empty()) return path;
  std::string abs = Absolute(path);
  if (base_.empty() || !Under(abs, base_) || abs == base_) return path;
  return abs.substr(base_ == "/" ? 1 : base_.size() + 1);
}

}  // namespace kernelc::driver
