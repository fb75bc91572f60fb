// Prints kernelc's diagnostic catalogue, one entry a line (CatalogueText):
// the golden case tests/golden/diag_catalogue holds its output, so that a
// change to a message shows in review like a change to generated code.
#include <cstdio>

#include "compiler/diag/catalogue.h"

int main() {
  std::fputs(kernelc::diag::CatalogueText().c_str(), stdout);
  return 0;
}
