// The catalogue of kernelc's diagnostics: every diagnostic that kernelc
// itself issues has an identifier, a severity and a format here, from one
// table (messages.def). Reporting sites name the identifier and pass the
// format's arguments; the number of arguments is checked when they compile.
// `print_catalogue` prints the table, and the golden tests hold it
// (tests/golden/diag_catalogue).
#ifndef KERNELC_COMPILER_DIAG_CATALOGUE_H_
#define KERNELC_COMPILER_DIAG_CATALOGUE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kernelc::diag {

enum class Severity { kNote, kWarning, kError, kFatal };

// "note", "warning", "error", "fatal error".
const char* SeverityName(Severity s);

enum class Id : uint16_t {
#define KERNELC_DIAG(NAME, SEVERITY, FORMAT) k##NAME,
#include "compiler/diag/messages.def"
#undef KERNELC_DIAG
};

struct Message {
  std::string_view name;  // the identifier without its 'k'
  Severity severity;
  // An fmt format: "{}" takes the next argument, "{{" and "}}" are braces.
  std::string_view format;
};

inline constexpr Message kCatalogue[] = {
#define KERNELC_DIAG(NAME, SEVERITY, FORMAT) \
  {#NAME, Severity::k##SEVERITY, FORMAT},
#include "compiler/diag/messages.def"
#undef KERNELC_DIAG
};

constexpr const Message& MessageOf(Id id) {
  return kCatalogue[static_cast<size_t>(id)];
}

// The number of "{}" fields of a format; -1 when it has any other brace
// than "{}", "{{" and "}}" (the catalogue's formats take their arguments in
// order, unformatted).
constexpr int CountFields(std::string_view format) {
  int fields = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    if (c != '{' && c != '}') continue;
    if (i + 1 < format.size() && format[i + 1] == c) {
      ++i;  // "{{" or "}}"
    } else if (c == '{' && i + 1 < format.size() && format[i + 1] == '}') {
      ++fields;
      ++i;
    } else {
      return -1;
    }
  }
  return fields;
}

// The catalogue, one entry a line in table order: "Name: severity: format",
// with a line break in a format written "\n".
std::string CatalogueText();

}  // namespace kernelc::diag

#endif  // KERNELC_COMPILER_DIAG_CATALOGUE_H_
