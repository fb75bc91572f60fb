// kernelc's own diagnostics (all errors), in the order they are checked:
//   function-level:
//     "kernel '%0' is both __global__ and KC_KERNEL"
//     "__global__ kernel '%0' has kernelc annotations but no KC_GRID"
//     "kernel '%0' is a template; export a non-template kernel that calls it"
//     "kernel '%0' is a member function; kernels must be free functions"
//     "host kernel '%0' must return void"
//     "KC_GRID and KC_BLOCK apply to __global__ kernels; '%0' is a host kernel"
//     "KC_GRID takes 1 to 3 expression strings"
//     "KC_BLOCK takes 1 to 3 integer constants"
//     "kernel '%0' is defined twice" (+ note "first defined here")
//   parameter-level:
//     "parameter %0 of kernel '%1' has no name"
//     "parameter '%0' of kernel '%1' has more than one role annotation"
//     "pointer parameter '%0' of kernel '%1' needs a role: KC_IN, KC_INMUT or KC_OUT"
//     "'%0' of kernel '%1' points to const and cannot be KC_OUT or KC_INMUT"
//     "the role of '%0' comes from its type %1; state its shape with KC_SHAPE"
//     "KC_SHAPE applies to kc::In/InMut/Out views; give pointer '%0' its shape with KC_IN, KC_INMUT or KC_OUT"
//     "KC_SHAPE applies to kc::In/InMut/Out views; '%0' is a scalar"
//     "%0 applies to pointers; '%1' is a scalar of type '%2'"
//     "output view '%0' of kernel '%1' needs KC_SHAPE(...)"
//     "KC_INIT applies to outputs; '%0' of kernel '%1' is not one"
//     "KC_INIT value of '%0' is not a numeric constant"
//     "KC_DERIVED parameter '%0' must have an integer type, not '%1'"
//     "parameter '%0' has unsupported element type '%1'; supported: bool, (u)int8-64, float, double, __half, __nv_bfloat16"
//     "parameter '%0' has plain 'char' elements, whose signedness varies; use int8_t or uint8_t"
//     "scalar '%0' cannot be a 16-bit float: XLA attributes cannot carry one; use float"
//     "parameter '%0' has unsupported type '%1': kernel parameters are tensors (pointers or kc:: views) or arithmetic scalars"
//     "the shape must be a string literal"
#include "compiler/frontend/frontend.h"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/AST/Attr.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Driver/Driver.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/Tooling.h>
#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>
#include <map>
#include <set>

#include "runtime/embedded_headers.h"

namespace kernelc::frontend {

namespace {

using model::Access;
using model::DType;
using model::Role;

constexpr const char* kVirtualRoot = "/__kernelc__";

// What the frontend keeps across the sources of one run.
struct State {
  model::Module module;
  // Where each kernel was first defined (for "defined twice").
  std::map<std::string, std::pair<std::string, unsigned>> first_def;
};

class KernelReader {
 public:
  KernelReader(clang::ASTContext& ctx, State& state, const std::string& source)
      : ctx_(ctx),
        sm_(ctx.getSourceManager()),
        diags_(ctx.getDiagnostics()),
        state_(state),
        source_(source) {}

  void Read(clang::FunctionDecl* fd) {
    bool global = HasAnnotation(fd, "kc.global");
    bool host = HasAnnotation(fd, "kc.kernel");
    if (!global && !host) return;
    if (global && !HasAnyKc(fd)) return;  // a private helper kernel
    std::string name = fd->getNameAsString();
    clang::SourceLocation loc = fd->getLocation();
    if (global && host) {
      Error(loc, fmt::format("kernel '{}' is both __global__ and KC_KERNEL", name));
      return;
    }
    if (fd->isTemplated() || fd->getTemplatedKind() !=
                                 clang::FunctionDecl::TK_NonTemplate) {
      Error(loc, fmt::format("kernel '{}' is a template; export a non-template "
                             "kernel that calls it",
                             name));
      return;
    }
    if (llvm::isa<clang::CXXMethodDecl>(fd)) {
      Error(loc, fmt::format("kernel '{}' is a member function; kernels must be "
                             "free functions",
                             name));
      return;
    }
    model::Kernel k;
    k.name = name;
    k.kind = global ? model::KernelKind::kGlobal : model::KernelKind::kHost;
    k.source = source_;
    k.loc = ToLoc(loc);
    bool ok = true;
    if (host && !fd->getReturnType()->isVoidType()) {
      Error(loc, fmt::format("host kernel '{}' must return void", name));
      ok = false;
    }
    for (const auto* a : fd->specific_attrs<clang::AnnotateAttr>()) {
      llvm::StringRef an = a->getAnnotation();
      if (an != "kc.grid" && an != "kc.block") continue;
      if (host) {
        Error(a->getLocation(),
              fmt::format("KC_GRID and KC_BLOCK apply to __global__ kernels; "
                          "'{}' is a host kernel",
                          name));
        ok = false;
        continue;
      }
      if (a->args_size() < 1 || a->args_size() > 3) {
        Error(a->getLocation(), an == "kc.grid"
                                    ? "KC_GRID takes 1 to 3 expression strings"
                                    : "KC_BLOCK takes 1 to 3 integer constants");
        ok = false;
        continue;
      }
      for (clang::Expr* e : a->args()) {
        if (an == "kc.grid") {
          std::optional<model::Text> t = StringArg(e);
          if (!t) {
            Error(e->getBeginLoc(), "KC_GRID takes 1 to 3 expression strings");
            ok = false;
            continue;
          }
          k.grid.push_back(*t);
        } else {
          clang::Expr::EvalResult r;
          if (!e->EvaluateAsInt(r, ctx_)) {
            Error(e->getBeginLoc(), "KC_BLOCK takes 1 to 3 integer constants");
            ok = false;
            continue;
          }
          k.block.push_back(r.Val.getInt().getExtValue());
        }
      }
    }
    if (global && k.grid.empty() && ok) {
      Error(loc, fmt::format("__global__ kernel '{}' has kernelc annotations but "
                             "no KC_GRID",
                             name));
      ok = false;
    }
    for (unsigned i = 0; i < fd->getNumParams(); ++i) {
      std::optional<model::Param> p = ReadParam(fd->getParamDecl(i), i, name);
      if (p)
        k.params.push_back(std::move(*p));
      else
        ok = false;
    }
    if (global) FindBlockFeatures(fd, k);
    auto [it, inserted] =
        state_.first_def.emplace(name, std::make_pair(std::string(), 0u));
    if (!inserted) {
      Error(loc, fmt::format("kernel '{}' is defined twice", name));
      if (const model::Kernel* first = state_.module.FindKernel(name))
        Note(fmt::format("first defined at {}", first->loc.ToString()));
      return;
    }
    if (ok) state_.module.kernels.push_back(std::move(k));
  }

 private:
  void Error(clang::SourceLocation loc, const std::string& msg) {
    unsigned id = diags_.getCustomDiagID(clang::DiagnosticsEngine::Error, "%0");
    diags_.Report(sm_.getSpellingLoc(loc), id) << msg;
  }
  void Note(const std::string& msg) {
    unsigned id = diags_.getCustomDiagID(clang::DiagnosticsEngine::Note, "%0");
    diags_.Report(id) << msg;
  }

  diag::SourceLoc ToLoc(clang::SourceLocation loc) const {
    clang::PresumedLoc p = sm_.getPresumedLoc(sm_.getSpellingLoc(loc));
    if (p.isInvalid()) return {};
    return {p.getFilename(), static_cast<int>(p.getLine()),
            static_cast<int>(p.getColumn())};
  }

  static bool HasAnnotation(const clang::Decl* d, llvm::StringRef name) {
    for (const auto* a : d->specific_attrs<clang::AnnotateAttr>())
      if (a->getAnnotation() == name) return true;
    return false;
  }

  static bool IsKc(const clang::AnnotateAttr* a) {
    return a->getAnnotation().startswith("kc.") &&
           a->getAnnotation() != "kc.global" &&
           a->getAnnotation() != "kc.block_feature";
  }

  static bool HasAnyKc(const clang::FunctionDecl* fd) {
    for (const auto* a : fd->specific_attrs<clang::AnnotateAttr>())
      if (IsKc(a)) return true;
    for (const clang::ParmVarDecl* p : fd->parameters())
      for (const auto* a : p->specific_attrs<clang::AnnotateAttr>())
        if (IsKc(a)) return true;
    return false;
  }

  std::optional<model::Text> StringArg(clang::Expr* e) {
    auto* sl = llvm::dyn_cast<clang::StringLiteral>(e->IgnoreParenImpCasts());
    if (!sl) return std::nullopt;
    model::Text t;
    t.text = sl->getString().str();
    t.loc = ToLoc(sl->getLocationOfByte(0, sm_, ctx_.getLangOpts(),
                                        ctx_.getTargetInfo()));
    return t;
  }

  // The dtype of an element or scalar type; reports and returns nullopt
  // when unsupported.
  std::optional<DType> ElementType(clang::QualType t, const std::string& param,
                                   clang::SourceLocation loc) {
    clang::QualType c = t.getCanonicalType().getUnqualifiedType();
    if (c->isBooleanType()) return DType::kBool;
    if (const auto* bt = c->getAs<clang::BuiltinType>()) {
      if (bt->getKind() == clang::BuiltinType::Char_S ||
          bt->getKind() == clang::BuiltinType::Char_U) {
        Error(loc, fmt::format("parameter '{}' has plain 'char' elements, whose "
                               "signedness varies; use int8_t or uint8_t",
                               param));
        return std::nullopt;
      }
      if (bt->getKind() == clang::BuiltinType::Float) return DType::kF32;
      if (bt->getKind() == clang::BuiltinType::Double) return DType::kF64;
      if (c->isIntegerType() && !c->isEnumeralType()) {
        bool is_signed = c->isSignedIntegerType();
        switch (ctx_.getTypeSize(c)) {
          case 8: return is_signed ? DType::kI8 : DType::kU8;
          case 16: return is_signed ? DType::kI16 : DType::kU16;
          case 32: return is_signed ? DType::kI32 : DType::kU32;
          case 64: return is_signed ? DType::kI64 : DType::kU64;
          default: break;
        }
      }
    }
    if (const auto* rd = c->getAsCXXRecordDecl()) {
      std::string qn = rd->getQualifiedNameAsString();
      if (qn == "kc::half" || qn == "__half") return DType::kF16;
      if (qn == "kc::bfloat16" || qn == "__nv_bfloat16") return DType::kBF16;
    }
    Error(loc, fmt::format("parameter '{}' has unsupported element type '{}'; "
                           "supported: bool, (u)int8-64, float, double, __half, "
                           "__nv_bfloat16",
                           param, t.getAsString()));
    return std::nullopt;
  }

  std::optional<model::Param> ReadParam(clang::ParmVarDecl* pd, unsigned index,
                                        const std::string& kernel) {
    model::Param p;
    p.name = pd->getNameAsString();
    clang::SourceLocation loc = pd->getLocation();
    p.loc = ToLoc(loc);
    if (p.name.empty()) {
      Error(pd->getBeginLoc(), fmt::format("parameter {} of kernel '{}' has no name",
                                           index + 1, kernel));
      return std::nullopt;
    }
    const clang::AnnotateAttr* role_attr = nullptr;
    const clang::AnnotateAttr* shape_attr = nullptr;
    const clang::AnnotateAttr* init_attr = nullptr;
    const clang::AnnotateAttr* derived_attr = nullptr;
    int roles = 0;
    for (const auto* a : pd->specific_attrs<clang::AnnotateAttr>()) {
      llvm::StringRef an = a->getAnnotation();
      if (an == "kc.in" || an == "kc.inmut" || an == "kc.out") {
        role_attr = a;
        ++roles;
      } else if (an == "kc.derived") {
        derived_attr = a;
        ++roles;
      } else if (an == "kc.shape") {
        shape_attr = a;
      } else if (an == "kc.init") {
        init_attr = a;
      }
    }
    if (roles > 1) {
      Error(loc, fmt::format("parameter '{}' of kernel '{}' has more than one "
                             "role annotation",
                             p.name, kernel));
      return std::nullopt;
    }
    bool ok = true;
    auto text_of = [&](const clang::AnnotateAttr* a) -> std::optional<model::Text> {
      if (a->args_size() == 1)
        if (auto t = StringArg(*a->args_begin())) return t;
      Error(a->args_size() ? (*a->args_begin())->getBeginLoc() : a->getLocation(),
            "the shape must be a string literal");
      ok = false;
      return std::nullopt;
    };

    clang::QualType type = pd->getType();
    clang::QualType canon = type.getCanonicalType();
    const auto* spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(
        canon->getAsCXXRecordDecl());
    std::string spec_name = spec ? spec->getQualifiedNameAsString() : "";
    if (spec_name == "kc::In" || spec_name == "kc::InMut" || spec_name == "kc::Out") {
      p.access = Access::kView;
      p.role = spec_name == "kc::In"     ? Role::kIn
               : spec_name == "kc::InMut" ? Role::kInMut
                                          : Role::kOut;
      const clang::TemplateArgumentList& args = spec->getTemplateArgs();
      std::optional<DType> dt = ElementType(args[0].getAsType(), p.name, loc);
      if (!dt) return std::nullopt;
      p.dtype = *dt;
      p.rank = static_cast<int>(args[1].getAsIntegral().getExtValue());
      if (role_attr || derived_attr) {
        Error(loc, fmt::format("the role of '{}' comes from its type {}; state its "
                               "shape with KC_SHAPE",
                               p.name, spec_name));
        return std::nullopt;
      }
      if (shape_attr) p.shape = text_of(shape_attr);
      if (p.role == Role::kOut && !shape_attr) {
        Error(loc, fmt::format("output view '{}' of kernel '{}' needs KC_SHAPE(...)",
                               p.name, kernel));
        return std::nullopt;
      }
    } else if (canon->isPointerType()) {
      clang::QualType pointee = canon->getPointeeType();
      if (derived_attr) {
        Error(loc, fmt::format("KC_DERIVED parameter '{}' must have an integer "
                               "type, not '{}'",
                               p.name, type.getAsString()));
        return std::nullopt;
      }
      if (shape_attr) {
        Error(shape_attr->getLocation(),
              fmt::format("KC_SHAPE applies to kc::In/InMut/Out views; give "
                          "pointer '{}' its shape with KC_IN, KC_INMUT or KC_OUT",
                          p.name));
        return std::nullopt;
      }
      if (!role_attr) {
        Error(loc, fmt::format("pointer parameter '{}' of kernel '{}' needs a role: "
                               "KC_IN, KC_INMUT or KC_OUT",
                               p.name, kernel));
        return std::nullopt;
      }
      llvm::StringRef an = role_attr->getAnnotation();
      p.role = an == "kc.in" ? Role::kIn : an == "kc.inmut" ? Role::kInMut : Role::kOut;
      if (p.role != Role::kIn && pointee.isConstQualified()) {
        Error(loc, fmt::format("'{}' of kernel '{}' points to const and cannot be "
                               "KC_OUT or KC_INMUT",
                               p.name, kernel));
        return std::nullopt;
      }
      std::optional<DType> dt = ElementType(pointee, p.name, loc);
      if (!dt) return std::nullopt;
      p.dtype = *dt;
      p.access = Access::kPointer;
      p.shape = text_of(role_attr);
    } else if (canon->isArithmeticType() && !canon->isEnumeralType() &&
               !canon->isAnyComplexType()) {
      if (role_attr) {
        Error(loc, fmt::format("{} applies to pointers; '{}' is a scalar of type "
                               "'{}'",
                               role_attr->getAnnotation() == "kc.in" ? "KC_IN"
                               : role_attr->getAnnotation() == "kc.inmut"
                                   ? "KC_INMUT"
                                   : "KC_OUT",
                               p.name, type.getAsString()));
        return std::nullopt;
      }
      if (shape_attr) {
        Error(loc, fmt::format("KC_SHAPE applies to kc::In/InMut/Out views; '{}' "
                               "is a scalar",
                               p.name));
        return std::nullopt;
      }
      std::optional<DType> dt = ElementType(type, p.name, loc);
      if (!dt) return std::nullopt;
      p.dtype = *dt;
      if (derived_attr) {
        if (!model::IsInteger(p.dtype)) {
          Error(loc, fmt::format("KC_DERIVED parameter '{}' must have an integer "
                                 "type, not '{}'",
                                 p.name, type.getAsString()));
          return std::nullopt;
        }
        p.role = Role::kDerived;
        p.derived = text_of(derived_attr);
      } else {
        p.role = Role::kScalar;
      }
    } else if (const auto* rd = canon->getAsCXXRecordDecl();
               rd && (rd->getQualifiedNameAsString() == "kc::half" ||
                      rd->getQualifiedNameAsString() == "kc::bfloat16")) {
      Error(loc, fmt::format("scalar '{}' cannot be a 16-bit float: XLA "
                             "attributes cannot carry one; use float",
                             p.name));
      return std::nullopt;
    } else {
      Error(loc, fmt::format("parameter '{}' has unsupported type '{}': kernel "
                             "parameters are tensors (pointers or kc:: views) or "
                             "arithmetic scalars",
                             p.name, type.getAsString()));
      return std::nullopt;
    }
    if (init_attr) {
      if (p.role != Role::kOut) {
        Error(init_attr->getLocation(),
              fmt::format("KC_INIT applies to outputs; '{}' of kernel '{}' is not "
                          "one",
                          p.name, kernel));
        return std::nullopt;
      }
      clang::Expr* e = init_attr->args_size() ? *init_attr->args_begin() : nullptr;
      clang::Expr::EvalResult r;
      if (!e || !e->EvaluateAsRValue(r, ctx_) ||
          !(r.Val.isInt() || r.Val.isFloat())) {
        Error(e ? e->getBeginLoc() : init_attr->getLocation(),
              fmt::format("KC_INIT value of '{}' is not a numeric constant", p.name));
        return std::nullopt;
      }
      model::Text t;
      t.loc = ToLoc(e->getBeginLoc());
      if (r.Val.isInt()) {
        t.text = llvm::toString(r.Val.getInt(), 10);
      } else {
        double d = r.Val.getFloat().convertToDouble();
        if (std::isnan(d))
          t.text = "nan";
        else if (std::isinf(d))
          t.text = d > 0 ? "inf" : "-inf";
        else
          t.text = fmt::format("{:.17g}", d);
      }
      p.init = t;
    }
    if (!ok) return std::nullopt;
    return p;
  }

  // Records the first use of each block-level feature in the kernel and the
  // functions it calls.
  void FindBlockFeatures(const clang::FunctionDecl* fd, model::Kernel& k) {
    std::set<const clang::FunctionDecl*> visited;
    std::set<std::string> seen;
    std::vector<const clang::FunctionDecl*> work = {fd};
    while (!work.empty()) {
      const clang::FunctionDecl* f = work.back();
      work.pop_back();
      if (!visited.insert(f).second || !f->hasBody()) continue;
      FeatureVisitor v(*this, k, seen, work);
      v.TraverseStmt(f->getBody());
    }
  }

  static const clang::AnnotateAttr* FeatureOf(const clang::Decl* d) {
    if (!d) return nullptr;
    for (const auto* a : d->specific_attrs<clang::AnnotateAttr>())
      if (a->getAnnotation() == "kc.block_feature") return a;
    if (const auto* f = llvm::dyn_cast<clang::FunctionDecl>(d))
      if (const clang::FunctionTemplateDecl* t = f->getPrimaryTemplate())
        return FeatureOf(t->getTemplatedDecl());
    return nullptr;
  }

  class FeatureVisitor : public clang::RecursiveASTVisitor<FeatureVisitor> {
   public:
    FeatureVisitor(KernelReader& r, model::Kernel& k, std::set<std::string>& seen,
                   std::vector<const clang::FunctionDecl*>& work)
        : r_(r), k_(k), seen_(seen), work_(work) {}
    bool VisitDeclRefExpr(clang::DeclRefExpr* e) {
      if (const auto* a = FeatureOf(e->getDecl())) Record(a, e->getLocation());
      if (const auto* f = llvm::dyn_cast<clang::FunctionDecl>(e->getDecl()))
        work_.push_back(f->getDefinition() ? f->getDefinition() : f);
      return true;
    }
    bool VisitVarDecl(clang::VarDecl* v) {
      if (const auto* a = FeatureOf(v)) Record(a, v->getLocation());
      return true;
    }

   private:
    void Record(const clang::AnnotateAttr* a, clang::SourceLocation loc) {
      std::string what = "__shared__";
      if (a->args_size() == 1)
        if (auto t = r_.StringArg(*a->args_begin())) what = t->text;
      if (seen_.insert(what).second) k_.block_features.push_back({what, r_.ToLoc(loc)});
    }
    KernelReader& r_;
    model::Kernel& k_;
    std::set<std::string>& seen_;
    std::vector<const clang::FunctionDecl*>& work_;
  };

  clang::ASTContext& ctx_;
  clang::SourceManager& sm_;
  clang::DiagnosticsEngine& diags_;
  State& state_;
  std::string source_;
};

class Visitor : public clang::RecursiveASTVisitor<Visitor> {
 public:
  Visitor(clang::ASTContext& ctx, KernelReader& reader)
      : sm_(ctx.getSourceManager()), reader_(reader) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool VisitFunctionDecl(clang::FunctionDecl* fd) {
    if (fd->isThisDeclarationADefinition() &&
        sm_.isInMainFile(sm_.getExpansionLoc(fd->getLocation())))
      reader_.Read(fd);
    return true;
  }

 private:
  clang::SourceManager& sm_;
  KernelReader& reader_;
};

class Consumer : public clang::ASTConsumer {
 public:
  Consumer(State& state, std::string source)
      : state_(state), source_(std::move(source)) {}
  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    // A source with C++ errors is not read further: its AST is incomplete.
    if (ctx.getDiagnostics().hasErrorOccurred()) return;
    KernelReader reader(ctx, state_, source_);
    Visitor(ctx, reader).TraverseDecl(ctx.getTranslationUnitDecl());
  }

 private:
  State& state_;
  std::string source_;
};

class Action : public clang::ASTFrontendAction {
 public:
  explicit Action(State& state) : state_(state) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(
      clang::CompilerInstance&, llvm::StringRef file) override {
    return std::make_unique<Consumer>(state_, file.str());
  }

 private:
  State& state_;
};

}  // namespace

Options DefaultOptions() {
  Options o;
  for (const EmbeddedFile& f : embedded::UserHeaders())
    o.virtual_files.push_back(
        {fmt::format("{}/{}", kVirtualRoot, f.path), f.contents});
  o.virtual_include_dirs = {fmt::format("{}/include", kVirtualRoot),
                            fmt::format("{}/host_include", kVirtualRoot)};
  return o;
}

Result<model::Module> ParseSources(const std::vector<std::string>& sources,
                                   const Options& options,
                                   std::string* diagnostics) {
  std::vector<std::string> args = {
      "-x", "c++", "-std=c++17", "-fsyntax-only", "-D__KERNELC_FRONTEND__",
      "-resource-dir=" +
          clang::driver::Driver::GetResourcesPath(KERNELC_LLVM_PREFIX "/bin/clang")};
  for (const std::string& d : options.virtual_include_dirs) {
    args.push_back("-isystem");
    args.push_back(d);
  }
  for (const std::string& d : options.include_dirs) args.push_back("-I" + d);
  for (const std::string& d : options.defines) args.push_back("-D" + d);
  auto overlay = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
      llvm::vfs::getRealFileSystem());
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  for (const VirtualFile& f : options.virtual_files)
    memory->addFile(f.path, 0,
                    llvm::MemoryBuffer::getMemBuffer(
                        llvm::StringRef(f.contents.data(), f.contents.size()),
                        f.path, /*RequiresNullTerminator=*/false));
  overlay->pushOverlay(memory);

  std::string text;
  llvm::raw_string_ostream os(text);
  auto diag_opts = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  diag_opts->ShowColors = false;
  clang::TextDiagnosticPrinter printer(os, diag_opts.get());

  State state;
  state.module.sources = sources;
  // One source at a time, in the order given, so kernels keep that order.
  // A ToolInvocation (unlike ClangTool) keeps the path as given, so
  // diagnostics and the model name files the way the user did.
  for (const std::string& src : sources) {
    std::vector<std::string> command = {"kernelc"};
    command.insert(command.end(), args.begin(), args.end());
    command.push_back(src);
    auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(
        clang::FileSystemOptions(), overlay);
    clang::tooling::ToolInvocation invocation(
        command, std::make_unique<Action>(state), files.get());
    invocation.setDiagnosticConsumer(&printer);
    invocation.run();
  }
  unsigned errors = printer.getNumErrors();
  if (errors > 0)
    os << fmt::format("{} error{} generated.\n", errors, errors == 1 ? "" : "s");
  os.flush();
  *diagnostics = text;
  if (errors > 0) return Error::User("");
  return std::move(state.module);
}

}  // namespace kernelc::frontend
