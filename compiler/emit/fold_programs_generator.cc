#include <fmt/format.h>

#include "compiler/emit/generators.h"
#include "compiler/emit/text.h"

namespace kernelc::emit {

namespace {

// An entry of the fold program: the kernel, now a device function, called
// with its tensors moved to the batch element of blockIdx.z (`fold`), or
// called once (a kernel's entry, for its traced scalars). A traced scalar
// arrives as a pointer to its value, which the entry reads, of the batch
// element when it folds. Tensors and traced scalars are numbered in
// declaration order, as the handler fills kc::fold::Batch::step.
void EmitEntry(const sema::KernelPlan& kp, bool fold, Printer& p) {
  const model::Kernel& k = *kp.kernel;
  // The kernel's own launch bounds give way to its block.
  int64_t threads = 1;
  for (int64_t b : kp.block) threads *= b;
  std::vector<std::string> args;
  for (size_t i = 0; i < k.params.size(); ++i)
    args.push_back(fmt::format(k.params[i].traced ? "*a{}" : "a{}", i));
  std::vector<std::string> params;
  for (size_t i = 0; i < k.params.size(); ++i)
    params.push_back(fmt::format(
        k.params[i].traced ? "const ::kc::fold::Param<decltype({}), {}>* a{}"
                           : "::kc::fold::Param<decltype({}), {}> a{}",
        k.name, i, i));
  if (fold) params.push_back("const ::kc::fold::Batch kc_batch");
  auto shifts = [&] {
    if (!fold) return;
    int batched = 0;
    for (const model::Param& param : k.params)
      if (model::IsTensor(param.role) || param.traced) ++batched;
    if (batched == 0) return;
    p.Emit({{"n", batched}}, R"code(
      long long kc_offset[$n$];
      ::kc::fold::Offsets(kc_batch, kc_offset);
    )code");
    batched = 0;
    for (size_t i = 0; i < k.params.size(); ++i)
      if (model::IsTensor(k.params[i].role) || k.params[i].traced)
        p.Emit({{"i", i}, {"tensor", batched++}}, R"code(
          ::kc::fold::Shift(a$i$, kc_offset[$tensor$]);
        )code");
  };
  p.Emit({{"kernel", k.name},
          {"what", fold ? "one batch element per blockIdx.z"
                        : "its traced scalars read on the device"},
          {"entry",
           fold ? Namer::CudaFoldEntry(k.Id()) : Namer::CudaEntry(k.Id())},
          {"threads", threads},
          {"params", ParamLines(params)},
          {"shifts", shifts},
          {"args", fmt::format("{}", fmt::join(args, ", "))}},
         R"code(
           // Kernel '$kernel$', $what$.
           extern "C" __attribute__((global)) __attribute__((launch_bounds($threads$))) void $entry$($params$) {
             $shifts$
             $kernel$($args$);
           }
         )code");
}

}  // namespace

Result<std::string> CudaFoldProgram(
    const sema::ModulePlan& plan, const std::string& source,
    std::string_view text, const std::vector<const model::Kernel*>& fold,
    const std::vector<const model::Kernel*>& entries) {
  auto find = [&](const model::Kernel* k) -> const sema::KernelPlan* {
    for (const sema::KernelPlan& kp : plan.kernels)
      if (kp.kernel == k) return &kp;
    return nullptr;
  };
  std::vector<std::pair<const sema::KernelPlan*, bool>> all;
  for (const auto* list : {&fold, &entries})
    for (const model::Kernel* k : *list) {
      const sema::KernelPlan* found = find(k);
      if (!found)
        return Error::Internal(
            fmt::format("fold program of {}: kernel '{}' is not in the plan",
                        source, k->name));
      all.push_back({found, list == &fold});
    }
  Printer p;
  auto emit_entries = [&] {
    for (size_t i = 0; i < all.size(); ++i) {
      if (i > 0) p.PrintRaw("\n");
      EmitEntry(*all[i].first, all[i].second, p);
    }
  };
  p.EmitTemplate(
      "cpp/cuda_fold_program.cu.tmpl",
      {{"source", source}, {"text", text}, {"entries", emit_entries}});
  return p.Finish();
}

Status FoldProgramsGenerator::Generate(const EmitRequest& request,
                                       GeneratorContext& context) const {
  if (!model::HasTarget(request.info(), model::Target::kCuda)) return Status();
  for (const model::CudaBinary& b : request.info().cuda_binaries) {
    if (b.fold_kernels.empty() && b.entry_kernels.empty()) continue;
    std::vector<const model::Kernel*> fold, entries;
    for (const std::string& name : b.fold_kernels)
      fold.push_back(request.module().FindKernel(name));
    for (const std::string& name : b.entry_kernels)
      entries.push_back(request.module().FindKernel(name));
    // As NVRTC compiled it, but for the source's name.
    Result<std::string> program =
        CudaFoldProgram(request.plan(), b.source, b.text, fold, entries);
    if (!program.ok()) return program.error();
    Status s = context.Write(
        GeneratorContext::Tree::kBuild,
        fmt::format("cuda/{}_{}.fold.cu", b.source_index, Stem(b.source)),
        request.Banner({b.source}, "//") + "\n" + program.value());
    if (!s.ok()) return s;
  }
  return Status();
}

}  // namespace kernelc::emit
