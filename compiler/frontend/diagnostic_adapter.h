// Clang's diagnostics in kernelc's engine. The frontend reports its own
// diagnostics through Clang's DiagnosticsEngine too, so that both arrive
// here in the order they were reported, are dropped alike after a fatal
// error, and go into one diag::DiagnosticEngine converted the same way:
// with the notes Clang adds for macro expansions, their include stacks,
// ranges, fix-its and source lines, rather than printed by Clang.
#ifndef KERNELC_COMPILER_FRONTEND_DIAGNOSTIC_ADAPTER_H_
#define KERNELC_COMPILER_FRONTEND_DIAGNOSTIC_ADAPTER_H_

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Basic/SourceLocation.h>
#include <clang/Basic/SourceManager.h>

#include <functional>
#include <map>
#include <memory>

#include "compiler/diag/engine.h"

namespace kernelc::frontend {

// A DiagnosticConsumer that adds each diagnostic Clang reports to an engine,
// at once, with the notes that Clang's text printer would add for the macros
// it was expanded from. Clang's counts (getNumErrors) are kept too. One
// adapter serves the sources of a parse one after another.
class DiagnosticAdapter : public clang::DiagnosticConsumer {
 public:
  // `diags` must outlive the adapter.
  explicit DiagnosticAdapter(diag::DiagnosticEngine& diags);
  ~DiagnosticAdapter() override;

  // Called after each error the adapter adds, with that source's manager:
  // for a reporter whose diagnostic must follow Clang's error directly.
  using ErrorHook = std::function<void(const clang::SourceManager&)>;
  void set_error_hook(ErrorHook hook) { error_hook_ = std::move(hook); }

  // Reports `d`, a diagnostic of kernelc's catalogue (diag::Make), at
  // Clang's location `loc` through `clang_diags`: the engine of the source
  // being read, whose client this adapter is. It comes back through
  // HandleDiagnostic and reaches the kernelc engine with its identifier.
  void Report(clang::DiagnosticsEngine& clang_diags, clang::SourceLocation loc,
              const diag::Diagnostic& d);

  void BeginSourceFile(const clang::LangOptions& lang,
                       const clang::Preprocessor* pp) override;
  void EndSourceFile() override;
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic& info) override;

 private:
  class Converter;

  diag::DiagnosticEngine& diags_;
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> options_;
  // The catalogue entry of each custom diagnostic that Report registered
  // with the source being read (its IDs are that source's engine's).
  std::map<unsigned, diag::Id> catalogue_ids_;
  // Between BeginSourceFile and EndSourceFile: it needs the language.
  std::unique_ptr<Converter> converter_;
  ErrorHook error_hook_;
};

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_DIAGNOSTIC_ADAPTER_H_
