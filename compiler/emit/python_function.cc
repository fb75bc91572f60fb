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

// The Args and Returns sections of a kernel's docstring.
std::string Sections(const sema::KernelPlan& kp) {
  const model::Kernel& k = *kp.kernel;
  std::vector<std::string> lines;
  std::vector<std::string> results;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param& p = k.params[i];
    if (IsInput(p.role))
      lines.push_back(fmt::format(
          "        {}: {}{}{}", Namer::Python(p.name), ShapeDoc(kp, i),
          p.role == Role::kInMut ? " (updated copy returned)" : "",
          p.optional ? " or None" : ""));
    else if (p.role == Role::kScalar)
      lines.push_back(fmt::format("        {}: {} ({})", Namer::Python(p.name),
                                  model::DTypeName(p.dtype),
                                  p.traced ? "traced" : "static"));
    if (IsResult(p.role))
      results.push_back(fmt::format("        {}: {}", p.name, ShapeDoc(kp, i)));
  }
  std::string doc;
  if (!lines.empty())
    doc += fmt::format("\n    Args:\n{}\n", fmt::join(lines, "\n"));
  doc += fmt::format("\n    Returns:\n{}\n", fmt::join(results, "\n"));
  return doc;
}

}  // namespace

std::string PyFunction(const model::Kernel& k) {
  return k.instantiation ? Namer::PyVariant(k.Id()) : Namer::Python(k.name);
}

std::string PyOpDoc(const sema::ModulePlan& plan, const sema::OpPlan& op) {
  if (!op.is_template) return PyDoc(plan.kernels[op.variants.front()]);
  const model::Kernel& first = *plan.kernels[op.variants.front()].kernel;
  std::string doc = fmt::format(
      "Runs template kernel '{}' ({}): the variant that takes the input "
      "element types.\n",
      op.name, Escape(first.source));
  for (int i : op.variants) {
    const sema::KernelPlan& kp = plan.kernels[i];
    doc += fmt::format("\n    Variant {}:\n{}", kp.kernel->name, Sections(kp));
  }
  return doc + "    ";
}

std::vector<std::string> PyArgs(const model::Kernel& k) {
  std::vector<std::string> args;
  for (const Param& p : k.params)
    if (IsInput(p.role) || p.role == Role::kScalar)
      args.push_back(Namer::Python(p.name));
  return args;
}

std::string PyDoc(const sema::KernelPlan& kp) {
  const model::Kernel& k = *kp.kernel;
  return fmt::format("Runs kernel '{}' ({}).\n{}    ", k.name,
                     Escape(k.source), Sections(kp));
}

std::vector<std::string> PyOpNames(const sema::ModulePlan& plan) {
  std::vector<std::string> names;
  for (const sema::OpPlan& op : plan.ops)
    names.push_back(Namer::Python(op.name));
  return names;
}

std::string PyAll(const sema::ModulePlan& plan) {
  std::vector<std::string> quoted;
  for (const std::string& name : PyOpNames(plan))
    quoted.push_back(Quote(name));
  return fmt::format("{}", fmt::join(quoted, ", "));
}

}  // namespace kernelc::emit
