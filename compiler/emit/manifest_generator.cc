#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "compiler/emit/generators.h"
#include "compiler/emit/platform_shim.h"
#include "compiler/model/json.h"
#include "kernelc/launch.h"

namespace kernelc::emit {

using model::CudaBinary;
using model::CudaImage;

namespace {

nlohmann::json ImagesJson(const std::vector<CudaImage>& images) {
  nlohmann::json out = nlohmann::json::array();
  for (const CudaImage& im : images)
    out.push_back(
        {{"arch", fmt::format("{}_{}", im.is_ptx ? "compute" : "sm", im.sm)},
         {"format", im.is_ptx ? "ptx" : "cubin"},
         {"bytes", im.data.size()},
         {"sha256", im.sha256}});
  return out;
}

// The cuda target's part: the architectures, the NVRTC that compiled the
// binaries, and each source's binaries by SHA-256.
nlohmann::json CudaJson(const model::BuildInfo& info) {
  nlohmann::json archs = nlohmann::json::array();
  for (int a : info.cuda_archs) archs.push_back(fmt::format("sm_{}", a));
  nlohmann::json bins = nlohmann::json::array();
  for (const CudaBinary& b : info.cuda_binaries) {
    nlohmann::json bin = {{"source", b.source},
                          {"kernels", b.lowered},
                          {"images", ImagesJson(b.images)}};
    // The batch fold: the kernels whose vmap batch runs as one launch
    // along the grid's z axis, and the fold program's images.
    if (!b.fold_kernels.empty() || !b.entry_kernels.empty()) {
      bin["fold"] = {{"kernels", b.fold_kernels},
                     {"images", ImagesJson(b.fold_images)}};
      if (!b.entry_kernels.empty()) bin["fold"]["entries"] = b.entry_kernels;
    }
    bins.push_back(bin);
  }
  return {{"archs", archs},
          {"nvrtc", model::CudaVersionText(info.cuda_version)},
          {"fast_math", info.cuda_fast_math},
          {"binaries", bins}};
}

}  // namespace

Status ManifestGenerator::Generate(const EmitRequest& request,
                                   GeneratorContext& context) const {
  const model::BuildInfo& info = request.info();
  const Namer& namer = request.namer();
  nlohmann::json kernels = nlohmann::json::array();
  for (const sema::KernelPlan& kp : request.plan().kernels) {
    const model::Kernel& k = *kp.kernel;
    nlohmann::json handlers = nlohmann::json::object();
    for (const PlatformShim* platform : request.platforms())
      if (platform->Runs(k))
        handlers[std::string(model::TargetName(platform->target()))] =
            platform->HandlerSymbol(namer, k);
    kernels.push_back({{"name", k.name},
                       {"python_name", Namer::Python(k.Op())},
                       {"ffi_target", namer.FfiTarget(k.Id())},
                       {"handlers", handlers}});
  }
  std::vector<std::string> targets;
  for (model::Target t : info.targets)
    targets.emplace_back(model::TargetName(t));
  nlohmann::json manifest = {
      {"generated_by", fmt::format("kernelc {}", info.version)},
      {"package", info.package},
      {"content_hash", info.content_hash},
      {"library", namer.LibraryFile()},
      {"targets", targets},
      {"runtime_abi", KC_RUNTIME_ABI_VERSION},
      {"xla_ffi_api", info.ffi_api},
      {"jaxlib_headers", info.jaxlib_floor},
      {"kernels", kernels},
      {"model", model::ToJson(request.module())},
  };
  if (model::HasTarget(info, model::Target::kCuda))
    manifest["cuda"] = CudaJson(info);
  return context.Write(GeneratorContext::Tree::kPackage, "kernelc.json",
                       manifest.dump(2) + "\n");
}

}  // namespace kernelc::emit
