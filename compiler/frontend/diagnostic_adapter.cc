#include "compiler/frontend/diagnostic_adapter.h"

#include <clang/Basic/LangOptions.h>
#include <clang/Frontend/DiagnosticRenderer.h>
#include <clang/Lex/Lexer.h>
#include <llvm/ADT/SmallString.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/frontend/locations.h"

namespace kernelc::frontend {

namespace {

// As many lines as the engine shows under one diagnostic.
constexpr unsigned kMaxExcerptLines = 16;

diag::Severity SeverityOf(clang::DiagnosticsEngine::Level level) {
  switch (level) {
    case clang::DiagnosticsEngine::Fatal:
      return diag::Severity::kFatal;
    case clang::DiagnosticsEngine::Error:
      return diag::Severity::kError;
    case clang::DiagnosticsEngine::Warning:
      return diag::Severity::kWarning;
    default:  // notes, and remarks, which kernelc never enables
      return diag::Severity::kNote;
  }
}

}  // namespace

// Clang's DiagnosticRenderer does what its text printer does before
// printing: it finds the file location of a diagnostic in a macro, maps its
// ranges there, and adds a note for each macro expansion. This subclass
// receives the pieces and builds kernelc diagnostics of them: each message
// starts one, and the code context that follows completes it.
class DiagnosticAdapter::Converter : public clang::DiagnosticRenderer {
 public:
  Converter(const clang::LangOptions& lang, clang::DiagnosticOptions* options,
            diag::DiagnosticEngine& diags)
      : DiagnosticRenderer(lang, options), diags_(diags) {}

  // Adds `info`, with `message` formatted, and its macro notes; `id`: the
  // catalogue entry `info` is, when kernelc reported it.
  void Add(const clang::Diagnostic& info, clang::DiagnosticsEngine::Level level,
           llvm::StringRef message, std::optional<diag::Id> id) {
    id_ = id;
    emitDiagnostic(
        clang::FullSourceLoc(info.getLocation(), info.getSourceManager()),
        level, message, info.getRanges(), info.getFixItHints(), &info);
    Flush();
  }

 protected:
  void emitDiagnosticMessage(clang::FullSourceLoc loc, clang::PresumedLoc p,
                             clang::DiagnosticsEngine::Level level,
                             llvm::StringRef message,
                             llvm::ArrayRef<clang::CharSourceRange>,
                             clang::DiagOrStoredDiag) override {
    Flush();
    diag::Diagnostic d;
    d.id = std::exchange(id_, std::nullopt);  // not the macro notes
    d.severity = SeverityOf(level);
    // Without colors, Clang's printer drops the marks that would highlight
    // template differences.
    for (char c : message)
      if (c != clang::ToggleHighlight) d.message += c;
    if (loc.isValid() && p.isValid()) {
      d.loc = PresumedSourceLoc(p);
      d.include_stack = IncludeStack(p, loc.getManager());
    }
    pending_ = std::move(d);
  }

  // `loc` is the file location of the diagnostic begun last; `ranges` are
  // mapped into its file.
  void emitCodeContext(clang::FullSourceLoc loc,
                       clang::DiagnosticsEngine::Level,
                       llvm::SmallVectorImpl<clang::CharSourceRange>& ranges,
                       llvm::ArrayRef<clang::FixItHint> hints) override {
    if (!pending_ || !pending_->loc.has_position()) return;
    diag::Diagnostic& d = *pending_;
    const clang::SourceManager& sm = loc.getManager();
    auto [fid, offset] = sm.getDecomposedLoc(loc);
    const unsigned caret = sm.getLineNumber(fid, offset);
    unsigned first = caret, last = caret;
    auto within = [&](unsigned line) {
      return line + kMaxExcerptLines > caret && line < caret + kMaxExcerptLines;
    };
    for (const clang::CharSourceRange& r : ranges) {
      if (r.isInvalid() || sm.getFileID(r.getBegin()) != fid ||
          sm.getFileID(r.getEnd()) != fid)
        continue;
      unsigned end_length = r.isTokenRange() ? clang::Lexer::MeasureTokenLength(
                                                   r.getEnd(), sm, LangOpts)
                                             : 0;
      diag::SourceLoc begin = ToSourceLoc(r.getBegin(), sm);
      diag::SourceLoc end = ToSourceLoc(r.getEnd(), sm).Shifted(end_length);
      d.ranges.push_back({begin, end});
      for (clang::SourceLocation at : {r.getBegin(), r.getEnd()}) {
        unsigned line = sm.getLineNumber(fid, sm.getFileOffset(at));
        if (!within(line)) continue;
        first = std::min(first, line);
        last = std::max(last, line);
      }
    }
    for (const clang::FixItHint& h : hints) {
      llvm::StringRef code = h.CodeToInsert;
      clang::SourceLocation at = sm.getExpansionLoc(h.RemoveRange.getBegin());
      if (code.empty() || code.find_first_of("\n\r") != llvm::StringRef::npos ||
          sm.getFileID(at) != fid)
        continue;
      d.fixits.push_back({ToSourceLoc(at, sm), code.str()});
    }
    d.excerpt = LinesOf(sm, fid, first, last,
                        d.loc.line - static_cast<int>(caret - first));
  }

  // The location itself, and the include stack, are taken with the message.
  void emitDiagnosticLoc(clang::FullSourceLoc, clang::PresumedLoc,
                         clang::DiagnosticsEngine::Level,
                         llvm::ArrayRef<clang::CharSourceRange>) override {}
  void emitIncludeLocation(clang::FullSourceLoc, clang::PresumedLoc) override {}
  void emitImportLocation(clang::FullSourceLoc, clang::PresumedLoc,
                          llvm::StringRef) override {}
  void emitBuildingModuleLocation(clang::FullSourceLoc, clang::PresumedLoc,
                                  llvm::StringRef) override {}

 private:
  void Flush() {
    if (pending_) diags_.Add(std::move(*pending_));
    pending_.reset();
  }

  diag::DiagnosticEngine& diags_;
  std::optional<diag::Id> id_;
  std::optional<diag::Diagnostic> pending_;
};

DiagnosticAdapter::DiagnosticAdapter(diag::DiagnosticEngine& diags)
    : diags_(diags), options_(new clang::DiagnosticOptions()) {
  // As clang reports them: at the lines and files that #line directives
  // state.
  options_->ShowPresumedLoc = true;
}

DiagnosticAdapter::~DiagnosticAdapter() = default;

void DiagnosticAdapter::BeginSourceFile(const clang::LangOptions& lang,
                                        const clang::Preprocessor*) {
  converter_ = std::make_unique<Converter>(lang, options_.get(), diags_);
  catalogue_ids_.clear();
}

void DiagnosticAdapter::Report(clang::DiagnosticsEngine& clang_diags,
                               clang::SourceLocation loc,
                               const diag::Diagnostic& d) {
  clang::DiagnosticsEngine::Level level = clang::DiagnosticsEngine::Error;
  if (d.severity == diag::Severity::kNote)
    level = clang::DiagnosticsEngine::Note;
  else if (d.severity == diag::Severity::kWarning)
    level = clang::DiagnosticsEngine::Warning;
  // One custom diagnostic per message, as clang-tidy registers its own: the
  // message is its format, with '%' (Clang's escape) doubled.
  std::string format;
  for (char c : d.message) format += c == '%' ? "%%" : std::string(1, c);
  unsigned clang_id = clang_diags.getDiagnosticIDs()->getCustomDiagID(
      static_cast<clang::DiagnosticIDs::Level>(level), format);
  if (d.id) catalogue_ids_[clang_id] = *d.id;
  clang_diags.Report(loc, clang_id);
}

void DiagnosticAdapter::EndSourceFile() { converter_.reset(); }

void DiagnosticAdapter::HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                                         const clang::Diagnostic& info) {
  DiagnosticConsumer::HandleDiagnostic(level, info);  // counts
  llvm::SmallString<256> message;
  info.FormatDiagnostic(message);
  std::optional<diag::Id> id;
  if (auto it = catalogue_ids_.find(info.getID()); it != catalogue_ids_.end())
    id = it->second;
  if (converter_ != nullptr && info.getLocation().isValid() &&
      info.hasSourceManager()) {
    converter_->Add(info, level, message, id);
  } else {
    // About the invocation, before or after a source: no location.
    diag::Diagnostic d;
    d.id = id;
    d.severity = SeverityOf(level);
    d.message = std::string(message);
    diags_.Add(std::move(d));
  }
  if (level >= clang::DiagnosticsEngine::Error && error_hook_ &&
      info.hasSourceManager())
    error_hook_(info.getSourceManager());
}

}  // namespace kernelc::frontend
