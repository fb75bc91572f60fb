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

// The entry point's declaration in the shim: its parameters as in
// EmitCpuEntry, unnamed. A __global__ kernel's entry runs a range of its
// launch's blocks and says whether it failed (kernelc/cpu_exec.h).
std::string EntryDeclaration(const Namer& namer, const model::Kernel& k) {
  const bool grid = k.kind == model::KernelKind::kGlobal;
  std::vector<std::string> params;
  if (grid) params = {"const kc_block_range*", "kc_error*"};
  for (const Param& p : k.params) {
    if (model::IsTensor(p.role)) {
      params.push_back("void*");
      if (p.access == Access::kView) params.push_back("const int64_t*");
    } else {
      params.push_back(std::string(model::DTypeCppName(p.dtype)));
    }
  }
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
        return ffi::Error::InvalidArgument(::kc::rt::Str("$kernel$: dynamic shared memory of ", kc_shared_bytes, " bytes is out of range"));
      }
    )code");
  subs.push_back({"block_executor", kp.block_executor ? "true" : "false"});
  subs.push_back({"shared_bytes",
                  shared ? "static_cast<uint64_t>(kc_shared_bytes)" : "0"});
  p.Emit(subs, R"code(
    kc_error kc_failure;
    if (::kc::rt::RunLaunch(
            kc_launch_, $block_executor$, $shared_bytes$, kc_pool_threads,
            [&kc_pool] { return static_cast<int64_t>(kc_pool.num_threads()); },
            [&kc_pool](auto kc_task) { kc_pool.Schedule(std::move(kc_task)); },
            [=](const kc_block_range* kc_range, kc_error* kc_why) __attribute__((always_inline)) {
              return $entry$(kc_range, kc_why, $args$);
            },
            &kc_failure) != 0) {
      return ffi::Error::Internal(kc_failure.message);
    }
  )code");
}

}  // namespace

void CpuShim::EmitIncludes(const EmitRequest& /*request*/, Printer& p) const {
  p.Emit(R"code(
    #include "kernelc/grid_split.h"
  )code");
}

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

// Runs the kernel once per batch element, all in the one call (see
// kernelc/batch.h); an elementwise batch that runs on one thread folds
// into one element.
void CpuShim::EmitHandlers(const EmitRequest& request,
                           const sema::KernelPlan& kp, Printer& p) const {
  HandlerParts h(kp);
  const model::Kernel& k = h.kernel();
  std::vector<std::string> pool_params;
  if (h.grid())
    pool_params = {"ffi::ThreadPool& kc_pool", "int64_t kc_pool_threads"};
  h.EmitElementFunction(
      p, "cpu", Impl(k), pool_params, [&] { EmitBody(request, kp, h, p); },
      /*inlined=*/true);
  std::vector<std::string> operands = h.Operands();
  auto helpers = [&] {
    // How many pool threads share the batch.
    p.Emit({{"element_bytes", h.ElementBytes()}}, R"code(
      kc_threads = kc_pool.num_threads();
      kc_helpers = ::kc::rt::BatchHelpers(kc_threads, kc_batch, $element_bytes$);
    )code");
    if (!kp.fold_elementwise) return;
    p.Emit({{"operands", fmt::format("{}", fmt::join(operands, ", "))},
            {"count", operands.size()}},
           R"code(
             // Elementwise, and on one thread: the whole batch as one element, folded
             // into dimension 0.
             if (kc_helpers == 0) {
               ::kc::rt::Operand<ffi::DataType>* const kc_operands[] = {$operands$};
               ::kc::rt::FoldBatch(&kc_batch, kc_operands, $count$);
             }
           )code");
  };
  // The arguments of the element function for batch element `index`, whose
  // grid may use `pool_threads` of the pool (-1: as many as it has).
  auto element_args = [&](const char* pool_threads, const char* index) {
    std::vector<std::string> args;
    if (h.grid()) args = {"kc_pool", pool_threads};
    for (std::string& arg : h.ElementArgs(index)) args.push_back(std::move(arg));
    return fmt::format("{}", fmt::join(args, ",\n"));
  };
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
          {"batch", [&] { h.EmitBatchPlan(p); }},
          {"helpers", helpers},
          // The elements of a batch spread over the pool run their grids
          // alone.
          {"element_args", element_args("kc_helpers > 0 ? 0 : kc_threads", "kc_i")}},
         R"code(
           // The handler of '$kernel$' under vmap: runs the kernel once per batch
           // element, all in this one call. Large batches spread over XLA's intra-op
           // thread pool; each element writes only its own results. Out of line, so
           // that the call outside vmap pays nothing for it.
           __attribute__((noinline)) ffi::Error $impl$_batch($impl_params$) {
             $batch$
             // One element, as outside vmap: no batch to share out, and the grid
             // may use the whole pool.
             int64_t kc_threads = -1;
             int64_t kc_helpers = 0;
             if (kc_batch.count > 1) {
               $helpers$
             }
             ffi::Error kc_first;
             std::mutex kc_mutex;
             ::kc::rt::ParallelFor(
                 kc_batch.count, kc_helpers,
                 [&kc_pool](auto kc_task) { kc_pool.Schedule(std::move(kc_task)); },
                 [&](int64_t kc_i) {
                   ffi::Error kc_error = $impl$_element(
                       $element_args$);
                   if (kc_error.failure()) {
                     std::lock_guard<std::mutex> kc_lock(kc_mutex);
                     if (kc_first.success()) kc_first = kc_error;
                   }
                 });
             return kc_first;
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
  p.Emit({{"kernel", k.name},
          {"symbol", HandlerSymbol(request.namer(), k)},
          {"impl", Impl(k)},
          {"bindings", HandlerParts(kp).Bindings()}},
         R"code(
           // The only symbol the library exports for '$kernel$': everything else is
           // hidden.
           extern "C" __attribute__((visibility("default"))) XLA_FFI_Error* $symbol$(
               XLA_FFI_CallFrame* call_frame);
           XLA_FFI_DEFINE_HANDLER_SYMBOL($symbol$, $impl$,
                                         ffi::Ffi::Bind()
                                             .Ctx<ffi::ThreadPool>()
                                             $bindings$);
         )code");
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
      params.push_back("void* " + v);
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
