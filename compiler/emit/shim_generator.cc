#include <utility>

#include "compiler/emit/generators.h"
#include "compiler/emit/platform_shim.h"
#include "kernelc/launch.h"

namespace kernelc::emit {

// Kernel by kernel, each platform's part in target order.
Status ShimGenerator::Generate(const EmitRequest& request,
                               GeneratorContext& context) const {
  const std::vector<const PlatformShim*>& platforms = request.platforms();
  // The prelude: the includes of every shim, then each platform's own.
  Printer includes;
  includes.Emit(R"code(
    #include <stdint.h>
    #include <string.h>

    #include <algorithm>
    #include <mutex>
    #include <string>

    #include "kernelc/batch.h"
    #include "kernelc/ffi.h"
    #include "kernelc/ffi_support.h"
    #include "kernelc/half.h"
    #include "kernelc/launch.h"
    #include "kernelc/runtime.h"
  )code");
  for (const PlatformShim* platform : platforms)
    platform->EmitIncludes(request, includes);
  Result<std::string> prelude = includes.Finish();
  if (!prelude.ok()) return prelude.error();
  Printer p;
  auto each = [&](auto emit) {
    for (const sema::KernelPlan& kp : request.plan().kernels)
      for (const PlatformShim* platform : platforms)
        if (platform->Runs(*kp.kernel)) emit(*platform, kp);
  };
  p.EmitTemplate(
      "cpp/shim.cc.tmpl",
      {{"banner", request.Banner(request.module().sources, "//")},
       {"package", request.info().package},
       {"abi_version", KC_RUNTIME_ABI_VERSION},
       {"prelude", prelude.value()},
       {"support",
        [&] {
          for (const PlatformShim* platform : platforms)
            platform->EmitSupport(request, p);
        }},
       {"declarations",
        [&] {
          for (const PlatformShim* platform : platforms)
            platform->EmitDeclarations(request, p);
        }},
       {"handlers",
        [&] {
          each([&](const PlatformShim& platform, const sema::KernelPlan& kp) {
            platform.EmitHandlers(request, kp, p);
          });
        }},
       {"registrations", [&] {
          bool first = true;
          each([&](const PlatformShim& platform, const sema::KernelPlan& kp) {
            if (!first) p.PrintRaw("\n");
            first = false;
            platform.EmitRegistration(request, kp, p);
          });
        }}});
  return context.WriteSource("shim.cc", p, std::move(prelude).value());
}

}  // namespace kernelc::emit
