// The model as canonical JSON: sorted keys, declaration order for lists. What
// `kernelc inspect` prints, `kernelc build` accepts as a spec.
#ifndef KERNELC_COMPILER_MODEL_JSON_H_
#define KERNELC_COMPILER_MODEL_JSON_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "compiler/diag/engine.h"
#include "compiler/model/model.h"
#include "compiler/util/status.h"

namespace kernelc::model {

nlohmann::json ToJson(const Module& m);

// Canonical text: 2-space indent, sorted keys, trailing newline.
std::string ToCanonicalJson(const Module& m);

// Reads a spec. `file` names it in diagnostics. Structural problems (a
// missing field, a wrong type, an unknown dtype or role) are reported to
// `diags` with the JSON path, and the result is Error::Reported().
Result<Module> FromJson(std::string_view text, const std::string& file,
                        diag::DiagnosticEngine& diags);

}  // namespace kernelc::model

#endif  // KERNELC_COMPILER_MODEL_JSON_H_
