#include <fmt/format.h>

#include "compiler/emit/generators.h"
#include "compiler/emit/python_function.h"

namespace kernelc::emit {

using model::DType;
using model::IsInput;
using model::IsResult;
using model::Param;
using model::Role;

namespace {

// An op's function: a template kernel's variants share their parameters'
// names and roles, so the first variant's serve.
void EmitStub(const sema::ModulePlan& plan, const sema::OpPlan& op,
              Printer& p) {
  const model::Kernel& k = *plan.kernels[op.variants.front()].kernel;
  std::vector<std::string> args;
  for (const Param& param : k.params) {
    if (IsInput(param.role))
      args.push_back(Namer::Python(param.name) +
                     (param.optional ? ": Optional[jax.typing.ArrayLike]"
                                     : ": jax.typing.ArrayLike"));
    else if (param.traced)
      args.push_back(Namer::Python(param.name) + ": jax.typing.ArrayLike");
    else if (param.role == Role::kScalar)
      // The stub's aliases (init.pyi.tmpl): what _kernelc.scalar takes.
      args.push_back(fmt::format(
          "{}: {}", Namer::Python(param.name),
          param.dtype == DType::kBool
              ? "_Bool"
              : (model::IsFloat(param.dtype) ? "_Float" : "_Int")));
  }
  int results = 0;
  for (const Param& param : k.params) results += IsResult(param.role);
  std::vector<std::string> arrays(results, "jax.Array");
  p.Emit({{"name", Namer::Python(op.name)},
          {"args", fmt::format("{}", fmt::join(args, ", "))},
          {"returns", results == 1
                          ? "jax.Array"
                          : fmt::format("Tuple[{}]", fmt::join(arrays, ", "))},
          {"doc", PyOpDoc(plan, op)}},
         R"py(

           def $name$($args$) -> $returns$:
               """$doc$"""
               ...
         )py");
}

}  // namespace

Status StubsGenerator::Generate(const EmitRequest& request,
                                GeneratorContext& context) const {
  Printer p;
  p.EmitTemplate("py/init.pyi.tmpl",
                 {{"banner", request.Banner(request.module().sources, "#")},
                  {"package", request.info().package},
                  {"all", PyAll(request.plan())},
                  {"functions", [&] {
                     bool first = true;
                     for (const sema::OpPlan& op : request.plan().ops) {
                       if (!first) p.PrintRaw("\n");
                       first = false;
                       EmitStub(request.plan(), op, p);
                     }
                   }}});
  return context.Write(GeneratorContext::Tree::kPackage, "__init__.pyi", p);
}

}  // namespace kernelc::emit
