#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "compiler/emit/cpu_shim.h"
#include "compiler/emit/generators.h"
#include "compiler/emit/text.h"
#include "kernelc/launch.h"
#include "runtime/embedded_runtime_sources.h"

namespace kernelc::emit {

std::string HostSourceName(const std::string& source, int source_index) {
  return fmt::format("host_{}_{}.cc", source_index, Stem(source));
}

Status HostEntriesGenerator::Generate(const EmitRequest& request,
                                      GeneratorContext& context) const {
  if (!model::HasTarget(request.info(), model::Target::kCpu)) return Status();
  const std::vector<std::string>& sources = request.module().sources;
  for (size_t i = 0; i < sources.size(); ++i) {
    std::vector<const sema::KernelPlan*> kernels;
    for (const sema::KernelPlan& kp : request.plan().kernels)
      if (kp.kernel->source == sources[i]) kernels.push_back(&kp);
    // A source without kernels has no entry points.
    if (kernels.empty()) continue;
    std::set<model::ExternShared> shared;
    for (const sema::KernelPlan* kp : kernels)
      shared.insert(kp->kernel->extern_shared.begin(),
                    kp->kernel->extern_shared.end());
    Printer p;
    p.EmitTemplate(
        "cpp/host_kernels.cc.tmpl",
        {{"banner", request.Banner({sources[i]}, "//")},
         {"source", Escape(sources[i])},
         {"abi_version", KC_RUNTIME_ABI_VERSION},
         {"entries", [&] {
            if (!shared.empty()) {
              p.Emit(R"code(
                // The storage of the source's `extern __shared__` arrays (dynamic shared
                // memory): one copy per OS thread that runs blocks.
              )code");
              EmitExternShared({shared.begin(), shared.end()}, p);
              p.PrintRaw("\n");
            }
            for (const sema::KernelPlan* kp : kernels) {
              if (kp != kernels.front()) p.PrintRaw("\n");
              EmitCpuEntry(request, *kp, p);
            }
          }}});
    Status s =
        context.Write(GeneratorContext::Tree::kBuild,
                      HostSourceName(sources[i], static_cast<int>(i)), p);
    if (!s.ok()) return s;
  }
  // The block executor, verbatim, for a package with a kernel that runs
  // under it: the same bytes in every package, so it is tested as itself.
  const bool executor =
      std::any_of(request.plan().kernels.begin(), request.plan().kernels.end(),
                  [](const sema::KernelPlan& kp) { return kp.block_executor; });
  if (!executor) return Status();
  // Its prelude: the includes it opens with (WriteSource checks that it
  // still does).
  constexpr std::string_view kPrelude = R"code(#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <memory>
#include <new>

#include "kernelc/cpu_exec.h"
)code";
  for (const EmbeddedFile& f : embedded::RuntimeSources())
    if (f.path == "src/block_exec.cc")
      return context.WriteSource(std::string(kBlockExecutorSource),
                                 std::string(f.contents),
                                 std::string(kPrelude));
  return Error::Internal("kernelc embeds no block executor");
}

}  // namespace kernelc::emit
