// The annotation reader: the kernels that a translation unit defines, read
// from their kernelc annotations and their parameters' C++ types into the
// model. Its diagnostics are in the catalogue (compiler/diag/messages.def).
#ifndef KERNELC_COMPILER_FRONTEND_KERNEL_READER_H_
#define KERNELC_COMPILER_FRONTEND_KERNEL_READER_H_

#include <clang/AST/ASTContext.h>
#include <clang/Lex/Preprocessor.h>

#include <string>

#include "compiler/diag/engine.h"
#include "compiler/frontend/constants.h"
#include "compiler/frontend/diagnostic_adapter.h"
#include "compiler/model/model.h"

namespace kernelc::frontend {

// Reads the kernels that the main file of the translation unit defines into
// `module`, after those of earlier sources (a kernel named like one of
// them is an error). What is wrong with them is reported through the TU's
// DiagnosticsEngine, whose client is `reporter`; `diags`, where the
// reporter adds what it receives, tells which signatures have errors.
// `source` names the main file as the model does. Each kernel is exported
// when it carries kernelc annotations; a __global__ function without any is
// a helper kernel, left out. An annotated function template is a template
// kernel: each of its explicit instantiation definitions is a kernel, a
// variant of the op named after the template (model::Instantiation), read
// from the instantiation (its types, and its annotations with the template
// arguments substituted). Names in annotation expressions that are template
// parameters or object-like macros become the kernel's constants: `pp`
// holds the macros as the parse left them, and `evaluate` computes their
// expansions. A kernel whose signature Clang reported an
// error in is left out without a word of kernelc's: a KC_INIT, KC_GRID or
// KC_BLOCK argument that is not a constant expression is reported by Clang
// ("'annotate' attribute requires parameter N to be a constant
// expression"), which drops the annotation, and what kernelc would add
// ("needs a role", "needs KC_GRID") would only echo it.
void ReadKernels(clang::ASTContext& ctx, clang::Preprocessor& pp,
                 const std::string& source, model::Module& module,
                 DiagnosticAdapter& reporter,
                 const diag::DiagnosticEngine& diags,
                 const ConstantEvaluator& evaluate);

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_KERNEL_READER_H_
