// Installing a built package into its directory.
#ifndef KERNELC_COMPILER_DRIVER_INSTALL_H_
#define KERNELC_COMPILER_DRIVER_INSTALL_H_

#include <map>
#include <string>
#include <vector>

#include "compiler/util/status.h"

namespace kernelc::driver {

// Writes a package's files (relative path -> bytes) into `package_dir` and
// removes the library of an earlier build there under another content
// hash. The files are written as one change (WriteFilesIfChanged), file by
// file rather than as a new directory renamed over the old one: unchanged
// files keep their modification times, and files that are not kernelc's
// stay. A failure leaves the earlier package as it was. `written`, when
// set, receives the files whose contents changed.
Status InstallPackage(const std::string& package_dir,
                      const std::map<std::string, std::string>& files,
                      const std::string& library_file,
                      std::vector<std::string>* written = nullptr);

// The library file that a package's manifest (files["kernelc.json"])
// names; empty when the manifest names none, or a file that is not
// directly inside the package.
std::string LibraryOf(const std::map<std::string, std::string>& files);

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_INSTALL_H_
