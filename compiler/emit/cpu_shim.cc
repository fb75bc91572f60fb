#include "compiler/emit/cpu_shim.h"

#include <fmt/format.h>

#include <vector>

#include "compiler/emit/handler_parts.h"
#include "compiler/emit/text.h"

namespace kernelc::emit {

using model::Access;
using model::Param;
using model::Role;

namespace {

std::string Impl(const model::Kernel& k) {
  return fmt::format("{}_cpu_impl", k.Id());
}

// The record of a __global__ kernel's entry arguments that a launch split
// over the pool hands to each range, and the function that calls the entry
// with them (kc::rt::RangeEntry).
std::string ArgsType(const model::Kernel& k) {
  return fmt::format("{}_cpu_args", k.Id());
}
std::string RangeFunction(const model::Kernel& k) {
  return fmt::format("{}_cpu_range", k.Id());
}

// The C++ types of the entry point's parameters after the range and the
// error, as EmitCpuEntry declares them.
std::vector<std::string> EntryArgTypes(const model::Kernel& k) {
  std::vector<std::string> types;
  for (const Param& p : k.params) {
    if (model::IsTensor(p.role)) {
      types.push_back("void*");
      if (p.access == Access::kView) types.push_back("const int64_t*");
    } else {
      types.push_back(std::string(model::DTypeCppName(p.dtype)));
    }
  }
  return types;
}

// ArgsType and RangeFunction of a __global__ kernel.
void EmitRangeFunction(const EmitRequest& request, const model::Kernel& k,
                       Printer& p) {
  std::vector<std::string> fields, args;
  const std::vector<std::string> types = EntryArgTypes(k);
  for (size_t i = 0; i < types.size(); ++i) {
    fields.push_back(fmt::format("{} kc_{};", types[i], i));
    args.push_back(fmt::format("kc_a.kc_{}", i));
  }
  p.Emit({{"kernel", k.name},
          {"args_type", ArgsType(k)},
          {"range", RangeFunction(k)},
          {"entry", request.namer().CpuEntrySymbol(k.Id())},
          {"fields", fmt::format("{}", fmt::join(fields, "\n"))},
          {"args", fmt::format("{}", fmt::join(args, ", "))}},
         R"code(
           // The arguments of '$kernel$', for the ranges of a launch that splits over
           // XLA's pool (kc::rt::RunSplitLaunch).
           struct $args_type$ {
             $fields$
           };

           int32_t $range$(const kc_block_range* kc_range, kc_error* kc_why, const void* kc_args) {
             const $args_type$& kc_a = *static_cast<const $args_type$*>(kc_args);
             return $entry$(kc_range, kc_why, $args$);
           }

         )code");
}

// The entry point's declaration in the shim: its parameters as in
// EmitCpuEntry, unnamed. A __global__ kernel's entry runs a range of its
// launch's blocks and says whether it failed (kernelc/cpu_exec.h).
std::string EntryDeclaration(const Namer& namer, const model::Kernel& k) {
  const bool grid = k.kind == model::KernelKind::kGlobal;
  std::vector<std::string> params;
  if (grid) params = {"const kc_block_range*", "kc_error*"};
  for (std::string& type : EntryArgTypes(k)) params.push_back(std::move(type));
  return fmt::format("{} {}({});", grid ? "int32_t" : "void",
                     namer.CpuEntrySymbol(k.Id()), fmt::join(params, ", "));
}

// The element's statements after the checks: in-place copies and fills,
// then the entry point: a host kernel's once, a __global__ kernel's over
// the ranges of blocks its launch splits into, on the calling thread and
// kc_pool_threads of XLA's pool (0 when the batch is spread over it
// already; -1 when the pool has not been asked its size, which only a
// launch large enough to split does).
void EmitBody(const EmitRequest& request, const sema::KernelPlan& kp,
              const HandlerParts& h, Printer& p) {
  const model::Kernel& k = h.kernel();
  h.EmitChecks(p);
  // Dynamic shared memory, for a kernel that has any: only one under the
  // block executor can (__shared__ is a block-level feature).
  const bool shared = kp.block_executor && kp.shared_bytes;
  if (shared) h.EmitSharedBytes(p);
  h.EmitExpressionsOk(p);
  // In-place parameters: XLA aliases the result to the argument; should it
  // ever hand over distinct buffers, start from the argument's values.
  for (const Param& param : k.params)
    if (param.role == Role::kInMut)
      p.Emit({{"result", HandlerParts::BufferVar(param)},
              {"arg", Namer::CppLocal("b", param.name)}},
             R"code(
               if ($result$.untyped_data() != $arg$.untyped_data() && $result$.size_bytes() > 0) {
                 memcpy($result$.untyped_data(), $arg$.untyped_data(), $result$.size_bytes());
               }
             )code");
  std::vector<std::string> args;
  for (size_t i = 0; i < k.params.size(); ++i) {
    for (std::string& arg : h.KernelArgs(i)) args.push_back(std::move(arg));
    if (!h.Fills(i)) continue;
    p.Emit({{"ctype", model::DTypeCppName(k.params[i].dtype)},
            {"buffer", HandlerParts::BufferVar(k.params[i])},
            {"value", h.InitValue(i)}},
           R"code(
             ::kc::rt::Fill<$ctype$>($buffer$.untyped_data(), static_cast<int64_t>($buffer$.element_count()), $value$);
           )code");
  }
  h.EmitLaunchGrid(p);
  Printer::Subs subs = {{"entry", request.namer().CpuEntrySymbol(k.Id())},
                        {"args", fmt::format("{}", fmt::join(args, ", "))}};
  if (!h.grid()) {
    p.Emit(subs, R"code(
      $entry$($args$);
    )code");
    return;
  }
  if (shared)
    p.Emit({{"kernel", k.name}}, R"code(
      if (kc_shared_bytes < 0) {
        return ffi::Error::InvalidArgument(::kc::rt::Message() << "$kernel$: dynamic shared memory of " << kc_shared_bytes << " bytes is out of range");
      }
    )code");
  subs.push_back({"block_executor", kp.block_executor ? "true" : "false"});
  subs.push_back({"shared_bytes",
                  shared ? "static_cast<uint64_t>(kc_shared_bytes)" : "0"});
  subs.push_back({"args_type", ArgsType(k)});
  subs.push_back({"range", RangeFunction(k)});
  // The outputs that nothing wrote before the kernel (not in place, not
  // filled): a launch that splits maps their pages first
  // (kc::rt::RunSplitLaunch).
  std::vector<std::string> outputs;
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (k.params[i].role != Role::kOut || h.Fills(i)) continue;
    const std::string buffer = HandlerParts::BufferVar(k.params[i]);
    outputs.push_back(fmt::format("{{{0}.untyped_data(), {0}.size_bytes()}}", buffer));
  }
  subs.push_back({"outputs", outputs.empty()
                                 ? std::string()
                                 : fmt::format("const kc_span kc_outputs[] = {{{}}};",
                                               fmt::join(outputs, ", "))});
  subs.push_back({"output_args", outputs.empty()
                                     ? "nullptr, 0"
                                     : fmt::format("kc_outputs, {}", outputs.size())});
  // The short way, a launch that stays on this thread, is the entry called
  // straight away with the arguments in registers; the record of them is
  // made only on the way that splits.
  p.Emit(subs, R"code(
    kc_error kc_failure;
    int32_t kc_failed;
    if (kc_pool_threads == 0 || ::kc::rt::StaysOnCaller(kc_launch_, $block_executor$)) {
      const kc_block_range kc_range = ::kc::rt::WholeLaunch(kc_launch_, $shared_bytes$);
      kc_failed = $entry$(&kc_range, &kc_failure, $args$);
    } else {
      const $args_type$ kc_args = {$args$};
      $outputs$
      kc_failed = ::kc::rt::RunSplitLaunch(kc_launch_, $block_executor$, $shared_bytes$, kc_pool_threads, ::kc::ffi_support::Pool(kc_pool), $range$, &kc_args, $output_args$, &kc_failure);
    }
    if (kc_failed != 0) {
      return ffi::Error::Internal(kc_failure.message);
    }
  )code");
}

}  // namespace

void CpuShim::EmitIncludes(const EmitRequest& /*request*/,
                           Printer& /*p*/) const {}

void CpuShim::EmitDeclarations(const EmitRequest& request, Printer& p) const {
  std::vector<std::string> declarations;
  for (const sema::KernelPlan& kp : request.plan().kernels)
    declarations.push_back(EntryDeclaration(request.namer(), *kp.kernel));
  p.Emit({{"declarations", fmt::format("{}", fmt::join(declarations, "\n"))}},
         R"code(
           // CPU entry points, compiled together with the kernel sources.
           extern "C" {
           $declarations$
           }  // extern "C"

         )code");
}

// Runs the kernel once per batch element, all in the one call: the
// runtime's batch loop (kc::rt::RunBatch) over a per-element function; an
// elementwise batch that runs on one thread folds into one element.
void CpuShim::EmitHandlers(const EmitRequest& request,
                           const sema::KernelPlan& kp, Printer& p) const {
  HandlerParts h(kp);
  const model::Kernel& k = h.kernel();
  std::vector<std::string> pool_params;
  if (h.grid()) {
    pool_params = {"ffi::ThreadPool& kc_pool", "int64_t kc_pool_threads"};
    EmitRangeFunction(request, k, p);
  }
  h.EmitElementFunction(
      p, "cpu", Impl(k), pool_params, [&] { EmitBody(request, kp, h, p); },
      /*inlined=*/true);
  // Outside vmap the first result has the declared rank, and every buffer
  // is the one element whole: the element function checks them all, with
  // the messages the batch's operands would give. Not for kernels whose
  // element takes more than the buffers (an optional input's presence,
  // the leading dimensions of "...").
  auto unbatched = [&] {
    bool plain = kp.leading < 0;
    const Param* first = nullptr;
    std::vector<std::string> args;
    if (h.grid()) args = {"kc_pool", "-1"};
    auto whole = [&](const Param& param, const std::string& buffer) {
      args.push_back(fmt::format("::kc::rt::Whole({}, {})", buffer,
                                 model::DTypeBytes(param.dtype)));
    };
    for (const Param& param : k.params) {
      plain = plain && !param.optional;
      if (model::IsOperand(param))
        whole(param, Namer::CppLocal("b", param.name));
      else if (param.role == Role::kScalar)
        args.push_back(Namer::CppLocal("a", param.name));
    }
    for (const Param& param : k.params) {
      if (!model::IsResult(param.role)) continue;
      whole(param, "*" + Namer::CppLocal("r", param.name));
      if (!first) first = &param;
    }
    if (!plain || !first) return;
    p.Emit({{"impl", Impl(k)},
            {"result", Namer::CppLocal("r", first->name)},
            {"rank", kp.params[first - &k.params[0]].rank},
            {"args", fmt::format("{}", fmt::join(args, ",\n"))}},
           R"code(
             // Outside vmap: each buffer is the one element, whole.
             if ((*$result$).dimensions().size() == $rank$) {
               return $impl$_element(
                   $args$);
             }
           )code");
  };
  // What the batch's elements share besides their tensors: the pool, the
  // attributes, and the first error.
  std::vector<std::string> fields, values;
  if (h.grid()) fields.push_back("ffi::ThreadPool* kc_pool;");
  for (const std::string& value : h.ElementValues()) {
    fields.push_back(value + ";");
    values.push_back(value.substr(value.rfind(' ') + 1));
  }
  std::vector<std::string> element_args;
  if (h.grid()) element_args = {"*kc_c.kc_pool", "kc_pool_threads"};
  for (std::string& arg : h.ElementArgs(
           [](int i) {
             return fmt::format("::kc::rt::Typed<ffi::DataType>(kc_t[{}])", i);
           },
           "kc_c."))
    element_args.push_back(std::move(arg));
  std::vector<std::string> context = values;
  if (h.grid()) context.insert(context.begin(), "&kc_pool");
  // The handler's parameters, and its arguments for the batch's function.
  const std::vector<std::string> impl_params =
      h.ImplParams("ffi::ThreadPool kc_pool");
  std::vector<std::string> impl_args;
  for (const std::string& param : impl_params)
    impl_args.push_back(param.substr(param.rfind(' ') + 1));
  p.Emit({{"kernel", k.name},
          {"impl", Impl(k)},
          {"impl_params", ParamLines(impl_params)},
          {"impl_args", fmt::format("{}", fmt::join(impl_args, ", "))},
          {"unbatched", unbatched},
          {"buffers",
           [&] {
             int first = 0, count = 0;
             if (!h.EmitBatchBuffers(p, &first, &count)) return;
             p.Emit({{"kernel", Quote(k.name)},
                     {"impl", Impl(k)},
                     {"first", first},
                     {"count", count},
                     {"fold", kp.fold_elementwise ? "true" : "false"},
                     {"context", fmt::format("{}", fmt::join(context, ", "))}},
                    R"code(
                      $impl$_batch_context kc_context{$context$};
                      ::kc::rt::Message kc_why;
                      if (!::kc::rt::RunBatch($kernel$, kc_buffers, $count$, $first$, $fold$, ::kc::ffi_support::Pool(kc_pool), $impl$_batch_element, &kc_context, &kc_why)) {
                        return ffi::Error::InvalidArgument(kc_why);
                      }
                      return kc_context.kc_error.Take();
                    )code");
           }},
          {"fields", fmt::format("{}", fmt::join(fields, "\n"))},
          {"element_args", fmt::format("{}", fmt::join(element_args, ",\n"))}},
         R"code(
           // What the batch elements of '$kernel$' share besides their tensors.
           struct $impl$_batch_context {
             $fields$
             ::kc::ffi_support::FirstError kc_error;
           };

           // Batch element kc_t of '$kernel$', as the runtime's batch loop runs it.
           void $impl$_batch_element(void* kc_context, const ::kc::rt::Tensor<int32_t>* kc_t, int64_t kc_pool_threads) {
             $impl$_batch_context& kc_c = *static_cast<$impl$_batch_context*>(kc_context);
             kc_c.kc_error.Keep($impl$_element(
                 $element_args$));
           }

           // The handler of '$kernel$' under vmap: runs the kernel once per batch
           // element, all in this one call. Large batches spread over XLA's intra-op
           // thread pool; each element writes only its own results. Out of line, so
           // that the call outside vmap pays nothing for it.
           __attribute__((noinline)) ffi::Error $impl$_batch($impl_params$) {
             $buffers$
           }

           // The handler of '$kernel$': runs the kernel once per batch element (one
           // element outside vmap).
           ffi::Error $impl$($impl_params$) {
             $unbatched$
             return $impl$_batch($impl_args$);
           }

         )code");
}

void CpuShim::EmitRegistration(const EmitRequest& request,
                               const sema::KernelPlan& kp, Printer& p) const {
  const model::Kernel& k = *kp.kernel;
  p.Emit({{"kernel", k.name}},
         R"code(
           // The only symbol the library exports for '$kernel$': everything else is
           // hidden.
         )code");
  HandlerParts(kp).EmitHandlerSymbol(
      p, HandlerSymbol(request.namer(), k), Impl(k),
      "XLA_FFI_ExecutionStage_EXECUTE", "0",
      "const ffi::ThreadPool kc_context(call_frame);");
}

void CpuShim::EmitPyRegistration(const EmitRequest& request,
                                 const model::Kernel& kernel,
                                 Printer& p) const {
  p.Emit({{"target", Quote(request.namer().FfiTarget(kernel.Id()))},
          {"symbol", Quote(HandlerSymbol(request.namer(), kernel))}},
         R"py(
           _PACKAGE.register(_LIBRARY, $target$, $symbol$, "cpu")
         )py");
}

std::string CpuShim::HandlerSymbol(const Namer& namer,
                                   const model::Kernel& kernel) const {
  return namer.HandlerSymbol(kernel.Id(), "cpu");
}

void EmitCpuEntry(const EmitRequest& request, const sema::KernelPlan& kp,
                  Printer& p) {
  const model::Kernel& k = *kp.kernel;
  std::vector<std::string> params, args;
  const bool grid = k.kind == model::KernelKind::kGlobal;
  // Only the block executor can fail.
  if (grid)
    params = {"const kc_block_range* kc_range_",
              kp.block_executor ? "kc_error* kc_error_" : "kc_error*"};
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param& param = k.params[i];
    std::string v = "p_" + param.name;
    if (!model::IsTensor(param.role)) {
      params.push_back(
          fmt::format("{} {}", model::DTypeCppName(param.dtype), v));
      args.push_back(v);
    } else if (param.access == Access::kView) {
      params.push_back("void* " + v);
      params.push_back(fmt::format("const int64_t* {}_shape", v));
      std::vector<std::string> dims;
      for (int d = 0; d < kp.params[i].rank; ++d)
        dims.push_back(fmt::format("{}_shape[{}]", v, d));
      args.push_back(fmt::format("::kc::host::AnyView<{}>{{{}, {{{}}}}}",
                                 kp.params[i].rank, v, fmt::join(dims, ", ")));
    } else {
      // XLA allocates each output for the call alone: no other parameter
      // reaches its memory, so that the kernel's loop needs no runtime
      // test of overlap before it vectorizes.
      params.push_back(param.role == Role::kOut ? "void* __restrict " + v
                                                : "void* " + v);
      args.push_back(fmt::format("::kc::host::AnyPtr{{{}}}", v));
    }
  }
  Printer::Subs subs = {{"kernel", k.name},
                        {"symbol", request.namer().CpuEntrySymbol(k.Id())},
                        {"params", fmt::format("{}", fmt::join(params, ", "))},
                        {"args", fmt::format("{}", fmt::join(args, ", "))}};
  if (!grid) {
    p.Emit(subs, R"code(
      // Calls host kernel '$kernel$' once with whole tensors.
      extern "C" KC_HOST_CLONES_ void $symbol$($params$) {
        $kernel$($args$);
      }
    )code");
    return;
  }
  if (kp.block_executor) {
    p.Emit(subs, R"code(
      // Runs blocks [block_begin, block_end) of a launch of '$kernel$' under the
      // block executor: each thread of a block is a fiber, so that barriers, warp
      // functions and shared memory work as on a GPU. Non-zero, with the reason in
      // *kc_error_, when the kernel misuses one of them.
      extern "C" int32_t $symbol$($params$) {
        return ::kc::host::RunBlocks(*kc_range_, "$kernel$", kc_error_, [&] { $kernel$($args$); });
      }
    )code");
    return;
  }
  if (kp.guard_elided) {
    // The index type that RunThreadLoopBelow assumes the index in, and the
    // largest limit it takes (the limit is an int64_t).
    const model::GridGuard& g = *k.guard;
    const bool index32 = g.index_bits == 32;
    const char* index = index32 ? (g.index_signed ? "int32_t" : "uint32_t")
                                : (g.index_signed ? "int64_t" : "uint64_t");
    const uint64_t index_max = index32 ? (g.index_signed ? INT32_MAX : UINT32_MAX)
                                       : uint64_t{INT64_MAX};
    const model::DType bound_type = k.params[k.IndexOf(g.bound)].dtype;
    const int bound_bits = model::DTypeBytes(bound_type) * 8;
    const bool bound_signed =
        bound_type == model::DType::kI8 || bound_type == model::DType::kI16 ||
        bound_type == model::DType::kI32 || bound_type == model::DType::kI64;
    const uint64_t bound_max =
        bound_bits >= 64 ? (bound_signed ? uint64_t{INT64_MAX} : UINT64_MAX)
                         : (uint64_t{1} << (bound_bits - bound_signed)) - 1;
    const Printer::Subs check_subs = {{"index", index},
                                      {"bound", "p_" + g.bound}};
    subs.push_back({"bound", "p_" + g.bound});
    // Where the bound's type is wider than the index's, a bound above the
    // index's range takes the padded loop. The test is left out where it
    // always holds: a branch that the compiler removes only late keeps the
    // guard from folding away.
    subs.push_back({"check", [&] {
                      if (bound_max <= index_max) return;
                      p.Emit(check_subs, R"code(
                        if (!::kc::host::IndexHolds<$index$>($bound$)) {
                          ::kc::host::RunThreadLoop(kc_range_->launch, kc_range_->block_begin,
                                                    kc_range_->block_end, kc_thread);
                          return 0;
                        }
                      )code");
                    }});
    // Blocks of a power of two threads run as one loop over the range's
    // threads (RunFlatLoopBelow); others one loop per block.
    const int64_t block_x = kp.block.empty() ? 0 : kp.block[0];
    int shift = 0;
    while ((int64_t{1} << shift) < block_x) ++shift;
    const bool flat = block_x > 0 && (int64_t{1} << shift) == block_x;
    subs.push_back(
        {"loop", flat ? fmt::format("RunFlatLoopBelow<{}, {}>", index, shift)
                      : fmt::format("RunThreadLoopBelow<{}>", index)});
    p.Emit(subs, R"code(
      // Runs blocks [block_begin, block_end) of a launch of '$kernel$': the threads
      // in order, the kernel inlined into the loop so that it vectorizes. Its guard
      // bounds the threads by exactly the grid's total, so only those below the
      // bound run, the guard known to hold. One clone per instruction set, chosen
      // when the library loads.
      extern "C" KC_HOST_CLONES_ int32_t $symbol$($params$) {
        auto kc_thread = [&]() KC_HOST_INLINE_ { $kernel$($args$); };
        $check$
        ::kc::host::$loop$(
            kc_range_->launch, kc_range_->block_begin, kc_range_->block_end,
            static_cast<int64_t>($bound$), kc_thread);
        return 0;
      }
    )code");
    return;
  }
  p.Emit(subs, R"code(
    // Runs blocks [block_begin, block_end) of a launch of '$kernel$': blocks in
    // order, the threads of each block in order, the kernel inlined into the
    // innermost loop so that it vectorizes. One clone per instruction set, chosen
    // when the library loads.
    extern "C" KC_HOST_CLONES_ int32_t $symbol$($params$) {
      ::kc::host::RunThreadLoop(kc_range_->launch, kc_range_->block_begin, kc_range_->block_end,
                                [&]() KC_HOST_INLINE_ { $kernel$($args$); });
      return 0;
    }
  )code");
}

void EmitExternShared(const std::vector<model::ExternShared>& arrays,
                      Printer& p) {
  // Sorted by namespace first: each namespace is opened once.
  for (size_t i = 0; i < arrays.size();) {
    const std::vector<std::string>& namespaces = arrays[i].namespaces;
    for (const std::string& ns : namespaces)
      p.Emit({{"ns", ns.empty() ? "" : " " + ns}}, R"code(
        namespace$ns$ {
      )code");
    for (; i < arrays.size() && arrays[i].namespaces == namespaces; ++i)
      p.Emit({{"type", arrays[i].type}, {"name", arrays[i].name}}, R"code(
        KC_HOST_EXTERN_SHARED($type$, $name$);
      )code");
    for (auto ns = namespaces.rbegin(); ns != namespaces.rend(); ++ns)
      p.Emit({{"ns", ns->empty() ? "" : " " + *ns}}, R"code(
        }  // namespace$ns$
      )code");
  }
}

}  // namespace kernelc::emit
