// Clang's source locations as kernelc names places: the presumed file,
// line and byte column (what #line directives state, as Clang reports
// them), the include stack above, and the source lines there as Clang read
// them, for diagnostics about sources that may be in-memory files.
#ifndef KERNELC_COMPILER_FRONTEND_LOCATIONS_H_
#define KERNELC_COMPILER_FRONTEND_LOCATIONS_H_

#include <clang/Basic/SourceLocation.h>
#include <clang/Basic/SourceManager.h>

#include <optional>
#include <vector>

#include "compiler/diag/diagnostic.h"

namespace kernelc::frontend {

// The in-memory directory that holds kernelc's own headers (kernelc.h, the
// stand-ins of CUDA's) while the frontend reads a source.
inline constexpr char kVirtualRoot[] = "/__kernelc__/";

// Whether `loc` (its file location) is in the user's code: neither in a
// system header (the CUDA toolkit's, the C++ library's) nor in kernelc's
// own headers. Diagnostics about the user's code are placed there.
bool InUserCode(clang::SourceLocation loc, const clang::SourceManager& sm);

// Where a presumed location is.
diag::SourceLoc PresumedSourceLoc(const clang::PresumedLoc& p);

// Where a Clang location is: the presumed place of its file location (where
// a macro was expanded); empty when it is invalid.
diag::SourceLoc ToSourceLoc(clang::SourceLocation loc,
                            const clang::SourceManager& sm);

// The #include directives above a presumed location, outermost first.
std::vector<diag::SourceLoc> IncludeStack(const clang::PresumedLoc& p,
                                          const clang::SourceManager& sm);

// Lines `first` to `last` of `fid`'s buffer (numbered as the buffer counts
// them), without their line breaks, numbered from `number` in the excerpt:
// a #line directive numbers lines otherwise than the buffer does. Stops at
// the end of the buffer; nullopt when the buffer cannot be read.
std::optional<diag::Excerpt> LinesOf(const clang::SourceManager& sm,
                                     clang::FileID fid, unsigned first,
                                     unsigned last, int number);

// Places `d` at Clang's location `loc`: its file location, the include
// stack above it, and the line there as Clang read it.
void Locate(diag::Diagnostic& d, clang::SourceLocation loc,
            const clang::SourceManager& sm);

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_LOCATIONS_H_
