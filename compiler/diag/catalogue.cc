#include "compiler/diag/catalogue.h"

#include <fmt/format.h>

namespace kernelc::diag {

// Every format must take its arguments as Report passes them; checked here
// once for the whole table, so that a malformed entry fails the build even
// before a reporting site uses it.
static_assert([] {
  for (const Message& m : kCatalogue)
    if (CountFields(m.format) < 0) return false;
  return true;
}());

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kNote:
      return "note";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
    case Severity::kFatal:
      return "fatal error";
  }
  return "error";
}

std::string CatalogueText() {
  std::string out;
  for (const Message& m : kCatalogue) {
    std::string format(m.format);
    for (size_t at = format.find('\n'); at != std::string::npos;
         at = format.find('\n', at + 2))
      format.replace(at, 1, "\\n");
    out +=
        fmt::format("{}: {}: {}\n", m.name, SeverityName(m.severity), format);
  }
  return out;
}

}  // namespace kernelc::diag
