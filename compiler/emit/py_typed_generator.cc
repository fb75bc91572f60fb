#include "compiler/emit/generators.h"

namespace kernelc::emit {

// PEP 561: a package that ships its types says so with this file. Without
// it, mypy and pyright skip an installed package's __init__.pyi.
Status PyTypedGenerator::Generate(const EmitRequest& /*request*/,
                                  GeneratorContext& context) const {
  return context.Write(GeneratorContext::Tree::kPackage, "py.typed", "");
}

}  // namespace kernelc::emit
