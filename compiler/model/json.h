// The model as canonical JSON: sorted keys, declaration order for lists. What
// `kernelc inspect` prints, `kernelc build` accepts as a spec.
#ifndef KERNELC_COMPILER_MODEL_JSON_H_
#define KERNELC_COMPILER_MODEL_JSON_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "compiler/diag/engine.h"
#include "compiler/model/json_positions.h"
#include "compiler/model/model.h"
#include "compiler/util/status.h"

namespace kernelc::model {

nlohmann::json ToJson(const Module& m);

// Canonical text: 2-space indent, sorted keys, trailing newline.
std::string ToCanonicalJson(const Module& m);

// Reads a spec. `file` names it in diagnostics, which are at the line and
// column of what is wrong, with its JSON path: invalid JSON, structural
// problems (a missing field, a wrong type, an unknown dtype or role, a
// number out of range) and a "loc" that names a file other than the spec
// and the sources it names. The result is then Error::Reported().
//
// Each kernel's "source" is required; a relative one is in the spec's
// directory (the model holds it joined to that directory). A value without
// a "loc" is placed where it is in the spec: a kernel and a parameter at
// their "name", a text inside its string. `places`, when set, receives
// where every value of the spec is (when the spec is valid JSON).
Result<Module> FromJson(std::string_view text, const std::string& file,
                        diag::DiagnosticEngine& diags,
                        JsonPlaces* places = nullptr);

}  // namespace kernelc::model

#endif  // KERNELC_COMPILER_MODEL_JSON_H_
