// libFuzzer target: the annotation reader, the frontend over one in-memory
// source read as if it began with #include <kernelc.h>. Every input is a
// model or reported diagnostics; nothing crashes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/diag/engine.h"
#include "compiler/frontend/frontend.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  kernelc::frontend::Options o = kernelc::frontend::DefaultOptions();
  o.include_kernelc_h = true;
  o.virtual_files.push_back({"/fuzz/k.cu", text});
  kernelc::diag::DiagnosticEngine diags;
  kernelc::frontend::ParseSources({"/fuzz/k.cu"}, o, diags);
  diags.Render();
  return 0;
}
