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
// EmitCpuEntry, unnamed.
std::string EntryDeclaration(const Namer& namer, const model::Kernel& k) {
  std::vector<std::string> params;
  if (k.kind == model::KernelKind::kGlobal)
    params.push_back("const kc_launch*");
  for (const Param& p : k.params) {
    if (model::IsTensor(p.role)) {
      params.push_back("void*");
      if (p.access == Access::kView) params.push_back("const int64_t*");
    } else {
      params.push_back(std::string(model::DTypeCppName(p.dtype)));
    }
  }
  return fmt::format("void {}({});", namer.CpuEntrySymbol(k.Id()),
                     fmt::join(params, ", "));
}

// The element's statements after the checks: in-place copies and fills,
// then the entry point.
void EmitBody(const EmitRequest& request, const HandlerParts& h, Printer& p) {
  const model::Kernel& k = h.kernel();
  h.EmitChecks(p);
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
  if (h.grid()) args.insert(args.begin(), "&kc_launch_");
  p.Emit({{"entry", request.namer().CpuEntrySymbol(k.Id())},
          {"args", fmt::format("{}", fmt::join(args, ", "))}},
         R"code(
           $entry$($args$);
         )code");
}

}  // namespace

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
  h.EmitElementFunction(p, "cpu", Impl(k), {},
                        [&] { EmitBody(request, h, p); });
  std::vector<std::string> operands = h.Operands();
  auto helpers = [&] {
    // How many pool threads share the batch.
    p.Emit({{"element_bytes", h.ElementBytes()}}, R"code(
      const int64_t kc_helpers = ::kc::rt::BatchHelpers(kc_pool.num_threads(), kc_batch, $element_bytes$);
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
  p.Emit({{"kernel", k.name},
          {"impl", Impl(k)},
          {"impl_params", ParamLines(h.ImplParams("ffi::ThreadPool kc_pool"))},
          {"batch", [&] { h.EmitBatchPlan(p); }},
          {"helpers", helpers},
          {"element_args",
           fmt::format("{}", fmt::join(h.ElementArgs("kc_i"), ",\n"))}},
         R"code(
           // The handler of '$kernel$': runs the kernel once per batch element, all in
           // this one call (one element outside vmap). Large batches spread over XLA's
           // intra-op thread pool; each element writes only its own results.
           ffi::Error $impl$($impl_params$) {
             $batch$
             ffi::Error kc_first;
             std::mutex kc_mutex;
             $helpers$
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
  if (grid) params.push_back("const kc_launch* kc_launch_");
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
  p.Emit(subs, R"code(
    // Runs '$kernel$' over its grid: blocks in order, the threads of each block
    // in order, the kernel inlined into the innermost loop so that it
    // vectorizes. One clone per instruction set, chosen when the library loads.
    extern "C" KC_HOST_CLONES_ void $symbol$($params$) {
      using ::kc::host::Index;
      ::kc::host::GridState& kc_state_ = ::kc::host::grid_state;
      const kc_dim3 kc_grid_ = kc_launch_->grid;
      const kc_dim3 kc_block_ = kc_launch_->block;
      kc_state_.grid_dim = {Index(kc_grid_.x), Index(kc_grid_.y), Index(kc_grid_.z)};
      kc_state_.block_dim = {Index(kc_block_.x), Index(kc_block_.y),
                             Index(kc_block_.z)};
      // Each index field is stored in the loop that owns it: the compiler then
      // forwards the stores to the kernel's loads and keeps them in registers.
      for (uint32_t bz = 0; bz < kc_grid_.z; ++bz) {
        kc_state_.block.z = Index(bz);
        for (uint32_t by = 0; by < kc_grid_.y; ++by) {
          kc_state_.block.y = Index(by);
          for (uint32_t bx = 0; bx < kc_grid_.x; ++bx) {
            kc_state_.block.x = Index(bx);
            for (uint32_t tz = 0; tz < kc_block_.z; ++tz) {
              kc_state_.thread.z = Index(tz);
              for (uint32_t ty = 0; ty < kc_block_.y; ++ty) {
                kc_state_.thread.y = Index(ty);
                for (uint32_t tx = 0; tx < kc_block_.x; ++tx) {
                  kc_state_.thread.x = Index(tx);
                  $kernel$($args$);
                }
              }
            }
          }
        }
      }
    }
  )code");
}

}  // namespace kernelc::emit
