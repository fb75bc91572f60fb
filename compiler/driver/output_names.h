// How a package names the files of its model.
#ifndef KERNELC_COMPILER_DRIVER_OUTPUT_NAMES_H_
#define KERNELC_COMPILER_DRIVER_OUTPUT_NAMES_H_

#include <string>

#include "compiler/model/model.h"

namespace kernelc::driver {

// How the output (banners, docstrings, the manifest, the content hash that
// names the library) names the files of a model: relative to the deepest
// directory that holds them all. Output so depends on how the sources lie
// relative to one another, and not on where the checkout is or which
// directory kernelc runs in: the same sources built in two places give the
// same bytes (the house style keeps absolute paths out of output), and so
// do `kernelc build examples/saxpy.cu` and, in examples/, `kernelc build
// saxpy.cu`, which naming relative to the working directory would not.
// Diagnostics keep the paths as given.
class OutputNames {
 public:
  // The common directory of every path `m` holds (model::ForEachPath).
  explicit OutputNames(model::Module& m);

  // `path` relative to the common directory; `path` itself when it lies
  // elsewhere (an include directory) or is empty.
  std::string Name(const std::string& path) const;

 private:
  std::string base_;
};

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_OUTPUT_NAMES_H_
