#include <fmt/format.h>

#include "compiler/emit/generators.h"
#include "compiler/emit/text.h"

namespace kernelc::emit {

namespace {

// An entry of the fold program: the kernel, now a device function, called
// with its tensors moved to the batch element of blockIdx.z. Tensor
// parameters are numbered in declaration order, as the handler fills
// kc::fold::Batch::step.
void EmitEntry(const sema::KernelPlan& kp, Printer& p) {
  const model::Kernel& k = *kp.kernel;
  // The kernel's own launch bounds give way to its block.
  int64_t threads = 1;
  for (int64_t b : kp.block) threads *= b;
  std::vector<std::string> args;
  for (size_t i = 0; i < k.params.size(); ++i)
    args.push_back(fmt::format("a{}", i));
  auto params = [&] {
    for (size_t i = 0; i < k.params.size(); ++i)
      p.Emit({{"kernel", k.name}, {"i", i}}, R"code(
        ::kc::fold::Param<decltype($kernel$), $i$> a$i$,
      )code");
  };
  auto shifts = [&] {
    int tensor = 0;
    for (size_t i = 0; i < k.params.size(); ++i)
      if (model::IsTensor(k.params[i].role))
        p.Emit({{"i", i}, {"tensor", tensor++}}, R"code(
          ::kc::fold::Shift(a$i$, ::kc::fold::Offset(kc_batch, $tensor$));
        )code");
  };
  p.Emit({{"kernel", k.name},
          {"entry", Namer::CudaFoldEntry(k.name)},
          {"threads", threads},
          {"params", params},
          {"shifts", shifts},
          {"args", fmt::format("{}", fmt::join(args, ", "))}},
         R"code(
           // Kernel '$kernel$', one batch element per blockIdx.z.
           extern "C" __attribute__((global)) __attribute__((launch_bounds($threads$))) void $entry$(
               $params$
               const ::kc::fold::Batch kc_batch) {
             $shifts$
             $kernel$($args$);
           }
         )code");
}

}  // namespace

Result<std::string> CudaFoldProgram(
    const sema::ModulePlan& plan, const std::string& source,
    std::string_view text, const std::vector<const model::Kernel*>& kernels) {
  std::vector<const sema::KernelPlan*> entries;
  for (const model::Kernel* k : kernels) {
    const sema::KernelPlan* found = nullptr;
    for (const sema::KernelPlan& kp : plan.kernels)
      if (kp.kernel == k) found = &kp;
    if (!found)
      return Error::Internal(
          fmt::format("fold program of {}: kernel '{}' is not in the plan",
                      source, k->name));
    entries.push_back(found);
  }
  Printer p;
  auto emit_entries = [&] {
    for (const sema::KernelPlan* kp : entries) {
      if (kp != entries.front()) p.PrintRaw("\n");
      EmitEntry(*kp, p);
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
    if (b.fold_kernels.empty()) continue;
    std::vector<const model::Kernel*> kernels;
    for (const std::string& name : b.fold_kernels)
      kernels.push_back(request.module().FindKernel(name));
    // As NVRTC compiled it, but for the source's name.
    Result<std::string> program =
        CudaFoldProgram(request.plan(), b.source, b.text, kernels);
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
