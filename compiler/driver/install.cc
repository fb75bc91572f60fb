#include "compiler/driver/install.h"

#include <llvm/Support/FileSystem.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "compiler/cache/build_cache.h"
#include "compiler/util/file_io.h"

namespace kernelc::driver {

namespace {

// The library that a manifest's text names, when it names one directly
// inside the package.
std::string ManifestLibrary(const std::string& manifest) {
  nlohmann::json j = nlohmann::json::parse(manifest, nullptr, false);
  if (!j.is_object() || !j.contains("library") || !j["library"].is_string())
    return "";
  std::string library = j["library"].get<std::string>();
  if (!cache::IsPackagePath(library) || library.find('/') != std::string::npos)
    return "";
  return library;
}

}  // namespace

Status InstallPackage(const std::string& package_dir,
                      const std::map<std::string, std::string>& files,
                      const std::string& library_file,
                      std::vector<std::string>* written) {
  std::optional<std::string> old_manifest =
      ReadFile(package_dir + "/kernelc.json");
  Status s = WriteFilesIfChanged(package_dir, files, written);
  if (s.ok() && old_manifest) {
    std::string old_lib = ManifestLibrary(*old_manifest);
    if (!old_lib.empty() && old_lib != library_file)
      llvm::sys::fs::remove(package_dir + "/" + old_lib);
  }
  return s;
}

std::string LibraryOf(const std::map<std::string, std::string>& files) {
  auto it = files.find("kernelc.json");
  return it == files.end() ? "" : ManifestLibrary(it->second);
}

}  // namespace kernelc::driver
