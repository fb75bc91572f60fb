#include "compiler/emit/python_function.h"

#include <fmt/format.h>

#include "compiler/emit/namer.h"
#include "compiler/emit/text.h"

namespace kernelc::emit {

using model::IsInput;
using model::IsResult;
using model::Param;
using model::Role;

namespace {

// "float32[n, m]"; "_" for each dimension of a tensor without a shape.
std::string ShapeDoc(const sema::KernelPlan& kp, size_t i) {
  const Param& p = kp.kernel->params[i];
  std::string shape;
  if (p.shape) {
    shape = p.shape->text;
  } else {
    std::vector<std::string> any(kp.params[i].rank, "_");
    shape = fmt::format("{}", fmt::join(any, ", "));
  }
  return fmt::format("{}[{}]", model::DTypeName(p.dtype), shape);
}

}  // namespace

std::vector<std::string> PyArgs(const model::Kernel& k) {
  std::vector<std::string> args;
  for (const Param& p : k.params)
    if (IsInput(p.role) || p.role == Role::kScalar)
      args.push_back(Namer::Python(p.name));
  return args;
}

std::string PyDoc(const sema::KernelPlan& kp) {
  const model::Kernel& k = *kp.kernel;
  std::vector<std::string> lines;
  std::vector<std::string> results;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param& p = k.params[i];
    if (IsInput(p.role))
      lines.push_back(fmt::format(
          "        {}: {}{}", Namer::Python(p.name), ShapeDoc(kp, i),
          p.role == Role::kInMut ? " (updated copy returned)" : ""));
    else if (p.role == Role::kScalar)
      lines.push_back(fmt::format("        {}: {} (static)",
                                  Namer::Python(p.name),
                                  model::DTypeName(p.dtype)));
    if (IsResult(p.role))
      results.push_back(fmt::format("        {}: {}", p.name, ShapeDoc(kp, i)));
  }
  std::string doc =
      fmt::format("Runs kernel '{}' ({}).\n", k.name, Escape(k.source));
  if (!lines.empty())
    doc += fmt::format("\n    Args:\n{}\n", fmt::join(lines, "\n"));
  doc += fmt::format("\n    Returns:\n{}\n    ", fmt::join(results, "\n"));
  return doc;
}

}  // namespace kernelc::emit
