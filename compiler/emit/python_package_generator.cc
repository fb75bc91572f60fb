#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "compiler/emit/generators.h"
#include "compiler/emit/platform_shim.h"
#include "compiler/emit/python_function.h"
#include "compiler/emit/text.h"
#include "runtime/embedded_python.h"

namespace kernelc::emit {

using model::IsInput;
using model::IsResult;
using model::Param;
using model::Role;

namespace {

// Expressions as the generated function computes them, with the
// arithmetic of _kernelc.py.
expr::Resolver PyResolver(const sema::KernelPlan& kp) {
  expr::Resolver r;
  auto param = [&kp](std::string_view n) -> const Param* {
    return kp.kernel->FindParam(n);
  };
  r.value = [param](std::string_view n) -> std::string {
    const Param* p = param(n);
    if (!p) return Namer::PySymbol(n);
    if (p->role == Role::kDerived) return Namer::PyDerived(n);
    // As the handler reads it: a uint64 above INT64_MAX wraps.
    return fmt::format("_kc.int64({})", Namer::Python(n));
  };
  r.size = [](std::string_view n) {
    return fmt::format("{}.size", Namer::Python(n));
  };
  r.rank = [](std::string_view n) {
    return fmt::format("{}.ndim", Namer::Python(n));
  };
  r.dim = [](std::string_view n, int64_t d) {
    return fmt::format("{}.shape[{}]", Namer::Python(n), d);
  };
  return r;
}

// The autodiff wrapper, as sema paired the kernel: "vjp" (KC_VJP), "jvp"
// (KC_JVP), or "nodiff", which says that there is no derivative.
const char* Autodiff(const sema::KernelPlan& kp) {
  if (!kp.pairing) return "nodiff";
  return kp.pairing->mode == sema::Pairing::Mode::kVjp ? "vjp" : "jvp";
}

std::string_view VmapMethod(sema::KernelPlan::Batching batching) {
  switch (batching) {
    case sema::KernelPlan::Batching::kExpandDims:
      return "expand_dims";
    case sema::KernelPlan::Batching::kBroadcastAll:
      return "broadcast_all";
  }
  return "";
}

// "def name(args):" with the docstring, and `body`.
void EmitFunction(const sema::KernelPlan& kp, const std::string& name,
                  const std::function<void()>& body, Printer& p) {
  p.Emit({{"name", name},
          {"args", fmt::format("{}", fmt::join(PyArgs(*kp.kernel), ", "))},
          {"doc", PyDoc(kp)},
          {"body", body}},
         R"py(

           def $name$($args$):
               """$doc$"""
               $body$
         )py");
}

// The arguments converted and checked against their dtypes and ranks: an
// optional input may be None, a traced scalar becomes a 0-d array.
void EmitArguments(const sema::KernelPlan& kp, Printer& p) {
  const model::Kernel& k = *kp.kernel;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param& param = k.params[i];
    Printer::Subs subs = {{"var", Namer::Python(param.name)},
                          {"kernel", k.name},
                          {"param", param.name},
                          {"dtype", model::DTypeName(param.dtype)}};
    if (IsInput(param.role)) {
      subs.emplace_back("rank", kp.params[i].rank);
      subs.emplace_back(
          "optional",
          fmt::format("{}{}", kp.params[i].leading ? ", leading=True" : "",
                      param.optional ? ", optional=True" : ""));
      p.Emit(subs, R"py(
        $var$ = _kc.tensor("$kernel$", "$param$", $var$, "$dtype$", $rank$$optional$)
      )py");
    } else if (param.traced) {
      p.Emit(subs, R"py(
        $var$ = _kc.traced_scalar("$kernel$", "$param$", $var$, "$dtype$")
      )py");
    } else if (param.role == Role::kScalar) {
      p.Emit(subs, R"py(
        $var$ = _kc.scalar("$kernel$", "$param$", $var$, "$dtype$")
      )py");
    }
  }
}

// The op's body: the arguments, the shape symbols, derived values and
// checks, then the FFI call.
void EmitOpBody(const EmitRequest& request, const sema::KernelPlan& kp,
                Printer& p) {
  const model::Kernel& k = *kp.kernel;
  expr::Resolver r = PyResolver(kp);
  EmitArguments(kp, p);
  // An optional input that is None: a zero-size array of its dtype and
  // rank stands in for it, so that its shape reads as zeros.
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param& param = k.params[i];
    if (!param.optional) continue;
    p.Emit({{"present", Namer::PyPresent(param.name)},
            {"var", Namer::Python(param.name)},
            {"dtype", model::DTypeName(param.dtype)},
            {"rank", kp.params[i].rank}},
           R"py(
             $present$ = $var$ is not None
             $var$ = _kc.absent_as_empty($var$, "$dtype$", $rank$)
           )py");
  }
  // "...": the leading dimensions, those of the input that gives them,
  // which every other such input has.
  if (kp.leading >= 0) {
    const Param& ref = k.params[kp.leading];
    p.Emit({{"var", Namer::Python(ref.name)},
            {"rank", kp.params[kp.leading].rank}},
           R"py(
             _leading = $var$.shape[:$var$.ndim - $rank$]
           )py");
    for (size_t i = 0; i < k.params.size(); ++i) {
      const Param& param = k.params[i];
      if (!kp.params[i].leading || static_cast<int>(i) == kp.leading ||
          !IsInput(param.role))
        continue;
      p.Emit({{"kernel", k.name},
              {"param", param.name},
              {"var", Namer::Python(param.name)},
              {"rank", kp.params[i].rank},
              {"ref", ref.name},
              {"if_present",
               param.optional
                   ? fmt::format("if {}: ", Namer::PyPresent(param.name))
                   : ""}},
             R"py(
               $if_present$_kc.check_leading("$kernel$", "$param$", $var$, $rank$, _leading, "$ref$")
             )py");
    }
  }
  for (const sema::Symbol& sym : kp.symbols)
    p.Emit({{"symbol", Namer::PySymbol(sym.name)},
            {"var", Namer::Python(k.params[sym.param].name)},
            {"dim", sym.dim}},
           R"py(
             $symbol$ = $var$.shape[$dim$]
           )py");
  for (int i : kp.derived_order) {
    const Param& param = k.params[i];
    p.Emit({{"var", Namer::PyDerived(param.name)},
            {"kernel", k.name},
            {"param", param.name},
            {"expr", expr::EmitPython(kp.params[i].derived, r, "_kc")},
            {"dtype", model::DTypeName(param.dtype)},
            {"text", Quote(param.derived->text)}},
           R"py(
             $var$ = _kc.derived("$kernel$", "$param$", lambda: $expr$, "$dtype$", $text$)
           )py");
  }
  for (const sema::DimCheck& c : kp.checks) {
    const Param& param = k.params[c.param];
    p.Emit(
        {{"kernel", k.name},
         {"param", param.name},
         {"var", Namer::Python(param.name)},
         {"dim", c.dim},
         {"expr", expr::EmitPython(c.expr, r, "_kc")},
         {"text", Quote(c.text)},
         {"if_present",
          param.optional ? fmt::format("if {}: ", Namer::PyPresent(param.name))
                         : ""}},
        R"py(
             $if_present$_kc.check_dim("$kernel$", "$param$", $var$, $dim$, lambda: $expr$, $text$)
           )py");
  }
  std::vector<std::string> operands, attrs, aliases;
  std::map<std::string, int> operand_of;
  for (const Param& param : k.params) {
    if (model::IsOperand(param)) {
      operand_of[param.name] = static_cast<int>(operands.size());
      operands.push_back(Namer::Python(param.name));
    } else if (param.role == Role::kScalar) {
      attrs.push_back(fmt::format("{}: _kc.attr({})", Quote(param.name),
                                  Namer::Python(param.name)));
    }
    if (param.optional)
      attrs.push_back(fmt::format("{}: {}",
                                  Quote(Namer::PresentAttr(param.name)),
                                  Namer::PyPresent(param.name)));
  }
  if (kp.leading >= 0)
    attrs.push_back(
        fmt::format("{}: len(_leading)", Quote(Namer::LeadingAttr())));
  // The results, each with its shape and dtype; an InMut result is updated
  // in place and has its argument's shape.
  std::vector<size_t> results;
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (!IsResult(k.params[i].role)) continue;
    if (k.params[i].role == Role::kInMut)
      aliases.push_back(
          fmt::format("{}: {}", operand_of[k.params[i].name], results.size()));
    results.push_back(i);
  }
  auto out_shapes = [&] {
    for (size_t i : results) {
      const Param& param = k.params[i];
      const sema::ParamPlan& pp = kp.params[i];
      Printer::Subs subs = {{"kernel", k.name},
                            {"param", param.name},
                            {"dtype", model::DTypeName(param.dtype)}};
      if (param.role == Role::kInMut) {
        subs.emplace_back("shape", Namer::Python(param.name) + ".shape");
        subs.emplace_back("texts", "()");
      } else {
        std::vector<std::string> dims, texts;
        for (size_t d = 0; d < pp.out_dims.size(); ++d) {
          dims.push_back(expr::EmitPython(pp.out_dims[d], r, "_kc"));
          texts.push_back(Quote(pp.out_dim_texts[d]));
        }
        subs.emplace_back("shape", pp.leading ? "_leading + " + PyTuple(dims)
                                              : PyTuple(dims));
        subs.emplace_back("texts", PyTuple(texts));
      }
      if (i != results.front()) p.PrintRaw(",\n     ");
      p.Emit(
          subs,
          R"py(_kc.out_shape("$kernel$", "$param$", "$dtype$", lambda: $shape$, $texts$))py");
    }
  };
  p.Emit({{"target", request.namer().FfiTarget(k.Id())},
          {"results", out_shapes},
          {"operands", fmt::format("{}", fmt::join(operands, ", "))},
          {"aliases", fmt::format("{}", fmt::join(aliases, ", "))},
          {"vmap_method", VmapMethod(kp.batching)},
          {"attrs", fmt::format("{}", fmt::join(attrs, ", "))},
          {"return", results.size() == 1 ? "_results[0]" : "tuple(_results)"}},
         R"py(
           _results = _kc.call(
               "$target$",
               [$results$],
               [$operands$],
               {$aliases$},
               {$attrs$},
               "$vmap_method$")
           return $return$
         )py");
}

// The eager fast path of the public function: concrete JAX arrays, and
// static scalars given as the Python type of their kind (float, int, bool),
// go straight to the jitted op (see _kernelc.py's "eager calls"), whose
// trace converts and checks them as the full path would; jit keys its
// cache by the scalars' values, which convert alike. A float that is zero
// or NaN takes the full path, which keys it by its bits (`==` takes -0.0
// for 0.0 and NaN for nothing). Nothing for a kernel with a traced scalar
// (KC_TRACED), whose conversion decides the dtype of its operand: it takes
// the full path only.
void EmitEagerFastPath(const sema::KernelPlan& kp, Printer& p) {
  const model::Kernel& k = *kp.kernel;
  std::vector<std::string> tensors, tests;
  for (const Param& param : k.params) {
    if (param.traced) return;
    const std::string var = Namer::Python(param.name);
    if (IsInput(param.role)) {
      tensors.push_back(var);
    } else if (param.role == Role::kScalar) {
      const char* type = model::IsFloat(param.dtype)     ? "float"
                         : model::IsInteger(param.dtype) ? "int"
                                                         : "bool";
      tests.push_back(fmt::format("type({}) is {}", var, type));
      if (model::IsFloat(param.dtype))
        tests.push_back(fmt::format("{0} == {0} and {0} != 0.0", var));
    }
  }
  tests.insert(tests.begin(), fmt::format("_kc.arrays({})",
                                          fmt::join(tensors, ", ")));
  p.Emit({{"tests", fmt::format("{}", fmt::join(tests, " and "))},
          {"eager", Namer::PyPrivate(k.Id(), "eager")},
          {"args", fmt::format("{}", fmt::join(PyArgs(k), ", "))}},
         R"py(
           if $tests$:
               return $eager$($args$)
         )py");
}

// The public function: the eager fast path, else its arguments converted,
// then the wrappers that EmitWrappers builds. Concrete arguments cannot
// carry tangents: they run the jitted op without the autodiff wrapper,
// which would cost a trace on every eager call.
void EmitPublicBody(const sema::KernelPlan& kp, Printer& p) {
  const model::Kernel& k = *kp.kernel;
  EmitEagerFastPath(kp, p);
  EmitArguments(kp, p);
  // The jitted op takes its static float scalars as _kc.exact keys them.
  std::vector<std::string> eager_args;
  for (const Param& param : k.params) {
    if (!IsInput(param.role) && param.role != Role::kScalar) continue;
    const std::string var = Namer::Python(param.name);
    eager_args.push_back(param.role == Role::kScalar && !param.traced &&
                                 model::IsFloat(param.dtype)
                             ? fmt::format("_kc.exact({})", var)
                             : var);
  }
  p.Emit({{"args", fmt::format("{}", fmt::join(PyArgs(k), ", "))},
          {"eager_args", fmt::format("{}", fmt::join(eager_args, ", "))},
          {"eager", Namer::PyPrivate(k.Id(), "eager")},
          {"wrapped", Namer::PyPrivate(k.Id(), Autodiff(kp))}},
         R"py(
           if not _kc.traced($args$):
               return $eager$($eager_args$)
           return $wrapped$($args$)
         )py");
}

// A kernel that differentiates `k`, as _kc.Derivative: the kernel, its
// function, what each of its parameters and results is to `k`, and what it
// declares itself (which decides how it is differentiated in turn: higher
// orders).
std::string Derivative(const sema::ModulePlan& plan, const model::Kernel& k,
                       const sema::Pairing& pairing) {
  const bool vjp = pairing.mode == sema::Pairing::Mode::kVjp;
  const model::Kernel& d = *pairing.kernel;
  std::vector<std::string> params, derivatives, modes;
  for (size_t i = 0; i < d.params.size(); ++i) {
    const sema::PairedParam& q = pairing.params[i];
    if (q.kind == sema::PairedParam::Kind::kComputed) continue;
    const std::string of = Quote(k.params[q.of].name);
    if (q.kind == sema::PairedParam::Kind::kStatic)
      params.push_back(fmt::format("(\"static\", {})", of));
    else if (q.kind == sema::PairedParam::Kind::kValue)
      params.push_back(fmt::format("(\"value\", {})", of));
    else if (IsInput(d.params[i].role))
      params.push_back(
          fmt::format("(\"{}\", {})", vjp ? "cotangent" : "tangent", of));
    else
      derivatives.push_back(of);
  }
  for (const sema::KernelPlan& dp : plan.kernels) {
    if (dp.kernel != &d) continue;
    if (dp.pairing && dp.pairing->mode == sema::Pairing::Mode::kVjp)
      modes.push_back(Quote("vjp"));
    if (dp.tangent ||
        (dp.pairing && dp.pairing->mode == sema::Pairing::Mode::kJvp))
      modes.push_back(Quote("jvp"));
  }
  return fmt::format("{}=_kc.Derivative(\n    {}, {},\n    {},\n    {}, {})",
                     vjp ? "vjp" : "jvp", Quote(d.name), PyFunction(d),
                     PyTuple(params), PyTuple(derivatives), PyTuple(modes));
}

// Module-level statements, after every function is defined, that wrap the
// op: a sharding rule (KC_PARALLEL), under the jitted op of eager calls and
// the autodiff wrapper (_kc.differentiable from KC_VJP and KC_JVP, or a rule
// that says there is no derivative). Each is a _kc.Lazy, built at its first
// use: jax's wrappers cost milliseconds to build, and importing a package
// should cost little beyond loading its library.
void EmitWrappers(const sema::ModulePlan& plan, const sema::KernelPlan& kp,
                  Printer& p) {
  const model::Kernel& k = *kp.kernel;
  std::vector<std::string> names, statics, results;
  for (const Param& param : k.params) {
    if (IsInput(param.role) || param.role == Role::kScalar) {
      if (model::IsStatic(param))
        statics.push_back(std::to_string(names.size()));
      names.push_back(Quote(param.name));
    }
    if (IsResult(param.role)) results.push_back(Quote(param.name));
  }
  std::string op = Namer::PyPrivate(k.Id(), "op");
  if (!kp.parallel.empty()) {
    // One factor per dimension: the parallel symbols by name, every other
    // dimension its own factor, which must stay replicated.
    int fresh = 0;
    auto factors = [&](size_t i) {
      std::vector<std::string> f;
      for (const std::string& s : kp.params[i].dim_symbols) {
        bool parallel = std::find(kp.parallel.begin(), kp.parallel.end(), s) !=
                        kp.parallel.end();
        f.push_back(Quote(parallel ? "p_" + s : fmt::format("r{}", fresh++)));
      }
      return PyTuple(f);
    };
    std::vector<std::string> operands, outs, sums;
    bool any_sum = false;
    for (size_t i = 0; i < k.params.size(); ++i)
      if (model::IsOperand(k.params[i])) operands.push_back(factors(i));
    for (size_t i = 0; i < k.params.size(); ++i) {
      if (!IsResult(k.params[i].role)) continue;
      outs.push_back(factors(i));
      // KC_SUM: the parallel factor the result is a sum over.
      const std::string& sum = kp.params[i].sum;
      sums.push_back(sum.empty() ? "None" : Quote("p_" + sum));
      any_sum |= !sum.empty();
    }
    const std::string sharded = Namer::PyPrivate(k.Id(), "sharded");
    p.Emit({{"sharded", sharded},
            {"op", op},
            {"statics", PyTuple(statics)},
            {"operands", PyTuple(operands)},
            {"outs", PyTuple(outs)},
            {"sums", any_sum ? ", sums=" + PyTuple(sums) : ""}},
           R"py(
             $sharded$ = _kc.Lazy(lambda: _kc.sharded($op$, $statics$, $operands$, $outs$$sums$))
           )py");
    op = sharded + ".get()";
  }
  // Eager calls run under jit: one compiled call per shapes, dtypes and
  // static scalars, where the sharding rule applies too.
  p.Emit({{"eager", Namer::PyPrivate(k.Id(), "eager")},
          {"op", op},
          {"statics", PyTuple(statics)}},
         R"py(
           $eager$ = _kc.Lazy(lambda: _kc.jit($op$, $statics$))
         )py");
  const std::string wrapper = Namer::PyPrivate(k.Id(), Autodiff(kp));
  if (!kp.pairing) {
    // In-place parameters, named in the error that differentiating gives.
    std::vector<std::string> inplace;
    for (const Param& param : k.params)
      if (param.role == Role::kInMut) inplace.push_back(Quote(param.name));
    p.Emit({{"wrapper", wrapper},
            {"kernel", Quote(k.name)},
            {"op", op},
            {"statics", PyTuple(statics)},
            {"inplace", inplace.empty() ? "" : ", " + PyTuple(inplace)}},
           R"py(
             $wrapper$ = _kc.Lazy(lambda: _kc.without_vjp($kernel$, $op$, $statics$$inplace$))
           )py");
    return;
  }
  // KC_VJP or KC_JVP, or both.
  std::string derivatives = Derivative(plan, k, *kp.pairing);
  if (kp.tangent) derivatives += ",\n" + Derivative(plan, k, *kp.tangent);
  p.Emit({{"wrapper", wrapper},
          {"kernel", Quote(k.name)},
          {"op", op},
          {"names", PyTuple(names)},
          {"statics", PyTuple(statics)},
          {"results", PyTuple(results)},
          {"derivatives", derivatives}},
         R"py(
           $wrapper$ = _kc.Lazy(lambda: _kc.differentiable(
               $kernel$, $op$, $names$, $statics$, $results$,
               $derivatives$))
         )py");
}

// The function of a template kernel's op: calls the variant that takes
// the input element types (see _kernelc.py's `variant`), which the table
// EmitVariantTable defines.
void EmitDispatch(const sema::ModulePlan& plan, const sema::OpPlan& op,
                  Printer& p) {
  const model::Kernel& first = *plan.kernels[op.variants.front()].kernel;
  std::vector<std::string> args = PyArgs(first), inputs;
  for (const Param& param : first.params)
    if (IsInput(param.role)) inputs.push_back(Namer::Python(param.name));
  p.Emit({{"name", Namer::Python(op.name)},
          {"args", fmt::format("{}", fmt::join(args, ", "))},
          {"doc", PyOpDoc(plan, op)},
          {"op", Quote(op.name)},
          {"variants", Namer::PyPrivate(op.name, "variants")},
          {"inputs", PyTuple(inputs)}},
         R"py(

           def $name$($args$):
               """$doc$"""
               return _kc.variant($op$, $variants$, $inputs$)($args$)
         )py");
}

// A template kernel's variants: per variant, its name, its input tensors'
// names and element types, and its function.
void EmitVariantTable(const sema::ModulePlan& plan, const sema::OpPlan& op,
                      Printer& p) {
  std::vector<std::string> rows;
  for (int i : op.variants) {
    const model::Kernel& k = *plan.kernels[i].kernel;
    std::vector<std::string> inputs;
    for (const Param& param : k.params)
      if (IsInput(param.role))
        inputs.push_back(
            PyTuple({Quote(param.name),
                     Quote(std::string(model::DTypeName(param.dtype)))}));
    rows.push_back(fmt::format("    ({}, {}, {}),", Quote(k.name),
                               PyTuple(inputs), PyFunction(k)));
  }
  p.Emit({{"variants", Namer::PyPrivate(op.name, "variants")},
          {"rows", fmt::format("{}", fmt::join(rows, "\n"))}},
         R"py(
           $variants$ = (
           $rows$
           )
         )py");
}

}  // namespace

Status PythonPackageGenerator::Generate(const EmitRequest& request,
                                        GeneratorContext& context) const {
  const sema::ModulePlan& plan = request.plan();
  const std::vector<sema::KernelPlan>& kernels = plan.kernels;
  // The package's functions are its ops (a template kernel's variants are
  // one); the custom-call targets are its kernels'.
  std::vector<std::string> targets;
  for (const sema::KernelPlan& kp : kernels)
    targets.push_back(Quote(request.namer().FfiTarget(kp.kernel->Id())));
  Printer p;
  auto registrations = [&] {
    for (const sema::KernelPlan& kp : kernels)
      for (const PlatformShim* platform : request.platforms())
        if (platform->Runs(*kp.kernel))
          platform->EmitPyRegistration(request, *kp.kernel, p);
  };
  // Each kernel's op (the checks and the FFI call) and its function, with
  // a template kernel's op after its variants; then the wrappers that join
  // them.
  auto functions = [&] {
    bool first = true;
    for (const sema::OpPlan& op : plan.ops) {
      for (int i : op.variants) {
        const sema::KernelPlan& kp = kernels[i];
        if (!first) p.PrintRaw("\n");
        first = false;
        EmitFunction(
            kp, Namer::PyPrivate(kp.kernel->Id(), "op"),
            [&] { EmitOpBody(request, kp, p); }, p);
        p.PrintRaw("\n");
        EmitFunction(
            kp, PyFunction(*kp.kernel), [&] { EmitPublicBody(kp, p); }, p);
      }
      if (!op.is_template) continue;
      p.PrintRaw("\n");
      EmitDispatch(plan, op, p);
    }
    if (kernels.empty()) return;
    p.Emit(R"py(

      # Wrappers, each built at its first use: jit of eager calls, autodiff (from KC_VJP and KC_JVP, or an error without them) and sharding rules (KC_PARALLEL); see _kernelc.py.
    )py");
    for (const sema::KernelPlan& kp : kernels) EmitWrappers(plan, kp, p);
    for (const sema::OpPlan& op : plan.ops)
      if (op.is_template) EmitVariantTable(plan, op, p);
  };
  const model::BuildInfo& info = request.info();
  p.EmitTemplate("py/init.py.tmpl",
                 {{"banner", request.Banner(request.module().sources, "#")},
                  {"package", info.package},
                  {"ffi_api", info.ffi_api},
                  {"jaxlib_floor", info.jaxlib_floor},
                  {"function_list",
                   fmt::format("{}", fmt::join(PyOpNames(plan), ", "))},
                  {"library", request.namer().LibraryFile()},
                  {"registrations", registrations},
                  {"targets", fmt::format("{}{}", fmt::join(targets, ", "),
                                          targets.size() == 1 ? "," : "")},
                  {"all", PyAll(plan)},
                  {"functions", functions}});
  Status s = context.Write(GeneratorContext::Tree::kPackage, "__init__.py", p);
  if (!s.ok()) return s;
  // The package's Python runtime, verbatim: the same bytes in every
  // package, so it is linted and tested as itself.
  const std::vector<EmbeddedFile>& runtime = embedded::PythonRuntime();
  if (runtime.size() != 1)
    return Error::Internal("kernelc embeds no Python runtime");
  return context.Write(GeneratorContext::Tree::kPackage, "_kernelc.py",
                       std::string(runtime.front().contents));
}

}  // namespace kernelc::emit
