#include "compiler/emit/cuda_shim.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include "compiler/emit/handler_parts.h"
#include "compiler/emit/text.h"

namespace kernelc::emit {

using model::Access;
using model::CudaBinary;
using model::IsResult;
using model::Param;
using model::Role;

namespace {

// Where a kernel's handlers find it: the module cache of its source (a
// function in the shim) and its slot there.
struct Slot {
  std::string cache;  // the cache accessor's name
  int slot = 0;       // the kernel's index in the module's kernel list
  int fill_slot = 0;  // the index of kc_fill_u64
  // The batch fold (kernelc/fold.h), for a kernel with an entry in its
  // source's fold program: that module's cache accessor and the entry's
  // index; an empty cache otherwise.
  std::string fold_cache;
  int fold_slot = 0;
  bool folds() const { return !fold_cache.empty(); }
  // A kernel with traced scalars is launched through its entry in the fold
  // program: that module's cache accessor and the entry's index; an empty
  // cache otherwise.
  std::string entry_cache;
  int entry_slot = 0;
  bool entry() const { return !entry_cache.empty(); }
};

std::optional<Slot> FindSlot(const EmitRequest& request,
                             const model::Kernel& k) {
  for (const CudaBinary& b : request.info().cuda_binaries) {
    if (b.source != k.CudaSource()) continue;
    Slot slot;
    slot.cache = Namer::CudaCacheAccessor(b.source_index, /*fold=*/false);
    slot.slot =
        static_cast<int>(std::find(b.kernels.begin(), b.kernels.end(), k.name) -
                         b.kernels.begin());
    slot.fill_slot = static_cast<int>(b.kernels.size());
    const std::string fold_cache =
        Namer::CudaCacheAccessor(b.source_index, /*fold=*/true);
    auto fold = std::find(b.fold_kernels.begin(), b.fold_kernels.end(), k.name);
    if (fold != b.fold_kernels.end()) {
      slot.fold_cache = fold_cache;
      slot.fold_slot = static_cast<int>(fold - b.fold_kernels.begin());
    }
    // The module lists the fold entries, then the kernels' entries.
    auto entry =
        std::find(b.entry_kernels.begin(), b.entry_kernels.end(), k.name);
    if (entry != b.entry_kernels.end()) {
      slot.entry_cache = fold_cache;
      slot.entry_slot = static_cast<int>(b.fold_kernels.size() +
                                         (entry - b.entry_kernels.begin()));
    }
    return slot;
  }
  return std::nullopt;
}

std::string Impl(const model::Kernel& k, std::string_view stage) {
  return fmt::format("{}_cuda{}_impl", k.Id(), stage);
}

// A call of the CUDA runtime (kernelc/cuda.h), `call` with &kc_failure as
// its last argument, that fails the handler with the runtime's reason
// after "<kernel>: <what>".
void EmitRuntimeCall(Printer& p, std::string_view kernel, std::string_view what,
                     const std::string& call) {
  p.Emit({{"kernel", kernel}, {"what", what}, {"call", call}}, R"code(
    kc_error kc_failure;
    if ($call$ != 0) {
      return ffi::Error::Internal(::kc::rt::Message() << "$kernel$: $what$" << kc_failure.message);
    }
  )code");
}

// Looks kernels up in `module` (a ModuleCache's accessor) for the stream's
// context: ModuleCache::Get's arguments after the stream are `args`.
void EmitGet(Printer& p, std::string_view kernel, const std::string& module,
             const std::string& args) {
  EmitRuntimeCall(
      p, kernel, "",
      fmt::format("{}.Get(kc_stream, {}, &kc_failure)", module, args));
}

// The element's statements after the checks: in-place copies and fills on
// the stream, then the launch. A folded batch (kc_fold set) is one
// contiguous run of elements in every result, from the element the body
// sees: fills and copies cover it all.
void EmitBody(const sema::KernelPlan& kp, const Slot& slot,
              const HandlerParts& h, Printer& p) {
  const model::Kernel& k = h.kernel();
  h.EmitChecks(p);
  if (kp.shared_bytes) h.EmitSharedBytes(p);
  h.EmitExpressionsOk(p);
  if (slot.folds())
    p.Emit(R"code(
      const int64_t kc_copies = kc_fold != nullptr ? kc_fold->count : 1;
    )code");
  for (const Param& param : k.params) {
    if (param.role != Role::kInMut) continue;
    const std::string result = HandlerParts::BufferVar(param);
    const std::string bytes =
        fmt::format("{}.size_bytes(){}", result,
                    slot.folds() ? " * static_cast<size_t>(kc_copies)" : "");
    p.Emit(
        {{"result", result},
         {"arg", Namer::CppLocal("b", param.name)},
         {"bytes", bytes},
         {"copy",
          [&] {
            EmitRuntimeCall(
                p, k.name, fmt::format("copying '{}': ", param.name),
                fmt::format("::kc::cuda::CopyAsync({}.untyped_data(), "
                            "{}.untyped_data(), {}, kc_stream, &kc_failure)",
                            result, Namer::CppLocal("b", param.name), bytes));
          }}},
        R"code(
             if ($result$.untyped_data() != $arg$.untyped_data() && $bytes$ > 0) {
               $copy$
             }
           )code");
  }
  std::vector<std::string> decls, refs;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const Param& param = k.params[i];
    const std::string buffer = HandlerParts::BufferVar(param);
    if (h.Fills(i))
      p.Emit({{"fill",
               [&] {
                 const std::string ctype(model::DTypeCppName(param.dtype));
                 EmitRuntimeCall(
                     p, k.name, fmt::format("filling '{}': ", param.name),
                     fmt::format(
                         "::kc::cuda::Fill({0}.untyped_data(), "
                         "static_cast<int64_t>({0}.element_count()){1}, "
                         "static_cast<int>(sizeof({2})), "
                         "::kc::cuda::Bits<{2}>({3}), kc_stream, kc_fill64, "
                         "&kc_failure)",
                         buffer, slot.folds() ? " * kc_copies" : "", ctype,
                         h.InitValue(i)));
               }}},
             R"code(
               {
                 $fill$
               }
             )code");
    // Each argument in a local of the kernel parameter's type; the launch
    // passes their addresses. A traced scalar stays on the device: the
    // kernel's entry reads it there.
    const std::string local = Namer::CppLocal("kc_arg", param.name);
    const std::string arg = h.KernelArgs(i).front();
    if (param.traced) {
      decls.push_back(
          fmt::format("void* {} = {}.untyped_data();", local, buffer));
    } else if (model::IsTensor(param.role) && k.ptx &&
               k.ptx->abi == model::PtxAbi::kNumba) {
      // Numba's array, each member a parameter of its own.
      const int rank = kp.params[i].rank;
      decls.push_back(fmt::format(
          "::kc::cuda::NumbaArray<{0}> {1} = "
          "::kc::cuda::MakeNumbaArray<{0}>({2}, {3}.dimensions(), "
          "sizeof({4}));",
          rank, local, arg, buffer, model::DTypeCppName(param.dtype)));
      for (const char* member :
           {"meminfo", "parent", "nitems", "itemsize", "data"})
        refs.push_back(fmt::format("&{}.{}", local, member));
      for (const char* array : {"shape", "strides"})
        for (int d = 0; d < rank; ++d)
          refs.push_back(fmt::format("&{}.{}[{}]", local, array, d));
      continue;
    } else if (model::IsTensor(param.role) && param.access == Access::kView) {
      decls.push_back(fmt::format(
          "::kc::cuda::View<{0}> {1} = ::kc::cuda::MakeView<{0}>({2}, "
          "{3}.dimensions());",
          kp.params[i].rank, local, arg, buffer));
    } else if (model::IsTensor(param.role)) {
      decls.push_back(fmt::format("void* {} = {};", local, arg));
    } else {
      decls.push_back(fmt::format(
          "{} {} = {};", model::DTypeCppName(param.dtype), local, arg));
    }
    refs.push_back("&" + local);
  }
  h.EmitLaunchGrid(p);
  const std::string shared_bytes = kp.shared_bytes ? "kc_shared_bytes" : "0";
  std::string launch = fmt::format(
      "::kc::cuda::Launch(kc_function, kc_grid_dims, kc_block_dims, {}, "
      "kc_stream, kc_params, &kc_failure)",
      shared_bytes);
  if (slot.folds()) {
    // The fold entry's last parameter, the batch, set by LaunchFold.
    launch = fmt::format(
        "(kc_fold == nullptr ? {} : ::kc::cuda::LaunchFold(kc_fold_function, "
        "kc_grid_dims, kc_block_dims, {}, kc_stream, kc_params, {}, *kc_fold, "
        "&kc_failure))",
        launch, shared_bytes, refs.size());
    refs.push_back("nullptr");
  }
  refs.push_back("nullptr");  // never an empty array
  p.Emit({{"arg_decls", fmt::format("{}", fmt::join(decls, "\n"))},
          {"arg_refs", fmt::format("{}", fmt::join(refs, ", "))},
          {"launch", [&] { EmitRuntimeCall(p, k.name, "", launch); }}},
         R"code(
           $arg_decls$
           void* kc_params[] = {$arg_refs$};
           const unsigned kc_grid_dims[3] = {kc_launch_.grid.x, kc_launch_.grid.y, kc_launch_.grid.z};
           const unsigned kc_block_dims[3] = {kc_launch_.block.x, kc_launch_.block.y, kc_launch_.block.z};
           $launch$
         )code");
}

// Loads the kernel's modules in the initialize stage, so that the execute
// stage only launches (and can be captured into a CUDA graph).
void EmitInitHandler(const sema::KernelPlan& kp, const Slot& slot, Printer& p) {
  const model::Kernel& k = *kp.kernel;
  auto loads = [&] {
    auto load = [&](const std::string& cache, int index) {
      p.Emit({{"get",
               [&] {
                 EmitGet(p, k.name, cache + "()",
                         fmt::format("{}, &kc_function", index));
               }}},
             R"code(
               {
                 ::kc::cuda::Function* kc_function = nullptr;
                 $get$
               }
             )code");
    };
    // A kernel with traced scalars runs its entry; the source's own module
    // holds the fill of KC_INIT.
    if (!slot.entry())
      load(slot.cache, slot.slot);
    else if (HandlerParts(kp).HasFills())
      load(slot.cache, slot.fill_slot);
    if (slot.entry()) load(slot.entry_cache, slot.entry_slot);
    if (slot.folds()) load(slot.fold_cache, slot.fold_slot);
  };
  p.Emit({{"kernel", k.name},
          {"impl", Impl(k, "_init")},
          {"impl_params",
           ParamLines(HandlerParts(kp).ImplParams("CUstream kc_stream"))},
          {"loads", loads}},
         R"code(
           // Kernel '$kernel$', platform CUDA, initialize stage: loads the module into
           // the stream's context, so that the execute stage only launches (and can be
           // captured into a CUDA graph).
           ffi::Error $impl$($impl_params$) {
             $loads$
             return ffi::Error::Success();
           }

         )code");
}

// The execute stage: the kernels looked up once, then one launch per batch
// element on XLA's stream, within the one call; an elementwise batch folds
// into one element, and a kernel with a fold entry runs a batch of several
// elements as one launch along the grid's z axis.
void EmitExecuteHandler(const sema::KernelPlan& kp, const Slot& slot,
                        Printer& p) {
  HandlerParts h(kp);
  const model::Kernel& k = h.kernel();
  const std::string impl = Impl(k, "");
  // The element's own parameters, before its tensors and scalars: the
  // stream and the kernels the handler looked up.
  std::vector<std::string> params = {"CUstream kc_stream",
                                     "::kc::cuda::Function* kc_function"};
  std::vector<std::string> prefix = {"kc_stream", "kc_functions[0]"};
  std::vector<int> slots = {slot.slot};
  if (h.HasFills()) {
    params.push_back("::kc::cuda::Function* kc_fill64");
    prefix.push_back("kc_functions[1]");
    slots.push_back(slot.fill_slot);
  }
  // A kernel that folds runs per element only when the batch does not fold
  // (kc_fold null).
  std::vector<std::string> fold_prefix = prefix;
  if (slot.folds()) {
    params.push_back("const ::kc::cuda::FoldLaunch* kc_fold");
    params.push_back("::kc::cuda::Function* kc_fold_function");
    prefix.insert(prefix.end(), {"nullptr", "nullptr"});
    fold_prefix.insert(fold_prefix.end(), {"&kc_fold", "kc_fold_function"});
  }
  h.EmitElementFunction(p, "CUDA", impl, params,
                        [&] { EmitBody(kp, slot, h, p); });
  // Batch buffer i, as an operand of the batch.
  auto operand = [](int i) { return fmt::format("&kc_operands[{}]", i); };
  auto batch = [&] {
    h.EmitBatchPlan(p);
    if (!kp.fold_elementwise) return;
    std::vector<std::string> operands;
    for (int i = 0; i < h.BufferCount(); ++i) operands.push_back(operand(i));
    p.Emit({{"operands", fmt::format("{}", fmt::join(operands, ", "))},
            {"count", operands.size()}},
           R"code(
             // Elementwise: the whole batch as one element, folded into dimension 0, so
             // one launch covers it.
             ::kc::rt::Operand* const kc_folded[] = {$operands$};
             ::kc::rt::FoldBatch(&kc_batch, kc_folded, $count$);
           )code");
  };
  // The arguments of the element function for batch element `index`.
  auto element_args = [&](const std::vector<std::string>& first,
                          const char* index) {
    std::vector<std::string> args = first;
    for (std::string& arg : h.ElementArgs(
             [&](int i) {
               return fmt::format(
                   "kc_operands[{}].At<ffi::DataType>(kc_batch, {})", i, index);
             },
             ""))
      args.push_back(std::move(arg));
    return fmt::format("{}", fmt::join(args, ",\n"));
  };
  auto functions = [&] {
    auto get = [&](const std::string& module, const std::string& args) {
      return [&, module, args] { EmitGet(p, k.name, module, args); };
    };
    if (!slot.entry()) {
      p.Emit({{"count", slots.size()},
              {"slots", fmt::format("{}", fmt::join(slots, ", "))},
              {"get", get(slot.cache + "()",
                          fmt::format("kc_slots, {}, kc_functions",
                                      slots.size()))}},
             R"code(
               // The kernels this call launches, looked up once for every batch element.
               ::kc::cuda::Function* kc_functions[$count$] = {};
               {
                 static const int kc_slots[$count$] = {$slots$};
                 $get$
               }
             )code");
    } else {
      // The kernel's entry, which reads the traced scalars on the device,
      // and the fill of the source's own module.
      p.Emit({{"count", slots.size()},
              {"get", get(slot.entry_cache + "()",
                          fmt::format("{}, &kc_functions[0]",
                                      slot.entry_slot))}},
             R"code(
               // The kernels this call launches, looked up once for every batch element.
               ::kc::cuda::Function* kc_functions[$count$] = {};
               {
                 $get$
               }
             )code");
      if (h.HasFills())
        p.Emit({{"get", get(slot.cache + "()",
                            fmt::format("{}, &kc_functions[1]",
                                        slot.fill_slot))}},
               R"code(
                 {
                   $get$
                 }
               )code");
    }
    if (!slot.folds()) return;
    // The tensors in declaration order, as the fold entry numbers them; an
    // in-place argument is copied into its result as a whole.
    std::vector<std::string> tensors, dense;
    for (const Param& param : k.params) {
      // An in-place tensor is numbered as its argument and as its result:
      // the kernel writes the result.
      if (model::IsTensor(param.role) || param.traced)
        tensors.push_back(
            operand(h.OperandIndex(param, IsResult(param.role))));
      if (param.role == Role::kInMut)
        dense.push_back(operand(h.OperandIndex(param, /*result=*/false)));
    }
    p.Emit(
        {{"tensors", fmt::format("{}", fmt::join(tensors, ", "))},
         {"count", tensors.size()},
         // Never an empty array.
         {"dense", dense.empty() ? std::string("nullptr")
                                 : fmt::format("{}", fmt::join(dense, ", "))},
         {"dense_count", dense.size()},
         {"impl", impl},
         {"args", element_args(fold_prefix, "0")},
         {"get", get(slot.fold_cache + "()",
                     fmt::format("{}, &kc_fold_function", slot.fold_slot))}},
        R"code(
             // A batch of several elements folds into the grid's z axis: one element's
             // checks, one launch of the fold entry for all (kernelc/fold.h).
             if (kc_batch.count > 1) {
               const ::kc::rt::Operand* const kc_tensors[] = {$tensors$};
               const ::kc::rt::Operand* const kc_dense[] = {$dense$};
               ::kc::cuda::FoldLaunch kc_fold;
               if (::kc::cuda::PlanFold(kc_batch, kc_tensors, $count$, kc_dense, $dense_count$, &kc_fold)) {
                 ::kc::cuda::Function* kc_fold_function = nullptr;
                 $get$
                 return $impl$_element(
                     $args$);
               }
             }
           )code");
  };
  p.Emit({{"kernel", k.name},
          {"impl", impl},
          {"impl_params", ParamLines(h.ImplParams("CUstream kc_stream"))},
          {"batch", batch},
          {"functions", functions},
          {"element_args", element_args(prefix, "kc_i")}},
         R"code(
           // The CUDA handler of '$kernel$': launches the kernel once per batch element
           // on XLA's stream, all within this one call (one element outside vmap). It
           // only launches, so XLA may capture it into a CUDA graph.
           ffi::Error $impl$($impl_params$) {
             $batch$
             $functions$
             for (int64_t kc_i = 0; kc_i < kc_batch.count; ++kc_i) {
               ffi::Error kc_error = $impl$_element(
                   $element_args$);
               if (kc_error.failure()) return kc_error;
             }
             return ffi::Error::Success();
           }

         )code");
}

}  // namespace

void CudaShim::EmitIncludes(const EmitRequest& request, Printer& p) const {
  if (request.info().cuda_binaries.empty()) return;
  p.Emit(R"code(

    #include "kernelc/cuda.h"
  )code");
}

void CudaShim::EmitSupport(const EmitRequest& request, Printer& p) const {
  const model::BuildInfo& info = request.info();
  if (info.cuda_binaries.empty()) return;
  std::vector<std::string> decls;
  auto caches = [&] {
    bool first = true;
    auto cache = [&](const std::string& source, const std::string& accessor,
                     const std::string& module) {
      if (!first) p.PrintRaw("\n");
      first = false;
      p.Emit({{"source", source}, {"cache", accessor}, {"module", module}},
             R"code(
               // The kernels of $source$, loaded once per CUDA context.
               ::kc::cuda::ModuleCache& $cache$() {
                 static ::kc::cuda::ModuleCache* cache = new ::kc::cuda::ModuleCache(&$module$);
                 return *cache;
               }
             )code");
    };
    for (const CudaBinary& b : info.cuda_binaries) {
      cache(Escape(b.source), Namer::CudaCacheAccessor(b.source_index, /*fold=*/false),
            request.namer().CudaModuleSymbol(b.source_index));
      if (!b.fold_kernels.empty())
        cache(Escape(b.source) + " (fold program)",
              Namer::CudaCacheAccessor(b.source_index, /*fold=*/true),
              request.namer().CudaFoldModuleSymbol(b.source_index));
    }
  };
  for (const CudaBinary& b : info.cuda_binaries) {
    decls.push_back(
        fmt::format("extern const kc_cuda_module {};",
                    request.namer().CudaModuleSymbol(b.source_index)));
    if (!b.fold_kernels.empty())
      decls.push_back(
          fmt::format("extern const kc_cuda_module {};",
                      request.namer().CudaFoldModuleSymbol(b.source_index)));
  }
  p.Emit({{"decls", fmt::format("{}", fmt::join(decls, "\n"))},
          {"caches", caches}},
         R"code(

           // The CUDA binaries of each kernel source, in cuda_images.cc.
           extern "C" {
           $decls$
           }  // extern "C"

           namespace {

           $caches$
           }  // namespace
         )code");
}

void CudaShim::EmitHandlers(const EmitRequest& request,
                            const sema::KernelPlan& kp, Printer& p) const {
  std::optional<Slot> slot = FindSlot(request, *kp.kernel);
  if (!slot) {
    p.Fail(Error::Internal(fmt::format("no CUDA binary for kernel '{}' of {}",
                                       kp.kernel->name, kp.kernel->source)));
    return;
  }
  EmitInitHandler(kp, *slot, p);
  EmitExecuteHandler(kp, *slot, p);
}

void CudaShim::EmitRegistration(const EmitRequest& request,
                                const sema::KernelPlan& kp, Printer& p) const {
  const model::Kernel& k = *kp.kernel;
  p.Emit({{"kernel", k.name}},
         R"code(
           // The CUDA handlers of '$kernel$': an initialize stage that loads the module
           // and an execute stage that only launches, marked command-buffer compatible.
         )code");
  constexpr std::string_view stream =
      "XLA_FFI_Error* kc_reply = nullptr;\n"
      "const CUstream kc_context = "
      "static_cast<CUstream>(::kc::ffi::Stream(call_frame, &kc_reply));\n"
      "if (kc_reply != nullptr) return kc_reply;";
  HandlerParts h(kp);
  h.EmitHandlerSymbol(p, request.namer().HandlerSymbol(k.Id(), "cuda_init"),
                      Impl(k, "_init"), "XLA_FFI_ExecutionStage_INITIALIZE",
                      "0", stream);
  h.EmitHandlerSymbol(p, HandlerSymbol(request.namer(), k), Impl(k, ""),
                      "XLA_FFI_ExecutionStage_EXECUTE",
                      "XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE",
                      stream);
}

void CudaShim::EmitPyRegistration(const EmitRequest& request,
                                  const model::Kernel& kernel,
                                  Printer& p) const {
  const Namer& namer = request.namer();
  p.Emit({{"target", Quote(namer.FfiTarget(kernel.Id()))},
          {"init", Quote(namer.HandlerSymbol(kernel.Id(), "cuda_init"))},
          {"execute", Quote(HandlerSymbol(namer, kernel))}},
         R"py(
           _PACKAGE.register_cuda(_LIBRARY, $target$, $init$, $execute$)
         )py");
}

std::string CudaShim::HandlerSymbol(const Namer& namer,
                                    const model::Kernel& kernel) const {
  return namer.HandlerSymbol(kernel.Id(), "cuda");
}

}  // namespace kernelc::emit
