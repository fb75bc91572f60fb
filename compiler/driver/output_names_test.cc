#include "compiler/driver/output_names.h"

#include <catch2/catch.hpp>

namespace kernelc::driver {
namespace {

TEST_CASE("Output names are relative to the sources' common directory") {
  model::Module m;
  m.sources = {"/work/a/src/k.cu", "/work/a/lib/l.cu"};
  model::Kernel k;
  k.source = "/work/a/src/k.cu";
  k.loc.file = "/work/a/src/inc/k.h";
  m.kernels.push_back(k);
  OutputNames names(m);
  CHECK(names.Name("/work/a/src/k.cu") == "src/k.cu");
  CHECK(names.Name("/work/a/src/inc/k.h") == "src/inc/k.h");
  CHECK(names.Name("/work/a/src/../lib/l.cu") == "lib/l.cu");
  // Elsewhere, or empty: as given.
  CHECK(names.Name("/usr/include/x.h") == "/usr/include/x.h");
  CHECK(names.Name("") == "");
}

TEST_CASE("One source is named by its file name") {
  model::Module m;
  m.sources = {"/deep/down/k.cu"};
  OutputNames names(m);
  CHECK(names.Name("/deep/down/k.cu") == "k.cu");
}

}  // namespace
}  // namespace kernelc::driver
