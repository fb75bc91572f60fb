#include <fmt/format.h>

#include <set>

#include "compiler/emit/cpu_shim.h"
#include "compiler/emit/generators.h"
#include "compiler/emit/text.h"
#include "kernelc/launch.h"

namespace kernelc::emit {

namespace {

// What an entry file includes before the user's source: kernelc's headers
// only, the same for every source, so precompiled once (the headers of
// the CUDA built-ins for the CPU bring <math.h> and <memory>, most of a
// small source's compile time).
constexpr const char* kHostPrelude =
    "#include \"kernelc.h\"\n"
    "#include \"kernelc/cpu_exec.h\"\n"
    "#include \"kernelc/launch.h\"\n";

}  // namespace

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
         {"prelude", kHostPrelude},
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
    Status s = context.WriteSource(
        HostSourceName(sources[i], static_cast<int>(i)), p, kHostPrelude);
    if (!s.ok()) return s;
  }
  return Status();
}

}  // namespace kernelc::emit
