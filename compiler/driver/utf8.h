// The UTF-8 requirement on what kernelc writes into generated text.
#ifndef KERNELC_COMPILER_DRIVER_UTF8_H_
#define KERNELC_COMPILER_DRIVER_UTF8_H_

#include <string>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/model/model.h"
#include "compiler/util/status.h"

namespace kernelc::driver {

// The generated Python and JSON (the manifest, `inspect`) hold UTF-8 text
// only, and they hold the sources' names and the annotations: a name or
// text of other bytes is the user's to fix, and is reported to `diags`
// before any work, showing the offending text with its other bytes as \xNN
// escapes (Error::Reported()).
Status RequireUtf8(const std::vector<std::string>& sources,
                   diag::DiagnosticEngine& diags);
// Every string of the model: the sources, names, annotation text, the
// files of source locations (a kernel annotated in a header, say).
Status RequireUtf8(const model::Module& m, diag::DiagnosticEngine& diags);

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_UTF8_H_
