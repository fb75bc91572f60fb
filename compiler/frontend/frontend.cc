// The frontend's diagnostics, as rendered after "file:line:col: error: "
// (k: the kernel's name, p: the parameter's name, M: the annotation as the
// user writes it, KC_IN or __global__, T: a C++ type as written):
//
// Kernels
//   kernel 'k' cannot be a member function; define it at namespace scope
//   kernel 'k' cannot be a function template
//   kernel 'k' must be defined in the global namespace
//   kernel 'k' cannot be both __global__ and KC_KERNEL
//   kernel 'k' cannot be variadic
//   host kernel 'k' must return void, not 'T'
//   __global__ kernel 'k' must return void, not 'T'
//   __global__ kernel 'k' needs KC_GRID(...) to state its launch grid
//   M cannot be used on host kernel 'k': a KC_KERNEL function runs once per
//     call with whole tensors                           (M: KC_GRID, KC_BLOCK)
//   kernel 'k' has more than one M                      (M: KC_GRID, KC_BLOCK)
//   M applies to parameters, not to kernel 'k'
//   unknown kernelc annotation 'kc.x' on kernel 'k'
//   function 'f' has kernelc annotations but is not a kernel; mark it
//     KC_KERNEL, or __global__ with KC_GRID
//   duplicate kernel name 'k': kernel names must be unique across all sources
//   note: kernel 'k' is first defined here
// Grid and block
//   KC_GRID of kernel 'k' takes 1 to 3 strings (threads along x, y, z), not N
//   argument N of KC_GRID of kernel 'k' must be a string literal
//   argument N of KC_BLOCK of kernel 'k' must be an integer constant
//   KC_BLOCK of kernel 'k' has block size V along x; it must be at least 1
//   KC_BLOCK of kernel 'k' has N sizes but KC_GRID has M; give one block size
//     per grid dimension
//   KC_BLOCK of kernel 'k' asks for N threads per block; at most 1024 are
//     allowed
// Autodiff and sharding (what they name is checked by sema)
//   kernel 'k' has more than one M                      (M: KC_VJP, KC_JVP)
//   M of kernel 'k' takes one string: the backward kernel's name
//     (M: KC_VJP; KC_JVP: "the tangent kernel's name"; KC_PARALLEL: "one or
//     more strings: shape symbols")
//   argument N of M of kernel 'k' must be a string literal
//     (M: KC_VJP, KC_JVP, KC_PARALLEL)
// Parameters
//   parameter N of kernel 'k' has no name; kernel parameters must be named
//   parameter 'p' of kernel 'k' has more than one role annotation: M and M
//   parameter 'p' of kernel 'k' has more than one M     (M: KC_SHAPE, KC_INIT)
//   M cannot be used on parameter 'p' of kernel 'k'
//     (M: KC_GRID, KC_BLOCK, KC_KERNEL, KC_VJP, KC_JVP, KC_PARALLEL,
//     KC_ELEMENTWISE, __global__, __shared__)
//   unknown kernelc annotation 'kc.x' on parameter 'p' of kernel 'k'
//   M on parameter 'p' of kernel 'k' takes one string literal: the shape
//     (M: KC_IN, KC_INMUT, KC_OUT, KC_SHAPE; KC_DERIVED: "the expression")
//   pointer parameter 'p' of kernel 'k' needs a role: KC_IN, KC_INMUT or
//     KC_OUT
//   M parameter 'p' of kernel 'k' points to const data; drop the const, or
//     use KC_IN                                         (M: KC_OUT, KC_INMUT)
//   M cannot be used on view parameter 'p' of kernel 'k': its type gives the
//     role; state the shape with KC_SHAPE
//   KC_SHAPE applies only to kc::In, kc::InMut and kc::Out views, not to
//     parameter 'p' of kernel 'k'; a pointer takes its shape from KC_IN,
//     KC_INMUT or KC_OUT
//   output view 'p' of kernel 'k' needs KC_SHAPE("..."): output shapes must
//     be stated
//   view parameter 'p' of kernel 'k' has negative rank R
//   M on parameter 'p' of kernel 'k' needs a pointer type, not 'T'
//   KC_DERIVED parameter 'p' of kernel 'k' must have an integer type, not 'T'
//   parameter 'p' of kernel 'k': plain 'char' has implementation-defined
//     signedness; use int8_t or uint8_t
//   parameter 'p' of kernel 'k' has unsupported element type 'T'; supported:
//     bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
//     uint64_t, float, double, __half, __nv_bfloat16
//   scalar parameter 'p' of kernel 'k' has type 'T', but XLA FFI attributes
//     cannot carry 16-bit floats; use float
//   scalar parameter 'p' of kernel 'k' has unsupported type 'T'; supported:
//     bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
//     uint64_t, float, double
//   parameter 'p' of kernel 'k' has unsupported type 'T': tensors are
//     pointers with KC_IN, KC_INMUT or KC_OUT, or kc::In/InMut/Out views;
//     scalars are arithmetic types
//   KC_INIT applies only to outputs (KC_OUT pointers and kc::Out views), not
//     to parameter 'p' of kernel 'k'
//   KC_INIT on parameter 'p' of kernel 'k' takes one value
//   KC_INIT value of parameter 'p' of kernel 'k' must be an integer or
//     floating-point constant
//
// Sources
//   no such file or directory: 'path'                   (no location)
//   'H' is a header of the CUDA toolkit, likely the cause of these errors:
//     for the cpu target kernelc reads sources with its own
//     <cuda_runtime.h>, <cuda_fp16.h> and <cuda_bf16.h>, and other CUDA
//     headers may need a CUDA compiler; build with --target cuda alone to
//     read the source as CUDA device code
//     (at the #include, right after Clang's first error, when a source read
//     as the CPU sees it fails to parse after including a toolkit header)
//
// A KC_INIT, KC_GRID or KC_BLOCK argument that is not a constant expression
// is reported by Clang itself ("'annotate' attribute requires parameter N to
// be a constant expression"), which drops the annotation. kernelc then says
// nothing about that kernel, so as not to echo Clang's error ("needs a role",
// "needs KC_GRID"): see ClangErrorInSignature.
#include "compiler/frontend/frontend.h"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Basic/FileManager.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Basic/Version.h>
#include <clang/Driver/Driver.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Frontend/TextDiagnostic.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Frontend/Utils.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Tooling/Tooling.h>
#include <fmt/format.h>
#include <llvm/ADT/APFloat.h>
#include <llvm/ADT/APSInt.h>
#include <llvm/ADT/StringSwitch.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/diag/diagnostic.h"
#include "runtime/embedded_headers.h"

// The LLVM installation whose clang driver and resource directory
// (stddef.h, ...) the frontend parses with: the one it links against, which
// @llvm//:clang_tooling names.
#ifndef KERNELC_LLVM_PREFIX
#error "KERNELC_LLVM_PREFIX must name the LLVM installation"
#endif

namespace kernelc::frontend {
namespace {

using model::DType;
using model::Role;

constexpr char kVirtualRoot[] = "/__kernelc__/";

constexpr char kElementTypes[] =
    "bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, "
    "uint64_t, float, double, __half, __nv_bfloat16";
constexpr char kScalarTypes[] =
    "bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, "
    "uint64_t, float, double";

// Annotation names, as kernelc.h and kernelc/host.h spell them.
constexpr llvm::StringLiteral kIn = "kc.in";
constexpr llvm::StringLiteral kInMut = "kc.inmut";
constexpr llvm::StringLiteral kOut = "kc.out";
constexpr llvm::StringLiteral kShape = "kc.shape";
constexpr llvm::StringLiteral kInit = "kc.init";
constexpr llvm::StringLiteral kDerived = "kc.derived";
constexpr llvm::StringLiteral kGrid = "kc.grid";
constexpr llvm::StringLiteral kBlock = "kc.block";
constexpr llvm::StringLiteral kSharedBytes = "kc.shared_bytes";
constexpr llvm::StringLiteral kKernel = "kc.kernel";
constexpr llvm::StringLiteral kGlobal = "kc.global";
constexpr llvm::StringLiteral kBlockFeature = "kc.block_feature";
constexpr llvm::StringLiteral kVjp = "kc.vjp";
constexpr llvm::StringLiteral kJvp = "kc.jvp";
constexpr llvm::StringLiteral kElementwise = "kc.elementwise";
constexpr llvm::StringLiteral kParallel = "kc.parallel";

// What the user wrote to get an annotation; empty for unknown ones.
llvm::StringRef SpelledName(llvm::StringRef annotation) {
  return llvm::StringSwitch<llvm::StringRef>(annotation)
      .Case(kIn, "KC_IN")
      .Case(kInMut, "KC_INMUT")
      .Case(kOut, "KC_OUT")
      .Case(kShape, "KC_SHAPE")
      .Case(kInit, "KC_INIT")
      .Case(kDerived, "KC_DERIVED")
      .Case(kGrid, "KC_GRID")
      .Case(kBlock, "KC_BLOCK")
      .Case(kSharedBytes, "KC_SHARED_BYTES")
      .Case(kKernel, "KC_KERNEL")
      .Case(kGlobal, "__global__")
      .Case(kBlockFeature, "__shared__")
      .Case(kVjp, "KC_VJP")
      .Case(kJvp, "KC_JVP")
      .Case(kElementwise, "KC_ELEMENTWISE")
      .Case(kParallel, "KC_PARALLEL")
      .Default("");
}

bool IsRoleAnnotation(llvm::StringRef a) {
  return a == kIn || a == kInMut || a == kOut || a == kDerived;
}
bool IsParamAnnotation(llvm::StringRef a) {
  return IsRoleAnnotation(a) || a == kShape || a == kInit;
}
bool IsFunctionAnnotation(llvm::StringRef a) {
  return a == kGrid || a == kBlock || a == kSharedBytes || a == kKernel ||
         a == kGlobal || a == kVjp || a == kJvp || a == kParallel ||
         a == kElementwise;
}

// The kernelc annotations of a declaration (those named "kc.*"), in source
// order.
std::vector<const clang::AnnotateAttr*> KcAnnotations(
    const clang::Decl* d, const clang::SourceManager& sm) {
  std::vector<const clang::AnnotateAttr*> out;
  for (const auto* a : d->specific_attrs<clang::AnnotateAttr>())
    if (a->getAnnotation().starts_with("kc.")) out.push_back(a);
  std::stable_sort(
      out.begin(), out.end(),
      [&sm](const clang::AnnotateAttr* a, const clang::AnnotateAttr* b) {
        return sm.isBeforeInTranslationUnit(sm.getFileLoc(a->getLocation()),
                                            sm.getFileLoc(b->getLocation()));
      });
  return out;
}

// The string literal an annotation argument is, through the implicit
// conversions and the ConstantExpr that Sema wraps it in; null when it is not
// an ordinary string literal.
const clang::StringLiteral* AsStringLiteral(const clang::Expr* e) {
  if (e == nullptr) return nullptr;
  e = e->IgnoreParenImpCasts();
  while (const auto* c = llvm::dyn_cast<clang::ConstantExpr>(e))
    e = c->getSubExpr()->IgnoreParenImpCasts();
  const auto* lit = llvm::dyn_cast<clang::StringLiteral>(e);
  if (lit == nullptr || lit->getCharByteWidth() != 1) return nullptr;
  return lit;
}

// CUDA's block-level functions as Clang's CUDA mode declares them (builtins,
// or functions of its wrapper headers): the ones kernelc/host.h marks, and
// the barrier cooperative groups synchronize with.
bool IsCudaBlockFunction(llvm::StringRef name) {
  return llvm::StringSwitch<bool>(name)
      .Cases("__syncthreads", "__syncthreads_count", "__syncthreads_and",
             "__syncthreads_or", "__syncwarp", true)
      .Cases("__activemask", "__ballot_sync", "__any_sync", "__all_sync", true)
      .Cases("__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
             "__shfl_xor_sync", "__barrier_sync", true)
      .Default(false);
}

// The block-level feature a declaration is ("__syncthreads", "__shared__",
// ...): read from the "kc.block_feature" mark of kernelc/host.h, looking
// through template specializations to the pattern that carries the mark, or
// in CUDA mode from the declaration itself.
std::optional<std::string> BlockFeatureOf(const clang::Decl* d) {
  for (const auto* a : d->specific_attrs<clang::AnnotateAttr>()) {
    if (a->getAnnotation() != kBlockFeature || a->args_size() < 1) continue;
    if (const clang::StringLiteral* lit = AsStringLiteral(*a->args_begin()))
      return lit->getString().str();
  }
  if (d->hasAttr<clang::CUDASharedAttr>()) return std::string("__shared__");
  if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d);
      fd != nullptr && fd->getIdentifier() != nullptr &&
      d->getASTContext().getLangOpts().CUDA &&
      IsCudaBlockFunction(fd->getName()))
    return fd->getName().str();
  if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d)) {
    if (const clang::FunctionTemplateDecl* t = fd->getPrimaryTemplate())
      return BlockFeatureOf(t->getTemplatedDecl());
    if (const clang::FunctionDecl* p = fd->getTemplateInstantiationPattern();
        p != nullptr && p != fd)
      return BlockFeatureOf(p);
  }
  return std::nullopt;
}

bool InNamespaceKc(const clang::Decl* d) {
  const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(d->getDeclContext());
  return ns != nullptr && ns->getName() == "kc" &&
         ns->getParent()->getRedeclContext()->isTranslationUnit();
}

// A kc::In / kc::InMut / kc::Out specialization.
struct ViewType {
  Role role = Role::kIn;
  clang::QualType element;  // T, as written in the template argument
  int64_t rank = 0;
};

std::optional<ViewType> AsView(clang::QualType t) {
  const auto* spec =
      llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(
          t->getAsCXXRecordDecl());
  if (spec == nullptr) return std::nullopt;
  const clang::ClassTemplateDecl* tmpl = spec->getSpecializedTemplate();
  if (!InNamespaceKc(tmpl)) return std::nullopt;
  ViewType v;
  llvm::StringRef name = tmpl->getName();
  if (name == "In") {
    v.role = Role::kIn;
  } else if (name == "InMut") {
    v.role = Role::kInMut;
  } else if (name == "Out") {
    v.role = Role::kOut;
  } else {
    return std::nullopt;
  }
  const clang::TemplateArgumentList& args = spec->getTemplateArgs();
  if (args.size() != 2 || args[0].getKind() != clang::TemplateArgument::Type ||
      args[1].getKind() != clang::TemplateArgument::Integral)
    return std::nullopt;
  v.element = args[0].getAsType();
  v.rank = args[1].getAsIntegral().getExtValue();
  return v;
}

// kc::half or kc::bfloat16 (which __half and __nv_bfloat16 name when a
// source is read as the CPU sees it), or CUDA's own __half and
// __nv_bfloat16 (read in CUDA mode).
std::optional<DType> AsHalfType(clang::QualType t) {
  const clang::CXXRecordDecl* rd = t->getAsCXXRecordDecl();
  if (rd == nullptr || rd->getIdentifier() == nullptr) return std::nullopt;
  llvm::StringRef name = rd->getName();
  if (InNamespaceKc(rd)) {
    if (name == "half") return DType::kF16;
    if (name == "bfloat16") return DType::kBF16;
  } else if (rd->getDeclContext()->getRedeclContext()->isTranslationUnit()) {
    if (name == "__half") return DType::kF16;
    if (name == "__nv_bfloat16") return DType::kBF16;
  }
  return std::nullopt;
}

// The model type of an element or scalar C++ type.
struct TypeClass {
  std::optional<DType> dtype;
  bool plain_char = false;
};

TypeClass ClassifyType(clang::QualType t, const clang::ASTContext& ctx) {
  TypeClass c;
  t = ctx.getCanonicalType(t).getUnqualifiedType();
  if (std::optional<DType> h = AsHalfType(t)) {
    c.dtype = h;
    return c;
  }
  const auto* bt = t->getAs<clang::BuiltinType>();
  if (bt == nullptr) return c;
  uint64_t bits = ctx.getTypeSize(t);
  auto sized = [&](bool is_signed) -> std::optional<DType> {
    switch (bits) {
      case 8:
        return is_signed ? DType::kI8 : DType::kU8;
      case 16:
        return is_signed ? DType::kI16 : DType::kU16;
      case 32:
        return is_signed ? DType::kI32 : DType::kU32;
      case 64:
        return is_signed ? DType::kI64 : DType::kU64;
      default:
        return std::nullopt;
    }
  };
  switch (bt->getKind()) {
    case clang::BuiltinType::Bool:
      c.dtype = DType::kBool;
      break;
    case clang::BuiltinType::Char_S:
    case clang::BuiltinType::Char_U:
      c.plain_char = true;
      break;
    case clang::BuiltinType::SChar:
    case clang::BuiltinType::Short:
    case clang::BuiltinType::Int:
    case clang::BuiltinType::Long:
    case clang::BuiltinType::LongLong:
      c.dtype = sized(true);
      break;
    case clang::BuiltinType::UChar:
    case clang::BuiltinType::UShort:
    case clang::BuiltinType::UInt:
    case clang::BuiltinType::ULong:
    case clang::BuiltinType::ULongLong:
      c.dtype = sized(false);
      break;
    case clang::BuiltinType::Float:
      c.dtype = DType::kF32;
      break;
    case clang::BuiltinType::Double:
      c.dtype = DType::kF64;
      break;
    default:
      break;
  }
  return c;
}

// A constant in the canonical text form later stages parse: integers in
// decimal, floating-point values with 17 significant digits (exact for
// doubles), "inf", "-inf" and "nan".
std::optional<std::string> ConstantText(const clang::APValue& v) {
  if (v.isInt()) return llvm::toString(v.getInt(), 10);
  if (!v.isFloat()) return std::nullopt;
  llvm::APFloat f = v.getFloat();
  bool lost = false;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  double d = f.convertToDouble();
  if (std::isnan(d)) return std::string("nan");
  if (std::isinf(d)) return std::string(d < 0 ? "-inf" : "inf");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return std::string(buf);
}

// Prints diagnostics clang-style and remembers where the current source's
// errors are, so that kernelc does not pile its own errors onto a
// declaration Clang already rejected in part (a dropped annotation reads as
// a missing one).
class Consumer : public clang::DiagnosticConsumer {
 public:
  Consumer(llvm::raw_ostream& os, clang::DiagnosticOptions* options)
      : printer_(os, options), os_(os), options_(options) {}

  void BeginSourceFile(const clang::LangOptions& lang,
                       const clang::Preprocessor* pp) override {
    lang_ = &lang;
    printer_.BeginSourceFile(lang, pp);
  }
  void EndSourceFile() override { printer_.EndSourceFile(); }
  void finish() override { printer_.finish(); }
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);  // counts
    if (level >= clang::DiagnosticsEngine::Error &&
        info.getLocation().isValid() && info.hasSourceManager())
      error_locs_.push_back(
          info.getSourceManager().getFileLoc(info.getLocation()));
    printer_.HandleDiagnostic(level, info);
    if (level >= clang::DiagnosticsEngine::Error &&
        toolkit_include_.isValid() && info.hasSourceManager())
      ReportToolkitInclude(info.getSourceManager());
  }

  // The file locations of the errors reported since the last reset; they
  // belong to the source being parsed.
  const std::vector<clang::SourceLocation>& error_locs() const {
    return error_locs_;
  }
  // Forgets the errors and the toolkit header of the last source.
  void Reset() {
    error_locs_.clear();
    toolkit_include_ = clang::SourceLocation();
    toolkit_reported_ = false;
  }

  // Read as the CPU sees it, the source being parsed included `header` of
  // the CUDA toolkit at `loc` (a file location): its first error is then
  // followed by one naming the header, the likely cause. Reported here,
  // right after that error, because nothing is reported after a fatal error
  // ("file not found") and Clang drops notes that follow a warning that -w
  // ignores.
  bool HasToolkitInclude() const {
    return toolkit_include_.isValid() || toolkit_reported_;
  }
  void SetToolkitInclude(clang::SourceLocation loc, std::string header) {
    if (HasToolkitInclude()) return;
    toolkit_include_ = loc;
    toolkit_header_ = std::move(header);
  }

 private:
  void ReportToolkitInclude(const clang::SourceManager& sm) {
    const clang::SourceLocation loc = toolkit_include_;
    toolkit_include_ = clang::SourceLocation();
    toolkit_reported_ = true;
    if (lang_ == nullptr) return;
    clang::TextDiagnostic text(os_, *lang_, options_);
    text.emitDiagnostic(
        clang::FullSourceLoc(loc, sm), clang::DiagnosticsEngine::Error,
        fmt::format("'{}' is a header of the CUDA toolkit, likely the cause "
                    "of these errors: for the cpu target kernelc reads "
                    "sources with its own <cuda_runtime.h>, <cuda_fp16.h> and "
                    "<cuda_bf16.h>, and other CUDA headers may need a CUDA "
                    "compiler; build with --target cuda alone to read the "
                    "source as CUDA device code",
                    toolkit_header_),
        {}, {});
    ++NumErrors;
    error_locs_.push_back(loc);
  }

  clang::TextDiagnosticPrinter printer_;
  llvm::raw_ostream& os_;
  clang::DiagnosticOptions* options_;
  const clang::LangOptions* lang_ = nullptr;
  std::vector<clang::SourceLocation> error_locs_;
  clang::SourceLocation toolkit_include_;
  bool toolkit_reported_ = false;
  std::string toolkit_header_;
};

// State shared by the sources of one ParseSources call.
struct Session {
  model::Module module;
  Consumer* consumer = nullptr;
  std::set<std::string> dependencies;  // non-system files read, as named
  // Read as the CPU sees a source: the CUDA toolkit's include directories
  // (real paths), whose headers other than kernelc's stand-ins need a CUDA
  // compiler.
  std::vector<std::string> toolkit_dirs;
};

// Records the first #include that resolves into the CUDA toolkit's
// directories, or that names a file found only there. Only kernelc's
// stand-ins of <cuda_runtime.h>, <cuda_fp16.h> and <cuda_bf16.h> (and of the
// headers they include) are read as the CPU sees a source; a toolkit header
// found on the path instead (through -I, or /usr/local/include) needs a CUDA
// compiler, which the error about it says when the parse fails.
class ToolkitIncludeRecorder : public clang::PPCallbacks {
 public:
  ToolkitIncludeRecorder(const clang::SourceManager& sm, Session& session)
      : sm_(sm), session_(session) {}

  void InclusionDirective(clang::SourceLocation, const clang::Token&,
                          llvm::StringRef name, bool,
                          clang::CharSourceRange range,
                          clang::OptionalFileEntryRef file, llvm::StringRef,
                          llvm::StringRef, const clang::Module*, bool,
                          clang::SrcMgr::CharacteristicKind) override {
    // Only the first one counts.
    if (session_.consumer->HasToolkitInclude()) return;
    llvm::SmallString<256> real;
    bool in_toolkit = false;
    if (file) {
      in_toolkit =
          !llvm::sys::fs::real_path(file->getName(), real) && InToolkit(real);
    } else {
      for (const std::string& dir : session_.toolkit_dirs)
        in_toolkit = in_toolkit || llvm::sys::fs::exists(dir + "/" + name);
    }
    if (in_toolkit)
      session_.consumer->SetToolkitInclude(sm_.getFileLoc(range.getBegin()),
                                           name.str());
  }

 private:
  bool InToolkit(llvm::StringRef path) const {
    for (const std::string& dir : session_.toolkit_dirs)
      if (path.starts_with(dir + "/")) return true;
    return false;
  }

  const clang::SourceManager& sm_;
  Session& session_;
};

// Records the block-level features a kernel uses, in its body and,
// transitively, in the bodies of the functions it calls. A use inside a
// system header (CUDA's, read in CUDA mode) is reported where the user's
// code calls into that header: a location of the user's, and never a path
// of the machine's.
class FeatureFinder : public clang::RecursiveASTVisitor<FeatureFinder> {
 public:
  struct Use {
    std::string what;
    clang::SourceLocation loc;
  };

  explicit FeatureFinder(const clang::SourceManager& sm) : sm_(sm) {}

  std::vector<Use> Find(const clang::FunctionDecl* kernel) {
    Enqueue(kernel, clang::SourceLocation());
    while (!queue_.empty()) {
      auto [fd, origin] = queue_.back();
      queue_.pop_back();
      origin_ = origin;
      TraverseDecl(const_cast<clang::FunctionDecl*>(fd));
    }
    return std::move(uses_);
  }

  bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
    const clang::ValueDecl* d = e->getDecl();
    if (std::optional<std::string> what = BlockFeatureOf(d))
      Record(std::move(*what), e->getLocation());
    if (const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d))
      Enqueue(fd, e->getLocation());
    return true;
  }
  bool VisitVarDecl(clang::VarDecl* v) {
    if (std::optional<std::string> what = BlockFeatureOf(v))
      Record(std::move(*what), v->getLocation());
    return true;
  }
  bool VisitCallExpr(clang::CallExpr* c) {
    if (const clang::FunctionDecl* fd = c->getDirectCallee())
      Enqueue(fd, c->getBeginLoc());
    return true;
  }
  bool VisitCXXConstructExpr(clang::CXXConstructExpr* c) {
    Enqueue(c->getConstructor(), c->getBeginLoc());
    return true;
  }

 private:
  void Record(std::string what, clang::SourceLocation loc) {
    uses_.push_back({std::move(what), origin_.isValid() ? origin_ : loc});
  }

  // `at`: where the function being traversed refers to `fd`; it becomes the
  // origin of the uses in `fd` when `fd` lies in a system header.
  void Enqueue(const clang::FunctionDecl* fd, clang::SourceLocation at) {
    if (fd == nullptr) return;
    const clang::FunctionDecl* def = fd->getDefinition();
    if (def == nullptr || !def->hasBody()) return;
    if (!visited_.insert(def).second) return;
    clang::SourceLocation origin = origin_;
    if (origin.isInvalid() && at.isValid() &&
        sm_.isInSystemHeader(sm_.getFileLoc(def->getLocation())))
      origin = at;
    queue_.push_back({def, origin});
  }

  const clang::SourceManager& sm_;
  clang::SourceLocation origin_;  // of the function being traversed
  std::set<const clang::FunctionDecl*> visited_;
  std::vector<std::pair<const clang::FunctionDecl*, clang::SourceLocation>>
      queue_;
  std::vector<Use> uses_;
};

// Collects the function definitions of the main file in source order.
class FunctionCollector : public clang::RecursiveASTVisitor<FunctionCollector> {
  using Base = clang::RecursiveASTVisitor<FunctionCollector>;

 public:
  explicit FunctionCollector(const clang::SourceManager& sm) : sm_(sm) {}

  bool TraverseDecl(clang::Decl* d) {
    // Whole headers are skipped: kernels are what a source itself defines.
    if (d != nullptr && !llvm::isa<clang::TranslationUnitDecl>(d) &&
        !InMainFile(d->getLocation()))
      return true;
    return Base::TraverseDecl(d);
  }
  bool VisitFunctionDecl(clang::FunctionDecl* fd) {
    if (fd->doesThisDeclarationHaveABody() && InMainFile(fd->getLocation()))
      functions.push_back(fd);
    return true;
  }

  std::vector<const clang::FunctionDecl*> functions;

 private:
  bool InMainFile(clang::SourceLocation loc) const {
    if (loc.isInvalid()) return false;
    return sm_.getFileID(sm_.getExpansionLoc(loc)) == sm_.getMainFileID();
  }

  const clang::SourceManager& sm_;
};

// Reads the kernels of one translation unit into the session's module and
// reports what is wrong with them through the TU's DiagnosticsEngine.
class SourceAnalyzer {
 public:
  SourceAnalyzer(clang::ASTContext& ctx, Session& session,
                 const std::string& source)
      : ctx_(ctx),
        sm_(ctx.getSourceManager()),
        diags_(ctx.getDiagnostics()),
        session_(session),
        source_(source) {
    error_id_ = diags_.getCustomDiagID(clang::DiagnosticsEngine::Error, "%0");
    note_id_ = diags_.getCustomDiagID(clang::DiagnosticsEngine::Note, "%0");
  }

  void Run() {
    clang_errors_ = session_.consumer->error_locs();
    FunctionCollector collector(sm_);
    collector.TraverseDecl(ctx_.getTranslationUnitDecl());
    for (const clang::FunctionDecl* fd : collector.functions) Function(fd);
  }

 private:
  // -- Reporting ------------------------------------------------------------

  void Error(clang::SourceLocation loc, const std::string& message) {
    diags_.Report(sm_.getFileLoc(loc), error_id_) << message;
  }
  void Note(clang::SourceLocation loc, const std::string& message) {
    diags_.Report(sm_.getFileLoc(loc), note_id_) << message;
  }

  diag::SourceLoc ToSourceLoc(clang::SourceLocation loc) const {
    diag::SourceLoc out;
    if (loc.isInvalid()) return out;
    clang::PresumedLoc p = sm_.getPresumedLoc(sm_.getFileLoc(loc));
    if (p.isInvalid()) return out;
    out.file = p.getFilename();
    out.line = static_cast<int>(p.getLine());
    out.col = static_cast<int>(p.getColumn());
    return out;
  }

  // Where a model location is in this TU, for a note about a kernel of an
  // earlier source; invalid when that file cannot be loaded.
  clang::SourceLocation FromSourceLoc(const diag::SourceLoc& loc) {
    if (!loc.has_position()) return {};
    llvm::Expected<clang::FileEntryRef> file =
        sm_.getFileManager().getFileRef(loc.file);
    if (!file) {
      llvm::consumeError(file.takeError());
      return {};
    }
    clang::FileID fid = sm_.getOrCreateFileID(*file, clang::SrcMgr::C_User);
    return sm_.translateLineCol(fid, static_cast<unsigned>(loc.line),
                                static_cast<unsigned>(loc.col));
  }

  // Whether Clang reported an error in a kernel's signature: from the end of
  // the declaration before it (which takes in its leading annotations) to
  // the start of its body.
  bool ClangErrorInSignature(const clang::FunctionDecl* fd) const {
    if (clang_errors_.empty()) return false;
    const clang::Decl* self = fd;
    if (const clang::FunctionTemplateDecl* t =
            fd->getDescribedFunctionTemplate())
      self = t;
    const clang::DeclContext* dc = self->getLexicalDeclContext();
    clang::SourceLocation begin;  // exclusive; invalid: the start of the TU
    if (const auto* d = llvm::dyn_cast<clang::Decl>(dc);
        d != nullptr && !llvm::isa<clang::TranslationUnitDecl>(d))
      begin = sm_.getFileLoc(d->getBeginLoc());
    for (const clang::Decl* d : dc->decls()) {
      if (d == self) break;
      if (d->isImplicit()) continue;
      clang::SourceLocation e = sm_.getFileLoc(d->getEndLoc());
      if (e.isValid()) begin = e;
    }
    clang::SourceLocation end =
        sm_.getFileLoc(fd->getBody() != nullptr ? fd->getBody()->getBeginLoc()
                                                : fd->getEndLoc());
    for (clang::SourceLocation loc : clang_errors_) {
      if (begin.isValid() && !sm_.isBeforeInTranslationUnit(begin, loc))
        continue;
      if (end.isValid() && sm_.isBeforeInTranslationUnit(end, loc)) continue;
      return true;
    }
    return false;
  }

  std::string TypeName(clang::QualType t) const {
    return t.getAsString(ctx_.getPrintingPolicy());
  }

  // -- Functions ------------------------------------------------------------

  void Function(const clang::FunctionDecl* fd) {
    std::vector<const clang::AnnotateAttr*> own = KcAnnotations(fd, sm_);
    const clang::AnnotateAttr* global_mark = nullptr;
    const clang::AnnotateAttr* host = nullptr;
    bool annotated = false;  // carries kernelc annotations beyond __global__
    for (const clang::AnnotateAttr* a : own) {
      llvm::StringRef name = a->getAnnotation();
      if (name == kGlobal) {
        global_mark = a;
      } else if (name != kBlockFeature) {
        annotated = true;
        if (name == kKernel) host = a;
      }
    }
    for (const clang::ParmVarDecl* p : fd->parameters())
      if (!KcAnnotations(p, sm_).empty()) annotated = true;
    // Read as the CPU sees it, __global__ is kernelc/host.h's mark; in CUDA
    // mode, Clang's own attribute.
    const clang::Attr* global = global_mark;
    if (global == nullptr) global = fd->getAttr<clang::CUDAGlobalAttr>();

    if (global == nullptr && host == nullptr && !annotated) return;
    // Clang's error comes first; what kernelc would add is likely its echo.
    if (ClangErrorInSignature(fd)) return;
    std::string name = fd->getNameAsString();
    if (global == nullptr && host == nullptr) {
      Error(fd->getLocation(),
            fmt::format("function '{}' has kernelc annotations but is not a "
                        "kernel; mark it KC_KERNEL, or __global__ with "
                        "KC_GRID",
                        name));
      return;
    }
    // A __global__ function without annotations is a helper kernel that
    // other kernels launch (or nobody does): not exported.
    if (host == nullptr && !annotated) return;
    if (fd->isInvalidDecl()) return;

    if (llvm::isa<clang::CXXMethodDecl>(fd)) {
      Error(fd->getLocation(),
            fmt::format("kernel '{}' cannot be a member function; define it "
                        "at namespace scope",
                        name));
      return;
    }
    if (fd->getDescribedFunctionTemplate() != nullptr || fd->isTemplated() ||
        fd->isFunctionTemplateSpecialization()) {
      Error(fd->getLocation(),
            fmt::format("kernel '{}' cannot be a function template", name));
      return;
    }
    if (global != nullptr && host != nullptr) {
      Error(host->getLocation(),
            fmt::format("kernel '{}' cannot be both __global__ and KC_KERNEL",
                        name));
      return;
    }

    model::Kernel k;
    k.name = name;
    k.kind =
        host != nullptr ? model::KernelKind::kHost : model::KernelKind::kGlobal;
    k.source = source_;
    k.loc = ToSourceLoc(fd->getLocation());

    CheckUnique(fd, k);
    if (!fd->getDeclContext()->getRedeclContext()->isTranslationUnit())
      Error(fd->getLocation(),
            fmt::format("kernel '{}' must be defined in the global namespace",
                        name));
    if (fd->isVariadic())
      Error(fd->getLocation(),
            fmt::format("kernel '{}' cannot be variadic", name));
    if (!fd->getReturnType()->isVoidType()) {
      clang::SourceLocation at = fd->getReturnTypeSourceRange().getBegin();
      Error(at.isValid() ? at : fd->getLocation(),
            fmt::format("{} kernel '{}' must return void, not '{}'",
                        host != nullptr ? "host" : "__global__", name,
                        TypeName(fd->getReturnType())));
    }

    LaunchConfig(fd, own, k);
    for (unsigned i = 0; i < fd->getNumParams(); ++i) {
      std::optional<model::Param> p = Param(k, i, fd->getParamDecl(i));
      if (p) k.params.push_back(std::move(*p));
    }
    BlockFeatures(fd, k);
    session_.module.kernels.push_back(std::move(k));
  }

  void CheckUnique(const clang::FunctionDecl* fd, const model::Kernel& k) {
    if (const model::Kernel* first = session_.module.FindKernel(k.name)) {
      Error(fd->getLocation(),
            fmt::format("duplicate kernel name '{}': kernel names must be "
                        "unique across all sources",
                        k.name));
      clang::SourceLocation at = FromSourceLoc(first->loc);
      if (at.isValid())
        Note(at, fmt::format("kernel '{}' is first defined here", k.name));
    }
  }

  // KC_GRID and KC_BLOCK.
  void LaunchConfig(const clang::FunctionDecl* fd,
                    const std::vector<const clang::AnnotateAttr*>& own,
                    model::Kernel& k) {
    const clang::AnnotateAttr* grid = nullptr;
    const clang::AnnotateAttr* block = nullptr;
    const clang::AnnotateAttr* shared = nullptr;
    for (const clang::AnnotateAttr* a : own) {
      llvm::StringRef name = a->getAnnotation();
      if (name == kGlobal || name == kKernel || name == kBlockFeature) continue;
      if (name == kElementwise) {
        k.elementwise = true;
        continue;
      }
      if (name == kVjp || name == kJvp || name == kParallel) {
        Autodiff(a, k);
        continue;
      }
      if (name == kGrid || name == kBlock || name == kSharedBytes) {
        if (k.kind == model::KernelKind::kHost) {
          Error(a->getLocation(),
                fmt::format("{} cannot be used on host kernel '{}': a "
                            "KC_KERNEL function runs once per call with "
                            "whole tensors",
                            SpelledName(name), k.name));
          continue;
        }
        const clang::AnnotateAttr*& slot =
            name == kGrid ? grid : (name == kBlock ? block : shared);
        if (slot != nullptr) {
          Error(a->getLocation(),
                fmt::format("kernel '{}' has more than one {}", k.name,
                            SpelledName(name)));
          continue;
        }
        slot = a;
      } else if (IsParamAnnotation(name)) {
        Error(a->getLocation(),
              fmt::format("{} applies to parameters, not to kernel '{}'",
                          SpelledName(name), k.name));
      } else {
        Error(a->getLocation(),
              fmt::format("unknown kernelc annotation '{}' on kernel '{}'",
                          name.str(), k.name));
      }
    }
    if (k.kind == model::KernelKind::kHost) return;

    if (shared != nullptr) {
      std::optional<model::Text> t;
      if (shared->args_size() == 1) t = TextOf(*shared->args_begin());
      if (t)
        k.shared_bytes = std::move(*t);
      else
        Error(shared->getLocation(),
              fmt::format("KC_SHARED_BYTES of kernel '{}' takes one string: "
                          "the bytes of dynamic shared memory per block",
                          k.name));
    }

    bool grid_ok = false;
    if (grid == nullptr) {
      Error(fd->getLocation(),
            fmt::format("__global__ kernel '{}' needs KC_GRID(...) to state "
                        "its launch grid",
                        k.name));
    } else if (grid->args_size() < 1 || grid->args_size() > 3) {
      Error(grid->getLocation(),
            fmt::format("KC_GRID of kernel '{}' takes 1 to 3 strings (threads "
                        "along x, y, z), not {}",
                        k.name, grid->args_size()));
    } else {
      grid_ok = true;
      unsigned i = 0;
      for (const clang::Expr* e : grid->args()) {
        ++i;
        std::optional<model::Text> t = TextOf(e);
        if (!t) {
          Error(e->getBeginLoc(),
                fmt::format("argument {} of KC_GRID of kernel '{}' must be a "
                            "string literal",
                            i, k.name));
          grid_ok = false;
          continue;
        }
        k.grid.push_back(std::move(*t));
      }
    }

    if (block == nullptr) return;
    static constexpr const char* kAxes[] = {"x", "y", "z"};
    std::vector<int64_t> sizes;
    bool sizes_ok = true;
    unsigned i = 0;
    for (const clang::Expr* e : block->args()) {
      ++i;
      clang::Expr::EvalResult r;
      if (e->isValueDependent() || !e->EvaluateAsInt(r, ctx_)) {
        Error(e->getBeginLoc(),
              fmt::format("argument {} of KC_BLOCK of kernel '{}' must be an "
                          "integer constant",
                          i, k.name));
        sizes_ok = false;
        continue;
      }
      const llvm::APSInt& v = r.Val.getInt();
      if ((v.isSigned() && v.isNegative()) || v == 0) {
        Error(e->getBeginLoc(),
              fmt::format("KC_BLOCK of kernel '{}' has block size {} along "
                          "{}; it must be at least 1",
                          k.name, llvm::toString(v, 10),
                          i <= 3 ? kAxes[i - 1] : "?"));
        sizes_ok = false;
        continue;
      }
      // Anything wider than 32 bits is over the limit below anyway.
      sizes.push_back(v.getActiveBits() > 32
                          ? int64_t{1} << 32
                          : static_cast<int64_t>(v.getZExtValue()));
    }
    if (grid_ok && block->args_size() != grid->args_size()) {
      Error(block->getLocation(),
            fmt::format("KC_BLOCK of kernel '{}' has {} size{} but KC_GRID "
                        "has {}; give one block size per grid dimension",
                        k.name, block->args_size(),
                        block->args_size() == 1 ? "" : "s", grid->args_size()));
      return;
    }
    if (!sizes_ok || !grid_ok) return;
    int64_t threads = 1;
    for (int64_t s : sizes) threads = std::min<int64_t>(threads * s, 1 << 30);
    if (threads > 1024) {
      Error(block->getLocation(),
            fmt::format("KC_BLOCK of kernel '{}' asks for {} threads per "
                        "block; at most 1024 are allowed",
                        k.name, threads));
      return;
    }
    k.block = std::move(sizes);
  }

  // KC_VJP("bwd") and KC_PARALLEL("m", ...): string literals, read as
  // written; sema checks what they name.
  void Autodiff(const clang::AnnotateAttr* a, model::Kernel& k) {
    const bool jvp = a->getAnnotation() == kJvp;
    const bool vjp = a->getAnnotation() == kVjp || jvp;
    const llvm::StringRef spelled = SpelledName(a->getAnnotation());
    if (vjp && (jvp ? k.jvp : k.vjp)) {
      Error(a->getLocation(), fmt::format("kernel '{}' has more than one {}",
                                          k.name, spelled.str()));
      return;
    }
    if (a->args_size() < 1 || (vjp && a->args_size() != 1)) {
      Error(a->getLocation(),
            fmt::format("{} of kernel '{}' takes {}", spelled.str(), k.name,
                        jvp   ? "one string: the tangent kernel's name"
                        : vjp ? "one string: the backward kernel's name"
                              : "one or more strings: shape symbols"));
      return;
    }
    unsigned i = 0;
    for (const clang::Expr* e : a->args()) {
      ++i;
      std::optional<model::Text> t = TextOf(e);
      if (!t) {
        Error(e->getBeginLoc(),
              fmt::format("argument {} of {} of kernel '{}' must be a string "
                          "literal",
                          i, spelled.str(), k.name));
        continue;
      }
      if (jvp)
        k.jvp = std::move(*t);
      else if (vjp)
        k.vjp = std::move(*t);
      else
        k.parallel.push_back(std::move(*t));
    }
  }

  // The text of a string-literal annotation argument and where its first
  // character is.
  std::optional<model::Text> TextOf(const clang::Expr* e) const {
    const clang::StringLiteral* lit = AsStringLiteral(e);
    if (lit == nullptr) return std::nullopt;
    model::Text t;
    t.text = lit->getString().str();
    t.loc = ToSourceLoc(lit->getLocationOfByte(0, sm_, ctx_.getLangOpts(),
                                               ctx_.getTargetInfo()));
    return t;
  }

  // -- Parameters -----------------------------------------------------------

  std::optional<model::Param> Param(const model::Kernel& k, unsigned index,
                                    const clang::ParmVarDecl* pd) {
    if (pd->isInvalidDecl()) return std::nullopt;
    const std::string& kn = k.name;
    if (pd->getName().empty()) {
      clang::SourceLocation at =
          pd->getLocation().isValid() ? pd->getLocation() : pd->getBeginLoc();
      Error(at, fmt::format("parameter {} of kernel '{}' has no name; kernel "
                            "parameters must be named",
                            index + 1, kn));
      return std::nullopt;
    }
    model::Param p;
    p.name = pd->getName().str();
    p.loc = ToSourceLoc(pd->getLocation());
    const std::string& pn = p.name;

    // Annotations.
    const clang::AnnotateAttr* role = nullptr;
    const clang::AnnotateAttr* shape = nullptr;
    const clang::AnnotateAttr* init = nullptr;
    bool ok = true;
    for (const clang::AnnotateAttr* a : KcAnnotations(pd, sm_)) {
      llvm::StringRef name = a->getAnnotation();
      if (IsRoleAnnotation(name)) {
        if (role != nullptr) {
          Error(a->getLocation(),
                fmt::format("parameter '{}' of kernel '{}' has more than one "
                            "role annotation: {} and {}",
                            pn, kn, SpelledName(role->getAnnotation()),
                            SpelledName(name)));
          ok = false;
          continue;
        }
        role = a;
      } else if (name == kShape || name == kInit) {
        const clang::AnnotateAttr*& slot = name == kShape ? shape : init;
        if (slot != nullptr) {
          Error(a->getLocation(),
                fmt::format("parameter '{}' of kernel '{}' has more than one "
                            "{}",
                            pn, kn, SpelledName(name)));
          ok = false;
          continue;
        }
        slot = a;
      } else if (IsFunctionAnnotation(name) || name == kBlockFeature) {
        Error(a->getLocation(),
              fmt::format("{} cannot be used on parameter '{}' of kernel '{}'",
                          SpelledName(name), pn, kn));
        ok = false;
      } else {
        Error(a->getLocation(),
              fmt::format("unknown kernelc annotation '{}' on parameter '{}' "
                          "of kernel '{}'",
                          name.str(), pn, kn));
        ok = false;
      }
    }
    llvm::StringRef role_name =
        role != nullptr ? role->getAnnotation() : llvm::StringRef();

    // The parameter's type decides what it is.
    clang::QualType type = pd->getType();
    clang::QualType canonical =
        ctx_.getCanonicalType(type).getUnqualifiedType();
    std::optional<ViewType> view = AsView(canonical);
    const auto* pointer = type->getAs<clang::PointerType>();
    bool is_out = false;  // for KC_INIT

    if (role_name == kDerived) {
      TypeClass c = ClassifyType(type, ctx_);
      if (c.plain_char) {
        PlainCharError(pd, pn, kn);
        ok = false;
      } else if (!c.dtype || !model::IsInteger(*c.dtype)) {
        Error(pd->getLocation(),
              fmt::format("KC_DERIVED parameter '{}' of kernel '{}' must have "
                          "an integer type, not '{}'",
                          pn, kn, TypeName(type)));
        ok = false;
      } else {
        p.role = Role::kDerived;
        p.dtype = *c.dtype;
        p.derived = RoleText(role, pn, kn, "the expression");
        if (!p.derived) ok = false;
      }
      if (shape != nullptr) {
        ShapeOnNonViewError(shape, pn, kn);
        ok = false;
      }
    } else if (view) {
      p.access = model::Access::kView;
      p.role = view->role;
      is_out = view->role == Role::kOut;
      if (role != nullptr) {
        Error(role->getLocation(),
              fmt::format("{} cannot be used on view parameter '{}' of kernel "
                          "'{}': its type gives the role; state the shape "
                          "with KC_SHAPE",
                          SpelledName(role_name), pn, kn));
        ok = false;
      }
      if (view->rank < 0) {
        Error(pd->getLocation(),
              fmt::format("view parameter '{}' of kernel '{}' has negative "
                          "rank {}",
                          pn, kn, view->rank));
        ok = false;
      }
      p.rank = static_cast<int>(view->rank);
      if (!ElementType(pd, view->element, pn, kn, &p.dtype)) ok = false;
      if (shape != nullptr) {
        p.shape = RoleText(shape, pn, kn, "the shape");
        if (!p.shape) ok = false;
      } else if (view->role == Role::kOut && role == nullptr) {
        Error(pd->getLocation(),
              fmt::format("output view '{}' of kernel '{}' needs "
                          "KC_SHAPE(\"...\"): output shapes must be stated",
                          pn, kn));
        ok = false;
      }
    } else if (pointer != nullptr && role != nullptr) {
      p.access = model::Access::kPointer;
      p.role = role_name == kIn      ? Role::kIn
               : role_name == kInMut ? Role::kInMut
                                     : Role::kOut;
      is_out = p.role == Role::kOut;
      clang::QualType pointee = pointer->getPointeeType();
      if (p.role != Role::kIn && pointee.isConstQualified()) {
        Error(pd->getLocation(),
              fmt::format("{} parameter '{}' of kernel '{}' points to const "
                          "data; drop the const, or use KC_IN",
                          SpelledName(role_name), pn, kn));
        ok = false;
      }
      if (!ElementType(pd, pointee, pn, kn, &p.dtype)) ok = false;
      p.shape = RoleText(role, pn, kn, "the shape");
      if (!p.shape) ok = false;
      if (shape != nullptr) {
        ShapeOnNonViewError(shape, pn, kn);
        ok = false;
      }
    } else if (pointer != nullptr) {
      if (shape != nullptr) {
        ShapeOnNonViewError(shape, pn, kn);
      } else {
        Error(pd->getLocation(),
              fmt::format("pointer parameter '{}' of kernel '{}' needs a "
                          "role: KC_IN, KC_INMUT or KC_OUT",
                          pn, kn));
      }
      ok = false;
    } else if (role != nullptr) {
      Error(role->getLocation(),
            fmt::format("{} on parameter '{}' of kernel '{}' needs a pointer "
                        "type, not '{}'",
                        SpelledName(role_name), pn, kn, TypeName(type)));
      is_out = role_name == kOut;
      ok = false;
    } else {
      // A scalar.
      p.role = Role::kScalar;
      TypeClass c = ClassifyType(type, ctx_);
      if (c.plain_char) {
        PlainCharError(pd, pn, kn);
        ok = false;
      } else if (c.dtype &&
                 (*c.dtype == DType::kF16 || *c.dtype == DType::kBF16)) {
        Error(pd->getLocation(),
              fmt::format("scalar parameter '{}' of kernel '{}' has type "
                          "'{}', but XLA FFI attributes cannot carry 16-bit "
                          "floats; use float",
                          pn, kn, TypeName(type)));
        ok = false;
      } else if (c.dtype) {
        p.dtype = *c.dtype;
      } else if (canonical->isBuiltinType()) {
        Error(pd->getLocation(),
              fmt::format("scalar parameter '{}' of kernel '{}' has "
                          "unsupported type '{}'; supported: {}",
                          pn, kn, TypeName(type), kScalarTypes));
        ok = false;
      } else {
        Error(pd->getLocation(),
              fmt::format("parameter '{}' of kernel '{}' has unsupported type "
                          "'{}': tensors are pointers with KC_IN, KC_INMUT or "
                          "KC_OUT, or kc::In/InMut/Out views; scalars are "
                          "arithmetic types",
                          pn, kn, TypeName(type)));
        ok = false;
      }
      if (shape != nullptr) {
        ShapeOnNonViewError(shape, pn, kn);
        ok = false;
      }
    }

    if (init != nullptr) {
      if (!is_out) {
        Error(init->getLocation(),
              fmt::format("KC_INIT applies only to outputs (KC_OUT pointers "
                          "and kc::Out views), not to parameter '{}' of "
                          "kernel '{}'",
                          pn, kn));
        ok = false;
      } else {
        p.init = InitText(init, pn, kn);
        if (!p.init) ok = false;
      }
    }
    if (!ok) return std::nullopt;
    return p;
  }

  void PlainCharError(const clang::ParmVarDecl* pd, const std::string& pn,
                      const std::string& kn) {
    Error(pd->getLocation(),
          fmt::format("parameter '{}' of kernel '{}': plain 'char' has "
                      "implementation-defined signedness; use int8_t or "
                      "uint8_t",
                      pn, kn));
  }

  void ShapeOnNonViewError(const clang::AnnotateAttr* shape,
                           const std::string& pn, const std::string& kn) {
    Error(shape->getLocation(),
          fmt::format("KC_SHAPE applies only to kc::In, kc::InMut and kc::Out "
                      "views, not to parameter '{}' of kernel '{}'; a pointer "
                      "takes its shape from KC_IN, KC_INMUT or KC_OUT",
                      pn, kn));
  }

  // The element type of a tensor parameter, or false after an error.
  bool ElementType(const clang::ParmVarDecl* pd, clang::QualType element,
                   const std::string& pn, const std::string& kn, DType* out) {
    TypeClass c = ClassifyType(element, ctx_);
    if (c.plain_char) {
      PlainCharError(pd, pn, kn);
      return false;
    }
    if (!c.dtype) {
      Error(pd->getLocation(),
            fmt::format("parameter '{}' of kernel '{}' has unsupported "
                        "element type '{}'; supported: {}",
                        pn, kn, TypeName(element.getUnqualifiedType()),
                        kElementTypes));
      return false;
    }
    *out = *c.dtype;
    return true;
  }

  // The one string argument of KC_IN/KC_INMUT/KC_OUT/KC_SHAPE/KC_DERIVED.
  std::optional<model::Text> RoleText(const clang::AnnotateAttr* a,
                                      const std::string& pn,
                                      const std::string& kn, const char* what) {
    std::optional<model::Text> t;
    if (a->args_size() == 1) t = TextOf(*a->args_begin());
    if (!t) {
      clang::SourceLocation at = a->args_size() == 1
                                     ? (*a->args_begin())->getBeginLoc()
                                     : a->getLocation();
      Error(at, fmt::format("{} on parameter '{}' of kernel '{}' takes one "
                            "string literal: {}",
                            SpelledName(a->getAnnotation()), pn, kn, what));
    }
    return t;
  }

  std::optional<model::Text> InitText(const clang::AnnotateAttr* a,
                                      const std::string& pn,
                                      const std::string& kn) {
    if (a->args_size() != 1) {
      Error(a->getLocation(),
            fmt::format("KC_INIT on parameter '{}' of kernel '{}' takes one "
                        "value",
                        pn, kn));
      return std::nullopt;
    }
    const clang::Expr* e = *a->args_begin();
    clang::Expr::EvalResult r;
    std::optional<std::string> text;
    if (!e->isValueDependent() && e->EvaluateAsRValue(r, ctx_))
      text = ConstantText(r.Val);
    if (!text) {
      Error(e->getBeginLoc(),
            fmt::format("KC_INIT value of parameter '{}' of kernel '{}' must "
                        "be an integer or floating-point constant",
                        pn, kn));
      return std::nullopt;
    }
    return model::Text{std::move(*text), ToSourceLoc(e->getBeginLoc())};
  }

  // -- Block-level features -------------------------------------------------

  void BlockFeatures(const clang::FunctionDecl* fd, model::Kernel& k) {
    std::vector<FeatureFinder::Use> uses = FeatureFinder(sm_).Find(fd);
    for (FeatureFinder::Use& u : uses) u.loc = sm_.getFileLoc(u.loc);
    std::stable_sort(
        uses.begin(), uses.end(),
        [this](const FeatureFinder::Use& a, const FeatureFinder::Use& b) {
          return sm_.isBeforeInTranslationUnit(a.loc, b.loc);
        });
    std::set<std::string> seen;
    for (const FeatureFinder::Use& u : uses)
      if (seen.insert(u.what).second)
        k.block_features.push_back({u.what, ToSourceLoc(u.loc)});
  }

  clang::ASTContext& ctx_;
  clang::SourceManager& sm_;
  clang::DiagnosticsEngine& diags_;
  Session& session_;
  const std::string& source_;
  std::vector<clang::SourceLocation> clang_errors_;
  unsigned error_id_ = 0;
  unsigned note_id_ = 0;
};

class KernelConsumer : public clang::ASTConsumer {
 public:
  KernelConsumer(Session& session, const std::string& source)
      : session_(session), source_(source) {}

  // After the whole TU: template instantiations needed by kernels are done.
  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    SourceAnalyzer(ctx, session_, source_).Run();
  }

 private:
  Session& session_;
  const std::string& source_;
};

class KernelAction : public clang::ASTFrontendAction {
 public:
  KernelAction(Session& session, const std::string& source)
      : session_(session), source_(source) {}

 protected:
  bool BeginSourceFileAction(clang::CompilerInstance& ci) override {
    if (!session_.toolkit_dirs.empty())
      ci.getPreprocessor().addPPCallbacks(
          std::make_unique<ToolkitIncludeRecorder>(ci.getSourceManager(),
                                                   session_));
    return true;
  }

  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(
      clang::CompilerInstance&, llvm::StringRef) override {
    return std::make_unique<KernelConsumer>(session_, source_);
  }

 private:
  Session& session_;
  const std::string& source_;
};

// Runs KernelAction like tooling's FrontendActionFactory does, except that
// the compiler instance's own summary line ("1 error generated.") goes
// nowhere instead of to stderr: this library never prints.
class QuietToolAction : public clang::tooling::ToolAction {
 public:
  QuietToolAction(Session& session, const std::string& source)
      : session_(session), source_(source) {}

  bool runInvocation(std::shared_ptr<clang::CompilerInvocation> invocation,
                     clang::FileManager* files,
                     std::shared_ptr<clang::PCHContainerOperations> pch,
                     clang::DiagnosticConsumer* consumer) override {
    clang::CompilerInstance ci(std::move(pch));
    ci.setInvocation(std::move(invocation));
    ci.setFileManager(files);
    ci.setVerboseOutputStream(std::make_unique<llvm::raw_null_ostream>());
    // Declared after `ci`, so that it is destroyed first.
    KernelAction action(session_, source_);
    ci.createDiagnostics(consumer, /*ShouldOwnClient=*/false);
    if (!ci.hasDiagnostics()) return false;
    ci.createSourceManager(*files);
    session_.consumer->Reset();
    // Without system headers (kernelc's own are on the system path): what a
    // build cache must re-check besides the toolchain's identity.
    auto collector = std::make_shared<clang::DependencyCollector>();
    ci.addDependencyCollector(collector);
    bool ok = ci.ExecuteAction(action);
    // kernelc's own headers are on the path with -I, but are kernelc's
    // identity, not the user's files.
    for (const std::string& d : collector->getDependencies())
      if (!llvm::StringRef(d).starts_with(kVirtualRoot))
        session_.dependencies.insert(d);
    files->clearStatCache();
    return ok;
  }

 private:
  Session& session_;
  const std::string& source_;
};

// Clang's CUDA mode for the device side, made to read the CUDA toolkit that
// NVRTC compiles with, which may be newer than Clang knows (Clang 19 knows
// CUDA up to 12.5):
// - The toolkit's directories are given explicitly (-nocudainc, and Clang's
//   runtime wrapper included once they are on the path): they are where
//   kernelc found NVRTC's headers ($CUDA_HOME, NVIDIA's pip wheels, conda),
//   not all of them layouts that Clang's detection of an installation
//   accepts.
// - The SDK version is the newest Clang knows: with none, or one it does
//   not know (13.0), Clang resolves the kernel launches in the headers
//   (Thrust's, CUB's) through cudaConfigureCall, the API before CUDA 9.2.
// - Clang's wrapper includes texture_fetch_functions.h, which CUDA 12
//   removed together with texture references: kernelc's shim directory has
//   an empty one.
// - The cache-hinted loads and stores on built-in types (__ldcs, __stcs,
//   ...) are declared by kernelc's shim (cache_hints.h): Clang's wrapper
//   leaves out the toolkit header that has them.
// Clang's detection still looks for a toolkit in the default places, and
// warns when the one it finds is newer than it knows: -w drops that with
// the other warnings.
std::vector<std::string> CudaDeviceArgs(int arch) {
  return {"-x",
          "cuda",
          "--cuda-device-only",
          fmt::format("--cuda-gpu-arch=sm_{}", arch),
          "-nocudainc",
          "-nocudalib",
          "-Xclang",
          "-target-sdk-version=12.5"};
}

}  // namespace

Result<model::Module> ParseSources(const std::vector<std::string>& sources,
                                   const Options& options,
                                   std::string* diagnostics) {
  const std::string clang_path = KERNELC_LLVM_PREFIX "/bin/clang";
  const std::string resource_dir =
      clang::driver::Driver::GetResourcesPath(clang_path);
  if (!llvm::sys::fs::is_directory(resource_dir + "/include"))
    return Error::Internal(fmt::format(
        "Clang's resource directory '{}' is missing; is libclang-19-dev "
        "installed?",
        resource_dir));

  auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
      llvm::vfs::getRealFileSystem());
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  // Takes the real file system's working directory, so that relative
  // virtual paths mean what relative real paths do.
  overlay->pushOverlay(memory);
  for (const VirtualFile& f : options.virtual_files) {
    if (!memory->addFile(
            f.path, /*ModificationTime=*/0,
            llvm::MemoryBuffer::getMemBufferCopy(
                llvm::StringRef(f.contents.data(), f.contents.size()), f.path)))
      return Error::Internal(
          fmt::format("virtual file '{}' is given twice", f.path));
  }

  std::string text;
  llvm::raw_string_ostream os(text);
  auto diag_options = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  diag_options->ShowColors = false;
  // Clang's own diagnostics look like kernelc's: the source line as it is,
  // without the "  12 | " gutter Clang prints by default.
  diag_options->ShowLineNumbers = false;
  Consumer printer(os, diag_options.get());
  // For what is reported before Clang runs.
  clang::DiagnosticsEngine early(
      llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>(), diag_options.get(),
      &printer, /*ShouldOwnClient=*/false);

  const bool cuda = options.dialect == Options::Dialect::kCudaDevice;
  Session session;
  session.module.sources = sources;
  if (!cuda) {
    for (const std::string& dir : options.cuda_include_dirs) {
      llvm::SmallString<256> real;
      if (!llvm::sys::fs::real_path(dir, real))
        session.toolkit_dirs.push_back(std::string(real));
    }
  }
  session.consumer = &printer;
  for (const std::string& source : sources) {
    // The driver would say so too, and then two more errors about having
    // nothing to compile.
    if (!overlay->exists(source)) {
      early.Report(early.getCustomDiagID(clang::DiagnosticsEngine::Error,
                                         "no such file or directory: '%0'"))
          << source;
      continue;
    }
    std::vector<std::string> args = {clang_path, "-fsyntax-only"};
    if (cuda) {
      std::vector<std::string> device = CudaDeviceArgs(options.cuda_arch);
      args.insert(args.end(), device.begin(), device.end());
    } else {
      args.insert(args.end(), {"-x", "c++"});
    }
    args.insert(args.end(),
                {"-std=c++17", "-D__KERNELC_FRONTEND__", "-resource-dir",
                 resource_dir, "-fno-color-diagnostics",
                 "-fno-diagnostics-show-line-numbers", "-ferror-limit=0",
                 // Warnings are the backends' to report, when they
                 // compile the source.
                 "-w"});
    // kernelc's headers come first, as -I (which Clang searches before any
    // -isystem): read as the CPU sees it, a source's <cuda_fp16.h> is
    // kernelc's stand-in even when -I names the CUDA toolkit's include
    // directory. In CUDA mode only kernelc.h is kernelc's; the toolkit's
    // headers are the real ones.
    args.push_back("-I" + options.kernelc_include_dir);
    if (!cuda) args.push_back("-I" + options.host_include_dir);
    for (const std::string& dir : options.include_dirs)
      args.push_back("-I" + dir);
    if (cuda) {
      args.insert(args.end(), {"-isystem", options.cuda_shim_dir});
      for (const std::string& dir : options.cuda_include_dirs)
        args.insert(args.end(), {"-isystem", dir});
      // Clang's CUDA runtime wrapper, which -nocudainc leaves out, after
      // the toolkit's directories are on the path; then what it lacks.
      args.insert(args.end(), {"-include", "__clang_cuda_runtime_wrapper.h",
                               "-include",
                               options.cuda_shim_dir + "/cache_hints.h"});
    }
    for (const std::string& define : options.defines)
      args.push_back("-D" + define);
    args.push_back("--");
    args.push_back(source);

    auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(
        clang::FileSystemOptions(), overlay);
    QuietToolAction action(session, source);
    clang::tooling::ToolInvocation invocation(
        std::move(args), &action, files.get(),
        std::make_shared<clang::PCHContainerOperations>());
    invocation.setDiagnosticConsumer(&printer);
    unsigned errors_before = printer.getNumErrors();
    // run() also fails when the source has errors, or when an earlier
    // source had: the printer counts them all. A failure that reported
    // nothing is not the user's.
    if (!invocation.run() && printer.getNumErrors() == errors_before) {
      os.flush();
      if (diagnostics != nullptr) *diagnostics = text;
      return Error::Internal(
          fmt::format("Clang failed on '{}' without a diagnostic", source));
    }
  }

  unsigned errors = printer.getNumErrors();
  if (errors > 0)
    os << errors << (errors == 1 ? " error" : " errors") << " generated.\n";
  os.flush();
  if (diagnostics != nullptr) *diagnostics = text;
  if (errors > 0)
    return Error::User(
        fmt::format("{} error{} generated", errors, errors == 1 ? "" : "s"));
  if (options.dependencies != nullptr)
    options.dependencies->assign(session.dependencies.begin(),
                                 session.dependencies.end());
  return std::move(session.module);
}

Options DefaultOptions() {
  Options o;
  for (const EmbeddedFile& f : embedded::UserHeaders())
    o.virtual_files.push_back(
        {std::string(kVirtualRoot) + std::string(f.path), f.contents});
  o.kernelc_include_dir = std::string(kVirtualRoot) + "include";
  o.host_include_dir = std::string(kVirtualRoot) + "host_include";
  o.cuda_shim_dir = std::string(kVirtualRoot) + "cuda_shim";
  return o;
}

std::string ClangVersion() { return CLANG_VERSION_STRING; }

}  // namespace kernelc::frontend
