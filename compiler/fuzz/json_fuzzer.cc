// libFuzzer target: the JSON spec reader, over any bytes. Every input is a
// model or reported diagnostics; nothing throws, nothing crashes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/diag/engine.h"
#include "compiler/model/json.h"
#include "compiler/model/json_positions.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  kernelc::diag::DiagnosticEngine diags;
  kernelc::model::JsonPlaces places;
  kernelc::Result<kernelc::model::Module> m =
      kernelc::model::FromJson(text, "fuzz/spec.json", diags, &places);
  if (m.ok()) kernelc::model::ToJson(m.value());
  diags.Render();
  return 0;
}
