#include "compiler/driver/toolkit_headers.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Path.h>

#include <algorithm>

#include "compiler/cache/build_cache.h"
#include "compiler/driver/paths.h"

namespace kernelc::driver {

std::vector<std::string> CudaToolkitHeaders(
    const std::vector<std::string>& sources,
    const std::vector<std::string>& include_dirs,
    const std::vector<std::string>& toolkit_dirs) {
  if (toolkit_dirs.empty()) return {};
  std::vector<std::string> files, search_path;
  for (const std::string& s : sources) {
    files.push_back(Absolute(s));
    search_path.push_back(
        std::string(llvm::sys::path::parent_path(files.back())));
  }
  for (const std::string& d : include_dirs) search_path.push_back(Absolute(d));
  search_path.insert(search_path.end(), toolkit_dirs.begin(),
                     toolkit_dirs.end());
  std::vector<std::string> headers;
  for (std::string& f : cache::IncludeClosure(files, search_path)) {
    bool in_toolkit = std::any_of(
        toolkit_dirs.begin(), toolkit_dirs.end(), [&](const std::string& d) {
          return llvm::StringRef(f).starts_with(d + "/");
        });
    if (in_toolkit) headers.push_back(std::move(f));
  }
  return headers;
}

}  // namespace kernelc::driver
