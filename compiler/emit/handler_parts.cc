#include "compiler/emit/handler_parts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "compiler/emit/namer.h"
#include "compiler/emit/text.h"

namespace kernelc::emit {

using model::Access;
using model::DType;
using model::IsInput;
using model::IsResult;
using model::Param;
using model::Role;

namespace {

std::string_view FfiDataType(DType t) {
  switch (t) {
    case DType::kBool:
      return "PRED";
    case DType::kI8:
      return "S8";
    case DType::kI16:
      return "S16";
    case DType::kI32:
      return "S32";
    case DType::kI64:
      return "S64";
    case DType::kU8:
      return "U8";
    case DType::kU16:
      return "U16";
    case DType::kU32:
      return "U32";
    case DType::kU64:
      return "U64";
    case DType::kF16:
      return "F16";
    case DType::kBF16:
      return "BF16";
    case DType::kF32:
      return "F32";
    case DType::kF64:
      return "F64";
  }
  return "INVALID";
}

// Expressions as the handler computes them: parameters by their handler
// names, shapes from the buffers.
expr::Resolver CppResolver(const sema::KernelPlan& kp) {
  expr::Resolver r;
  auto param = [&kp](std::string_view n) -> const Param* {
    return kp.kernel->FindParam(n);
  };
  r.value = [param](std::string_view n) -> std::string {
    const Param* p = param(n);
    if (!p) return Namer::CppLocal("s", n);
    if (p->role == Role::kDerived) return Namer::CppLocal("d", n);
    return fmt::format("static_cast<int64_t>({})", Namer::CppLocal("a", n));
  };
  r.size = [param](std::string_view n) {
    return fmt::format("static_cast<int64_t>({}.element_count())",
                       HandlerParts::BufferVar(*param(n)));
  };
  r.rank = [param](std::string_view n) {
    return fmt::format("static_cast<int64_t>({}.dimensions().size())",
                       HandlerParts::BufferVar(*param(n)));
  };
  r.dim = [param](std::string_view n, int64_t d) {
    return HandlerParts::DimRef(HandlerParts::BufferVar(*param(n)), d);
  };
  return r;
}

std::string InitLiteral(const Param& p, const sema::InitValue& v) {
  std::string cpp(model::DTypeCppName(p.dtype));
  if (model::IsFloat(p.dtype)) {
    std::string lit;
    if (std::isnan(v.real)) {
      lit = "__builtin_nan(\"\")";
    } else if (std::isinf(v.real)) {
      lit = v.real > 0 ? "__builtin_inf()" : "-__builtin_inf()";
    } else {
      lit = fmt::format("{:.17g}", v.real);
      if (lit.find_first_of(".e") == std::string::npos) lit += ".0";
    }
    // 16-bit floats convert from float.
    if (p.dtype == DType::kF16 || p.dtype == DType::kBF16)
      return fmt::format("{}(static_cast<float>({}))", cpp, lit);
    return fmt::format("static_cast<{}>({})", cpp, lit);
  }
  if (p.dtype == DType::kBool) return v.integer ? "true" : "false";
  if (v.is_unsigned_large)
    return fmt::format("static_cast<{}>(UINT64_C({}))", cpp,
                       v.unsigned_integer);
  if (v.integer == INT64_MIN) return "INT64_MIN";
  return fmt::format("static_cast<{}>(INT64_C({}))", cpp, v.integer);
}

// The buffers of a batched call in the order the batch numbers them:
// inputs (and in-place tensors, traced scalars) in declaration order, then
// results.
std::vector<const Param*> BatchOrder(const model::Kernel& k) {
  std::vector<const Param*> order;
  for (const Param& p : k.params)
    if (model::IsOperand(p)) order.push_back(&p);
  for (const Param& p : k.params)
    if (IsResult(p.role)) order.push_back(&p);
  return order;
}

}  // namespace

HandlerParts::HandlerParts(const sema::KernelPlan& kp)
    : kp_(kp), k_(*kp.kernel) {}

std::string HandlerParts::BufferVar(const Param& p) {
  return Namer::CppLocal(IsResult(p.role) ? "o" : "b", p.name);
}

// jax lowers integer attributes through a signed 64-bit MLIR integer, so
// uint64 values travel as their int64 bit pattern and are reinterpreted in
// the handler (KernelArgs).
std::string_view HandlerParts::AttrCppType(DType t) {
  return t == DType::kU64 ? "int64_t" : model::DTypeCppName(t);
}

bool HandlerParts::HasFills() const {
  for (const sema::ParamPlan& pp : kp_.params)
    if (pp.init) return true;
  return false;
}

std::string HandlerParts::Cpp(const expr::NodePtr& e) const {
  return expr::EmitCpp(e, CppResolver(kp_), "ev");
}

std::vector<std::string> HandlerParts::ImplParams(std::string context) const {
  std::vector<std::string> params = {std::move(context)};
  for (const Param& p : k_.params) {
    if (model::IsOperand(p))
      params.push_back("ffi::AnyBuffer " + Namer::CppLocal("b", p.name));
    else if (p.role == Role::kScalar)
      params.push_back(fmt::format("{} {}", AttrCppType(p.dtype),
                                   Namer::CppLocal("a", p.name)));
    if (p.optional) params.push_back("bool " + PresentVar(p));
  }
  if (kp_.leading >= 0) params.push_back("int64_t " + LeadingVar());
  for (const Param& p : k_.params)
    if (IsResult(p.role))
      params.push_back("ffi::Result<ffi::AnyBuffer> " +
                       Namer::CppLocal("r", p.name));
  return params;
}

void HandlerParts::EmitHandlerSymbol(Printer& p, std::string_view symbol,
                                     std::string_view impl,
                                     std::string_view stage,
                                     std::string_view traits,
                                     std::string_view context) const {
  // The operands in the handler's parameter order; an attribute's is read
  // by its place in XLA's order, by name, filled in once all are known.
  struct Attr {
    std::string name;
    DType type;
    size_t arg;  // its place in args
  };
  std::vector<Attr> attrs;
  std::vector<std::string> args;
  int64_t arg_count = 0, ret_count = 0;
  auto attr = [&](std::string name, DType type) {
    attrs.push_back({std::move(name), type, args.size()});
    args.emplace_back();
  };
  for (const Param& param : k_.params) {
    if (model::IsOperand(param))
      args.push_back(fmt::format("::kc::ffi::Arg(call_frame, {})", arg_count++));
    else if (param.role == Role::kScalar)
      attr(param.name, param.dtype);
    if (param.optional) attr(Namer::PresentAttr(param.name), DType::kBool);
  }
  if (kp_.leading >= 0) attr(Namer::LeadingAttr(), DType::kI64);
  for (const Param& param : k_.params)
    if (IsResult(param.role))
      args.push_back(fmt::format("::kc::ffi::Ret(call_frame, {})", ret_count++));
  std::sort(attrs.begin(), attrs.end(),
            [](const Attr& a, const Attr& b) { return a.name < b.name; });
  std::vector<std::string> table;
  for (const Attr& a : attrs) {
    // A uint64 travels as its int64 bit pattern (AttrCppType).
    const DType travels = a.type == DType::kU64 ? DType::kI64 : a.type;
    args[a.arg] = fmt::format("::kc::ffi::Attr<{}>(call_frame, {})",
                              AttrCppType(a.type), table.size());
    table.push_back(fmt::format("{{{}, {}, XLA_FFI_DataType_{}}}",
                                Quote(a.name), a.name.size(),
                                FfiDataType(travels)));
  }
  args.insert(args.begin(), "kc_context");
  p.Emit({{"symbol", symbol},
          {"impl", impl},
          {"stage", stage},
          {"traits", traits},
          {"context", context},
          {"args", fmt::format("{}", fmt::join(args, ",\n"))},
          {"arg_count", arg_count},
          {"ret_count", ret_count},
          {"attr_count", attrs.size()},
          {"attributes",
           [&] {
             if (table.empty()) return;
             p.Emit({{"table", fmt::format("{}", fmt::join(table, ",\n"))}},
                    R"code(
                      static constexpr ::kc::ffi::Attribute kc_attributes[] = {
                          $table$};
                    )code");
           }},
          {"table", table.empty() ? "nullptr" : "kc_attributes"}},
         R"code(
           extern "C" __attribute__((visibility("default"))) XLA_FFI_Error* $symbol$(
               XLA_FFI_CallFrame* call_frame) {
             $attributes$
             static constexpr ::kc::ffi::Signature kc_signature = {
                 $stage$, $traits$, $arg_count$, $ret_count$, $attr_count$, $table$};
             if (!::kc::ffi::Accepts(call_frame, kc_signature)) {
               return ::kc::ffi::Refuse(call_frame, kc_signature);
             }
             $context$
             return $impl$(
                 $args$).Encode(call_frame->api);
           }
         )code");
}

std::vector<std::string> HandlerParts::ElementParams() const {
  const std::string tensor = "const ::kc::rt::Tensor<ffi::DataType>& ";
  std::vector<std::string> params;
  for (const Param& p : k_.params) {
    if (model::IsOperand(p))
      params.push_back(tensor + Namer::CppLocal("b", p.name));
    else if (p.role == Role::kScalar)
      params.push_back(fmt::format("{} {}", AttrCppType(p.dtype),
                                   Namer::CppLocal("a", p.name)));
    if (p.optional) params.push_back("bool " + PresentVar(p));
  }
  if (kp_.leading >= 0) params.push_back("int64_t " + LeadingVar());
  for (const Param& p : k_.params)
    if (IsResult(p.role)) params.push_back(tensor + BufferVar(p));
  return params;
}

std::vector<std::string> HandlerParts::ElementArgs(
    const std::function<std::string(int operand)>& tensor,
    std::string_view values) const {
  std::vector<std::string> args;
  int operand = 0;
  for (const Param& p : k_.params) {
    if (model::IsOperand(p))
      args.push_back(tensor(operand++));
    else if (p.role == Role::kScalar)
      args.push_back(fmt::format("{}{}", values, Namer::CppLocal("a", p.name)));
    if (p.optional) args.push_back(fmt::format("{}{}", values, PresentVar(p)));
  }
  if (kp_.leading >= 0)
    args.push_back(fmt::format("{}{}", values, LeadingVar()));
  for (const Param& p : k_.params)
    if (IsResult(p.role)) args.push_back(tensor(operand++));
  return args;
}

std::vector<std::string> HandlerParts::ElementValues() const {
  std::vector<std::string> values;
  for (const Param& p : k_.params) {
    if (p.role == Role::kScalar && !model::IsOperand(p))
      values.push_back(fmt::format("{} {}", AttrCppType(p.dtype),
                                   Namer::CppLocal("a", p.name)));
    if (p.optional) values.push_back("bool " + PresentVar(p));
  }
  if (kp_.leading >= 0) values.push_back("int64_t " + LeadingVar());
  return values;
}

int HandlerParts::OperandIndex(const Param& param, bool result) const {
  int index = 0;
  for (const Param* p : BatchOrder(k_)) {
    const bool in_results = index >= InputCount();
    if (p == &param && in_results == result) return index;
    ++index;
  }
  return -1;
}

int HandlerParts::InputCount() const {
  return static_cast<int>(std::count_if(k_.params.begin(), k_.params.end(),
                                        [](const Param& p) {
                                          return model::IsOperand(p);
                                        }));
}

int HandlerParts::BufferCount() const {
  return static_cast<int>(BatchOrder(k_).size());
}

void HandlerParts::EmitElementFunction(Printer& p, std::string_view platform,
                                       std::string_view impl,
                                       const std::vector<std::string>& params,
                                       const std::function<void()>& body,
                                       bool inlined) const {
  std::vector<std::string> all = params;
  for (std::string& param : ElementParams()) all.push_back(std::move(param));
  p.Emit({{"kernel", k_.name},
          {"source", Escape(k_.source)},
          {"platform", platform},
          {"impl", impl},
          {"inline", inlined ? "__attribute__((always_inline)) inline " : ""},
          {"params", ParamLines(all)},
          {"body", body}},
         R"code(
           // Kernel '$kernel$' ($source$), platform $platform$: one batch element.
           $inline$ffi::Error $impl$_element($params$) {
             ::kc::rt::Evaluator ev;
             $body$
             return ffi::Error::Success();
           }

         )code");
}

bool HandlerParts::EmitBatchBuffers(Printer& p, int* first_result,
                                    int* count) const {
  std::vector<std::string> buffers;
  *first_result = -1;
  const int inputs = InputCount();
  for (const Param* param : BatchOrder(k_)) {
    // An in-place tensor is an input first (its argument), then a result.
    const bool result = static_cast<int>(buffers.size()) >= inputs;
    if (result && *first_result < 0)
      *first_result = static_cast<int>(buffers.size());
    buffers.push_back(fmt::format(
        "::kc::ffi_support::Buffer({}{}, {}, {})", result ? "*" : "",
        Namer::CppLocal(result ? "r" : "b", param->name),
        Rank(static_cast<size_t>(param - &k_.params[0])), Quote(param->name)));
  }
  if (*first_result < 0) {
    p.Fail(Error::Internal(
        fmt::format("kernel '{}' has no result to batch over", k_.name)));
    return false;
  }
  *count = static_cast<int>(buffers.size());
  p.Emit({{"buffers", fmt::format("{}", fmt::join(buffers, ",\n"))}},
         R"code(
           const ::kc::rt::BatchBuffer kc_buffers[] = {
               $buffers$};
         )code");
  return true;
}

void HandlerParts::EmitBatchPlan(Printer& p) const {
  int first = 0, count = 0;
  if (!EmitBatchBuffers(p, &first, &count)) return;
  p.Emit({{"kernel", Quote(k_.name)}, {"first", first}, {"count", count}},
         R"code(
           ::kc::rt::Batch kc_batch;
           ::kc::rt::Operand kc_operands[$count$];
           {
             ::kc::rt::Message kc_why;
             if (!::kc::rt::PlanBatch($kernel$, kc_buffers, $count$, $first$, &kc_batch, kc_operands, &kc_why)) {
               return ffi::Error::InvalidArgument(kc_why);
             }
           }
         )code");
}

void HandlerParts::EmitChecks(Printer& p) const {
  // Dtypes and ranks: XLA was told them at trace time; a mismatch here
  // means the library and the Python package disagree.
  for (size_t i = 0; i < k_.params.size(); ++i) {
    const Param& param = k_.params[i];
    if (!model::IsTensor(param.role) && !param.traced) continue;
    std::vector<std::string> buffers = {BufferVar(param)};
    if (param.role == Role::kInMut)
      buffers.push_back(Namer::CppLocal("b", param.name));
    for (const std::string& buffer : buffers)
      p.Emit({{"buffer", buffer},
              {"ffi_dtype", FfiDataType(param.dtype)},
              {"kernel", k_.name},
              {"param", param.name},
              {"dtype", model::DTypeName(param.dtype)},
              {"rank", Rank(i)},
              // The rank that "..." gives is the call's.
              {"rank_text", kp_.params[i].leading
                                ? fmt::format("\" << {} << \"", Rank(i))
                                : Rank(i)},
              {"size",
               kp_.params[i].leading
                   ? fmt::format("static_cast<int64_t>({}.dimensions().size())",
                                 buffer)
                   : buffer + ".dimensions().size()"}},
             R"code(
               if ($buffer$.element_type() != ffi::DataType::$ffi_dtype$) {
                 return ffi::Error::InvalidArgument("$kernel$: parameter '$param$' expects $dtype$ elements");
               }
               if ($size$ != $rank$) {
                 return ffi::Error::InvalidArgument(::kc::rt::Message() << "$kernel$: parameter '$param$' expects rank $rank_text$, got rank " << $buffer$.dimensions().size());
               }
             )code");
  }
  // "...": every tensor whose shape starts with it has the leading
  // dimensions of the one that gives them.
  for (size_t i = 0; i < k_.params.size() && kp_.leading >= 0; ++i) {
    const Param& param = k_.params[i];
    if (!kp_.params[i].leading || static_cast<int>(i) == kp_.leading) continue;
    const Param& ref = k_.params[kp_.leading];
    p.Emit({{"buffer", BufferVar(param)},
            {"ref", BufferVar(ref)},
            {"leading", LeadingVar()},
            {"present", param.optional ? PresentVar(param) + " && " : ""},
            {"kernel", k_.name},
            {"param", param.name},
            {"ref_param", ref.name}},
           R"code(
             for (int64_t kc_d = 0; kc_d < $leading$; ++kc_d) {
               if ($present$$buffer$.dimensions()[kc_d] != $ref$.dimensions()[kc_d]) {
                 return ffi::Error::InvalidArgument(::kc::rt::Message() << "$kernel$: parameter '$param$' has shape " << ::kc::rt::ShapeOf($buffer$.dimensions()) << ", but its leading dimensions ('...') must be those of '$ref_param$', which has shape " << ::kc::rt::ShapeOf($ref$.dimensions()));
               }
             }
           )code");
  }
  for (const sema::Symbol& sym : kp_.symbols)
    p.Emit({{"symbol", Namer::CppLocal("s", sym.name)},
            {"dim", DimRef(BufferVar(k_.params[sym.param]), sym.dim)}},
           R"code(
             const int64_t $symbol$ = $dim$;
           )code");
  for (int i : kp_.derived_order) {
    const Param& param = k_.params[i];
    p.Emit({{"var", Namer::CppLocal("d", param.name)},
            {"expr", Cpp(kp_.params[i].derived)},
            {"ctype", model::DTypeCppName(param.dtype)},
            {"kernel", k_.name},
            {"param", param.name},
            {"dtype", model::DTypeName(param.dtype)}},
           R"code(
             const int64_t $var$ = $expr$;
             if (!ev.failed() && !::kc::rt::Fits<$ctype$>($var$)) {
               return ffi::Error::InvalidArgument(::kc::rt::Message() << "$kernel$: derived value '$param$' = " << $var$ << " does not fit $dtype$");
             }
           )code");
  }
  auto check_dim = [&](const Param& param, int dim, const expr::NodePtr& e,
                       const std::string& text) {
    p.Emit({{"expr", Cpp(e)},
            {"buffer", BufferVar(param)},
            {"dim", dim},
            {"dim_ref", DimRef(BufferVar(param), dim)},
            {"kernel", k_.name},
            {"param", param.name},
            {"text", Escape(text)},
            // An optional input that is absent has no shape to check.
            {"present", param.optional ? PresentVar(param) + " && " : ""}},
           R"code(
             {
               const int64_t expected = $expr$;
               if ($present$!ev.failed() && $dim_ref$ != expected) {
                 return ffi::Error::InvalidArgument(::kc::rt::Message() << "$kernel$: parameter '$param$' has shape " << ::kc::rt::ShapeOf($buffer$.dimensions()) << ", but dimension $dim$ must be $text$ = " << expected);
               }
             }
           )code");
  };
  for (const sema::DimCheck& c : kp_.checks)
    check_dim(k_.params[c.param], c.dim, c.expr, c.text);
  for (size_t i = 0; i < k_.params.size(); ++i) {
    if (k_.params[i].role != Role::kOut) continue;
    const sema::ParamPlan& pp = kp_.params[i];
    const int tail = static_cast<int>(pp.out_dims.size());
    for (int d = 0; d < tail; ++d)
      check_dim(k_.params[i], pp.leading ? d - tail : d, pp.out_dims[d],
                pp.out_dim_texts[d]);
  }
  // Grid expressions, evaluated before the check of them all.
  if (!grid()) return;
  std::vector<std::string> threads, block;
  for (size_t g = 0; g < 3; ++g) {
    threads.push_back(g < kp_.grid.size() ? Cpp(kp_.grid[g]) : "1");
    block.push_back(std::to_string(g < kp_.block.size() ? kp_.block[g] : 1));
  }
  p.Emit({{"threads", fmt::format("{}", fmt::join(threads, ", "))},
          {"block", fmt::format("{}", fmt::join(block, ", "))}},
         R"code(
           const int64_t kc_threads[3] = {$threads$};
           const int64_t kc_block[3] = {$block$};
         )code");
}

void HandlerParts::EmitSharedBytes(Printer& p) const {
  p.Emit({{"expr", Cpp(kp_.shared_bytes)}}, R"code(
    const int64_t kc_shared_bytes = $expr$;
  )code");
}

void HandlerParts::EmitExpressionsOk(Printer& p) const {
  p.Emit({{"kernel", k_.name}}, R"code(
    if (ev.failed()) {
      return ffi::Error::InvalidArgument("$kernel$: a shape or grid expression divides by zero, overflows or shifts by a count outside 0..63");
    }
  )code");
}

void HandlerParts::EmitLaunchGrid(Printer& p) const {
  if (!grid()) return;
  p.Emit({{"rank", kp_.grid.size()}, {"kernel", k_.name}}, R"code(
    kc_launch kc_launch_;
    bool kc_empty = false;
    if (!::kc::rt::SizeGrid(kc_threads, kc_block, $rank$, &kc_launch_, &kc_empty)) {
      return ffi::Error::InvalidArgument((::kc::rt::Message() << "$kernel$: ").Grid(kc_threads, kc_block, $rank$));
    }
    if (kc_empty) return ffi::Error::Success();  // no thread to run
  )code");
}

std::vector<std::string> HandlerParts::KernelArgs(size_t i) const {
  const Param& p = k_.params[i];
  if (model::IsTensor(p.role)) {
    std::vector<std::string> args = {
        p.optional ? fmt::format("{} ? {}.untyped_data() : nullptr",
                                 PresentVar(p), BufferVar(p))
                   : BufferVar(p) + ".untyped_data()"};
    if (p.access == Access::kView)
      args.push_back(BufferVar(p) + ".dimensions().begin()");
    return args;
  }
  // Read where the buffer is: on the CPU, the CUDA handler passes the
  // buffer instead.
  if (p.traced)
    return {fmt::format("*static_cast<const {}*>({}.untyped_data())",
                        model::DTypeCppName(p.dtype), BufferVar(p))};
  if (p.role == Role::kScalar)
    return {p.dtype == DType::kU64 ? fmt::format("static_cast<uint64_t>({})",
                                                 Namer::CppLocal("a", p.name))
                                   : Namer::CppLocal("a", p.name)};
  return {fmt::format("static_cast<{}>({})", model::DTypeCppName(p.dtype),
                      Namer::CppLocal("d", p.name))};
}

std::string HandlerParts::Rank(size_t i) const {
  if (k_.params[i].traced) return "0";
  if (kp_.params[i].leading)
    return fmt::format("({} + {})", kp_.params[i].rank, LeadingVar());
  return std::to_string(kp_.params[i].rank);
}

std::string HandlerParts::LeadingVar() {
  return Namer::CppLocal("a", Namer::LeadingAttr());
}

std::string HandlerParts::DimRef(const std::string& buffer, int64_t d) {
  if (d >= 0) return fmt::format("{}.dimensions()[{}]", buffer, d);
  return fmt::format("{0}.dimensions()[{0}.dimensions().size() - {1}]", buffer,
                     -d);
}

std::string HandlerParts::PresentVar(const Param& p) {
  return Namer::CppLocal("a", Namer::PresentAttr(p.name));
}

std::string HandlerParts::InitValue(size_t i) const {
  return InitLiteral(k_.params[i], *kp_.params[i].init);
}

}  // namespace kernelc::emit
