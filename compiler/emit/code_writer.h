// Fills emitted-code templates. A template is text with $name$ placeholders
// ($$ is a literal $). A multi-line value replacing a placeholder that stands
// alone on its line (after indentation) is re-indented to that column, so
// templates nest. A placeholder without a value, or a value no placeholder
// uses, is an internal error: templates and emitters cannot drift apart
// silently. User text is only ever a value, never a template.
#ifndef KERNELC_COMPILER_EMIT_CODE_WRITER_H_
#define KERNELC_COMPILER_EMIT_CODE_WRITER_H_

#include <map>
#include <string>
#include <string_view>

#include "compiler/util/status.h"

namespace kernelc::emit {

using Vars = std::map<std::string, std::string>;

// `name` identifies the template in error messages.
Result<std::string> Fill(std::string_view name, std::string_view tmpl,
                         const Vars& vars);

// The embedded template `templates/<name>`; an internal error if absent.
Result<std::string_view> Template(std::string_view name);

// Fill(Template(name), vars).
Result<std::string> FillTemplate(std::string_view name, const Vars& vars);

// Prefixes every non-empty line of `text` with `indent`.
std::string Indent(std::string_view text, std::string_view indent);

}  // namespace kernelc::emit

#endif  // KERNELC_COMPILER_EMIT_CODE_WRITER_H_
