// Writes through a kernel's inputs. A KC_IN tensor is a JAX array, which is
// immutable: the handler passes its buffer as it is, so a kernel that writes
// through it changes the caller's array. The finder looks for such a write
// in the kernel's body and, transitively, in the functions it calls.
//
// It follows every value derived from the input: pointers computed from it
// (`x + i`, `&x[i]`, casts, also through integers), local variables,
// references and structs that hold them, lambdas that capture them. A write
// is a store through such a value (an assignment, a compound assignment, an
// increment), a non-const member function called on what it points to, an
// atomic operation or inline assembly on it, or passing it to a function that
// may write through it: one whose body the frontend sees and that writes
// (found the same way), or one without a body (memcpy's destination,
// atomicAdd, a variadic function) whose parameter allows writing. When in
// doubt it is a write: a value stored where the finder cannot follow it (a
// global, another tensor) or calls nested deeper than it looks.
//
// C++'s const is trusted across calls: a pointer to const passed to a
// function cannot be written through there without a cast that breaks the
// function's own contract, so such calls are not followed. Within the kernel
// and the functions it is followed into, a cast that drops const is followed
// like any other.
#ifndef KERNELC_COMPILER_FRONTEND_INPUT_WRITES_H_
#define KERNELC_COMPILER_FRONTEND_INPUT_WRITES_H_

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/Basic/SourceLocation.h>

#include <optional>
#include <string>
#include <vector>

namespace kernelc::frontend {

// A call through which a value reaches a write.
struct CallStep {
  clang::SourceLocation call;  // the call expression
  std::string callee;          // the function called
};

struct InputWrite {
  clang::SourceLocation at;  // the write itself
  // The calls from the kernel's body to the function holding the write,
  // outermost first; empty when the write is in the kernel's body. The last
  // call's function has no body when `opaque`: then `at` is that call.
  std::vector<CallStep> calls;
  bool opaque = false;
  // The value is stored where the finder cannot follow it.
  bool escapes = false;
};

// Where a diagnostic about a write goes: into the user's code. `at` is the
// write when it is there; else the deepest call that is, and `callee` names
// the function it calls (a CUDA header's, kernelc's, or one without a
// body). `through` is the call in the kernel's body that leads to `at`,
// when `at` lies elsewhere; invalid otherwise.
struct WritePlace {
  clang::SourceLocation at;
  std::string callee;
  clang::SourceLocation through;
};

WritePlace PlaceOf(const InputWrite& w, const clang::SourceManager& sm);

// The first write (in source order) through `input`, a parameter of
// `kernel`, or through a value derived from it; nullopt when there is none.
std::optional<InputWrite> FindInputWrite(const clang::FunctionDecl* kernel,
                                         const clang::ParmVarDecl* input,
                                         clang::ASTContext& ctx);

}  // namespace kernelc::frontend

#endif  // KERNELC_COMPILER_FRONTEND_INPUT_WRITES_H_
