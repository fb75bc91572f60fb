#include <fmt/format.h>

#include <utility>

#include "compiler/emit/generators.h"
#include "compiler/emit/text.h"
#include "kernelc/launch.h"

namespace kernelc::emit {

using model::CudaBinary;
using model::CudaImage;

namespace {

// One kc_cuda_module: the images of a program and the names of its
// kernels, which the runtime looks functions up by.
Status EmitModule(const EmitRequest& request, const CudaBinary& b,
                  const std::string& symbol,
                  const std::vector<CudaImage>& images,
                  const std::vector<std::string>& kernels, bool fold,
                  Printer& p, GeneratorContext& context) {
  // Each image as one string literal: Clang reads a literal of a megabyte
  // in milliseconds, where an initializer list of as many integers took it
  // about a second. Printable characters stand for themselves, the rest
  // (and '"', '\\', '?' and the printer's '$') are three-digit octal
  // escapes, which no following digit can extend.
  auto arrays = [&] {
    for (size_t i = 0; i < images.size(); ++i) {
      const CudaImage& im = images[i];
      std::string text;
      size_t column = 0;
      for (unsigned char c : im.data) {
        if (column == 0) text += "\n    \"";
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?' &&
            c != '$') {
          text += static_cast<char>(c);
          column += 1;
        } else {
          text += fmt::format("\\{:03o}", c);
          column += 4;
        }
        if (column >= 76) {
          text += '"';
          column = 0;
        }
      }
      if (column > 0 || im.data.empty()) {
        if (im.data.empty()) text += "\n    \"";
        text += '"';
      }
      // Aligned beyond what ELF asks (8 bytes) for cuModuleLoadData, which
      // reads the image in place. The literal's terminating NUL ends PTX,
      // which cuModuleLoadData reads as a C string.
      p.Emit({{"name", CudaImageName(b, im, fold)},
              {"size", im.data.size()},
              {"sha256", im.sha256},
              {"array", fmt::format("{}_image_{}", symbol, i)},
              {"bytes", text}},
             R"code(
               // $name$ ($size$ bytes, sha256 $sha256$)
               alignas(64) static const unsigned char $array$[] =$bytes$;
             )code");
    }
  };
  // The sizes: a cubin's bytes, without the literal's NUL; PTX's with it.
  auto entries = [&] {
    for (size_t i = 0; i < images.size(); ++i)
      p.Emit({{"sm", images[i].sm},
              {"ptx", images[i].is_ptx ? 1 : 0},
              {"array", fmt::format("{}_image_{}", symbol, i)},
              {"nul", images[i].is_ptx ? "" : " - 1"}},
             R"code(
               {$sm$, $ptx$, $array$, sizeof($array$)$nul$},
             )code");
  };
  auto names = [&] {
    for (const std::string& name : kernels)
      p.Emit({{"name", Quote(name)}}, R"code(
        $name$,
      )code");
  };
  p.Emit({{"source", Escape(b.source)},
          {"symbol", symbol},
          {"arrays", arrays},
          {"entries", entries},
          {"kernels", names},
          {"num_images", images.size()},
          {"num_kernels", kernels.size()},
          {"cuda_version", request.info().cuda_version}},
         R"code(
           // $source$
           $arrays$
           static const kc_cuda_image $symbol$_images[] = {
               $entries$
           };
           static const char* const $symbol$_kernels[] = {
               $kernels$
           };
           extern "C" const kc_cuda_module $symbol$ = {
               "$source$", $symbol$_images, $num_images$, $symbol$_kernels, $num_kernels$, $cuda_version$};
         )code");
  for (const CudaImage& im : images)
    if (Status s = context.Write(GeneratorContext::Tree::kBuild,
                                 "cuda/" + CudaImageName(b, im, fold), im.data);
        !s.ok())
      return s;
  return Status();
}

}  // namespace

std::string CudaImageName(const CudaBinary& b, const CudaImage& im, bool fold) {
  return fmt::format("{}_{}.{}{}_{}.{}", b.source_index, Stem(b.source),
                     fold ? "fold." : "", im.is_ptx ? "compute" : "sm", im.sm,
                     im.is_ptx ? "ptx" : "cubin");
}

Status CudaImagesGenerator::Generate(const EmitRequest& request,
                                     GeneratorContext& context) const {
  const model::BuildInfo& info = request.info();
  if (!model::HasTarget(info, model::Target::kCuda) ||
      info.cuda_binaries.empty())
    return Status();
  const Namer& namer = request.namer();
  Status status;
  Printer p;
  auto modules = [&] {
    bool first = true;
    for (const CudaBinary& b : info.cuda_binaries) {
      // The source's kernels, and kc_fill_u64 for KC_INIT.
      std::vector<std::string> kernels = b.lowered;
      kernels.push_back("kc_fill_u64");
      if (!first) p.PrintRaw("\n");
      first = false;
      status = EmitModule(request, b, namer.CudaModuleSymbol(b.source_index),
                          b.images, kernels, /*fold=*/false, p, context);
      if (!status.ok()) return;
      if (b.fold_kernels.empty() && b.entry_kernels.empty()) continue;
      std::vector<std::string> entries;
      for (const std::string& k : b.fold_kernels)
        entries.push_back(
            Namer::CudaFoldEntry(request.module().FindKernel(k)->Id()));
      for (const std::string& k : b.entry_kernels)
        entries.push_back(
            Namer::CudaEntry(request.module().FindKernel(k)->Id()));
      p.PrintRaw("\n");
      status =
          EmitModule(request, b, namer.CudaFoldModuleSymbol(b.source_index),
                     b.fold_images, entries, /*fold=*/true, p, context);
      if (!status.ok()) return;
    }
  };
  // The prelude: the runtime's descriptors of the data.
  Printer includes;
  includes.Emit(R"code(
    #include <stddef.h>

    #include "kernelc/cuda.h"
    #include "kernelc/launch.h"
  )code");
  Result<std::string> prelude = includes.Finish();
  if (!prelude.ok()) return prelude.error();
  p.EmitTemplate("cpp/cuda_images.cc.tmpl",
                 {{"banner", request.Banner(request.module().sources, "//")},
                  {"prelude", prelude.value()},
                  {"abi_version", KC_RUNTIME_ABI_VERSION},
                  {"images", modules}});
  if (!status.ok()) return status;
  return context.WriteSource("cuda_images.cc", p, std::move(prelude).value());
}

}  // namespace kernelc::emit
