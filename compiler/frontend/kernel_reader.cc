#include "compiler/frontend/kernel_reader.h"

#include <clang/AST/Attr.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/AST/Expr.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/FileManager.h>
#include <clang/Basic/SourceManager.h>
#include <fmt/format.h>
#include <llvm/ADT/APSInt.h>
#include <llvm/ADT/StringExtras.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/expr/expr.h"
#include "compiler/frontend/annotations.h"
#include "compiler/frontend/block_features.h"
#include "compiler/frontend/grid_guard.h"
#include "compiler/frontend/constants.h"
#include "compiler/frontend/cpp_types.h"
#include "compiler/frontend/input_writes.h"
#include "compiler/frontend/locations.h"

namespace kernelc::frontend {

namespace {

using diag::Id;
using model::DType;
using model::Role;

// Whether `loc` is in the main file itself, not a header it includes.
bool InMainFile(const clang::SourceManager& sm, clang::SourceLocation loc) {
  return loc.isValid() &&
         sm.getFileID(sm.getExpansionLoc(loc)) == sm.getMainFileID();
}

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
    return frontend::InMainFile(sm_, loc);
  }

  const clang::SourceManager& sm_;
};

// Reads the kernels of one translation unit (see ReadKernels).
class KernelReader {
 public:
  KernelReader(clang::ASTContext& ctx, clang::Preprocessor& pp,
               const std::string& source, model::Module& module,
               DiagnosticAdapter& reporter, const diag::DiagnosticEngine& diags,
               const ConstantEvaluator& evaluate)
      : ctx_(ctx),
        pp_(pp),
        sm_(ctx.getSourceManager()),
        source_(source),
        module_(module),
        reporter_(reporter),
        diags_(diags),
        evaluate_(evaluate) {}

  void Run() {
    FunctionCollector collector(sm_);
    collector.TraverseDecl(ctx_.getTranslationUnitDecl());
    EvaluateMacros(collector.functions);
    const size_t kernels_before = module_.kernels.size();
    const int errors_before = diags_.error_count();
    for (const clang::FunctionDecl* fd : collector.functions) Function(fd);
    if (module_.kernels.size() == kernels_before &&
        diags_.error_count() == errors_before)
      ExplainNoKernels();
  }

 private:
  // -- Reporting ------------------------------------------------------------

  // Through the TU's DiagnosticsEngine, as Clang's own diagnostics.
  template <diag::Id kId, typename... Args>
  void Report(clang::SourceLocation loc, const Args&... args) {
    reporter_.Report(ctx_.getDiagnostics(), sm_.getFileLoc(loc),
                     diag::Make<kId>({}, args...));
  }

  diag::SourceLoc ToSourceLoc(clang::SourceLocation loc) const {
    return frontend::ToSourceLoc(loc, sm_);
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

  // Whether an error was reported in a kernel's signature: after the end of
  // the declaration before it (which takes in its leading annotations) up
  // to the start of its body. What kernelc would add about such a kernel is
  // likely an echo: Clang drops an annotation that it rejects, which then
  // reads as a missing one ("needs a role", "needs KC_GRID").
  bool ErrorInSignature(const clang::FunctionDecl* fd) const {
    const clang::Decl* self = fd;
    if (const clang::FunctionTemplateDecl* t =
            fd->getDescribedFunctionTemplate())
      self = t;
    const clang::DeclContext* dc = self->getLexicalDeclContext();
    clang::SourceLocation after;  // invalid: the start of the file
    if (const auto* d = llvm::dyn_cast<clang::Decl>(dc);
        d != nullptr && !llvm::isa<clang::TranslationUnitDecl>(d))
      after = sm_.getFileLoc(d->getBeginLoc());
    for (const clang::Decl* d : dc->decls()) {
      if (d == self) break;
      if (d->isImplicit()) continue;
      clang::SourceLocation e = sm_.getFileLoc(d->getEndLoc());
      if (e.isValid()) after = e;
    }
    diag::SourceLoc end =
        ToSourceLoc(fd->getBody() != nullptr ? fd->getBody()->getBeginLoc()
                                             : fd->getEndLoc());
    // The declaration before may end in a header the source includes.
    diag::SourceLoc begin = ToSourceLoc(after).Shifted(1);
    if (begin.file != end.file) begin = {end.file, 1, 0};
    return diags_.HasErrorIn({begin, end.Shifted(1)});
  }

  std::string TypeName(clang::QualType t) const {
    return t.getAsString(ctx_.getPrintingPolicy());
  }

  // -- Constants ------------------------------------------------------------

  // The string arguments of the kernelc annotations of `fd` and of its
  // parameters, as written.
  std::vector<model::Text> AnnotationTexts(const clang::FunctionDecl* fd) {
    std::vector<model::Text> texts;
    auto add = [&](const clang::Decl* d) {
      for (const clang::AnnotateAttr* a : KcAnnotations(d, sm_))
        for (const clang::Expr* e : a->args())
          if (std::optional<model::Text> t = TextOf(e))
            texts.push_back(std::move(*t));
    };
    add(fd);
    for (const clang::ParmVarDecl* p : fd->parameters()) add(p);
    return texts;
  }

  // The names of the kernel's parameters and template parameters: they are
  // not macros in its annotations.
  static std::set<std::string> OwnNames(const clang::FunctionDecl* fd) {
    std::set<std::string> names;
    for (const clang::ParmVarDecl* p : fd->parameters())
      names.insert(p->getName().str());
    const clang::FunctionTemplateDecl* t = fd->getDescribedFunctionTemplate();
    if (t == nullptr) t = fd->getPrimaryTemplate();
    if (t != nullptr)
      for (const clang::NamedDecl* p : *t->getTemplateParameters())
        names.insert(p->getName().str());
    return names;
  }

  // Evaluates, in one translation unit, the expansions of the macros that
  // the annotations of `functions` name.
  void EvaluateMacros(
      const std::vector<const clang::FunctionDecl*>& functions) {
    std::vector<std::string> texts;
    for (const clang::FunctionDecl* fd : functions) {
      std::set<std::string> own = OwnNames(fd);
      for (const model::Text& t : AnnotationTexts(fd))
        for (const NameUse& use : ConstantCandidates(t.text)) {
          if (own.count(use.name)) continue;
          std::optional<std::string> expansion =
              ExpandObjectMacro(pp_, use.name, fd->getLocation());
          if (expansion &&
              macro_values_.emplace(*expansion, std::nullopt).second)
            texts.push_back(*expansion);
        }
    }
    if (texts.empty()) return;
    std::vector<std::optional<int64_t>> values = evaluate_(texts);
    for (size_t i = 0; i < texts.size() && i < values.size(); ++i)
      macro_values_[texts[i]] = values[i];
  }

  // The constants of kernel `k` (defined by `fd`): its template's integer
  // arguments, and the macros its annotations name, which must be integer
  // constants.
  void Constants(const clang::FunctionDecl* fd, model::Kernel& k) {
    std::map<std::string, int64_t> constants;
    if (const clang::FunctionTemplateDecl* t = fd->getPrimaryTemplate()) {
      const clang::TemplateParameterList* params = t->getTemplateParameters();
      const clang::TemplateArgumentList* args =
          fd->getTemplateSpecializationArgs();
      for (unsigned i = 0;
           args != nullptr && i < params->size() && i < args->size(); ++i) {
        const clang::TemplateArgument& a = args->get(i);
        if (a.getKind() == clang::TemplateArgument::Integral &&
            a.getAsIntegral().getSignificantBits() <= 64)
          constants[params->getParam(i)->getName().str()] =
              a.getAsIntegral().getExtValue();
      }
    }
    std::set<std::string> own = OwnNames(fd);
    const clang::FunctionDecl* pattern = fd->getTemplateInstantiationPattern();
    if (pattern == nullptr) pattern = fd;
    for (const model::Text& t : AnnotationTexts(pattern))
      for (const NameUse& use : ConstantCandidates(t.text)) {
        if (own.count(use.name) || constants.count(use.name)) continue;
        std::optional<std::string> expansion =
            ExpandObjectMacro(pp_, use.name, pattern->getLocation());
        if (!expansion) continue;
        auto it = macro_values_.find(*expansion);
        if (it != macro_values_.end() && it->second) {
          constants[use.name] = *it->second;
          continue;
        }
        if (!reported_macros_.insert({t.loc.ToString(), use.name}).second)
          continue;
        Report<Id::kMacroNotIntegerConstant>(LocationOf(t, use.offset),
                                             use.name, k.name, *expansion);
      }
    for (const auto& [name, value] : constants)
      k.constants.push_back({name, value});
  }

  // Clang's location of the byte `offset` into annotation text `t`.
  clang::SourceLocation LocationOf(const model::Text& t, int offset) {
    clang::SourceLocation at = FromSourceLoc(t.loc);
    return at.isValid() ? at.getLocWithOffset(offset) : at;
  }

  // A source that yields no kernels may still name some: annotated but only
  // declared, or defined in a header it includes, which kernelc does not
  // read kernels from (a header may be included by many sources). Each is
  // an error where it is, so that "no kernels found" comes with its reason.
  // Only the top-level declarations are looked at: kernels live there.
  void ExplainNoKernels() {
    for (const clang::Decl* d : ctx_.getTranslationUnitDecl()->decls()) {
      const auto* fd = llvm::dyn_cast<clang::FunctionDecl>(d);
      if (fd == nullptr || fd->isImplicit() || !fd->isFirstDecl() ||
          sm_.isInSystemHeader(sm_.getFileLoc(fd->getLocation())) ||
          !HasKcAnnotations(fd))
        continue;
      const clang::FunctionDecl* def = fd->getDefinition();
      std::string name = fd->getNameAsString();
      if (def == nullptr) {
        if (InMainFile(fd->getLocation()))
          Report<Id::kKernelOnlyDeclared>(fd->getLocation(), name, source_);
        continue;
      }
      if (!InMainFile(def->getLocation()))
        Report<Id::kKernelInHeader>(
            def->getLocation(), name,
            ToSourceLoc(def->getLocation()).file, source_);
    }
  }

  // Whether any declaration of `fd` or of its parameters carries kernelc's
  // annotations of a kernel: not only __global__ as kernelc/host.h writes
  // it, nor only the marks of block-level features (kernelc's own headers
  // define functions that carry those).
  bool HasKcAnnotations(const clang::FunctionDecl* fd) const {
    for (const clang::FunctionDecl* r : fd->redecls()) {
      for (const clang::AnnotateAttr* a : KcAnnotations(r, sm_))
        if (a->getAnnotation() != kGlobal && a->getAnnotation() != kBlockFeature)
          return true;
      for (const clang::ParmVarDecl* p : r->parameters())
        if (!KcAnnotations(p, sm_).empty()) return true;
    }
    return false;
  }

  bool InMainFile(clang::SourceLocation loc) const {
    return frontend::InMainFile(sm_, loc);
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
    if (ErrorInSignature(fd)) return;
    std::string name = fd->getNameAsString();
    if (global == nullptr && host == nullptr) {
      Report<Id::kAnnotatedNonKernel>(fd->getLocation(), name);
      return;
    }
    // A __global__ function without annotations is a helper kernel that
    // other kernels launch (or nobody does): not exported.
    if (host == nullptr && !annotated) return;
    if (fd->isInvalidDecl()) return;

    if (llvm::isa<clang::CXXMethodDecl>(fd)) {
      Report<Id::kKernelIsMemberFunction>(fd->getLocation(), name);
      return;
    }
    const clang::FunctionTemplateDecl* tmpl =
        fd->getDescribedFunctionTemplate();
    if (tmpl == nullptr &&
        (fd->isTemplated() || fd->isFunctionTemplateSpecialization())) {
      Report<Id::kKernelIsTemplate>(fd->getLocation(), name);
      return;
    }
    if (global != nullptr && host != nullptr) {
      Report<Id::kKernelGlobalAndHost>(host->getLocation(), name);
      return;
    }
    const bool is_host = host != nullptr;
    if (tmpl == nullptr) {
      Read(fd, fd, is_host, std::nullopt);
      return;
    }
    // A template kernel: its explicit instantiation definitions, in source
    // order, are the op's variants.
    std::vector<const clang::FunctionDecl*> variants;
    for (const clang::FunctionDecl* spec : tmpl->specializations())
      if (spec->getTemplateSpecializationKind() ==
          clang::TSK_ExplicitInstantiationDefinition)
        variants.push_back(spec);
    std::stable_sort(
        variants.begin(), variants.end(),
        [this](const clang::FunctionDecl* a, const clang::FunctionDecl* b) {
          return sm_.isBeforeInTranslationUnit(
              sm_.getFileLoc(a->getPointOfInstantiation()),
              sm_.getFileLoc(b->getPointOfInstantiation()));
        });
    if (variants.empty()) {
      Report<Id::kTemplateKernelWithoutVariants>(
          fd->getLocation(), name, is_host ? "" : "__global__ ", name);
      return;
    }
    for (size_t i = 0; i < variants.size(); ++i) {
      model::Instantiation inst;
      inst.op = name;
      inst.variant = static_cast<int>(i);
      inst.loc = ToSourceLoc(variants[i]->getPointOfInstantiation());
      inst.args = TemplateArgs(variants[i]);
      Read(variants[i], fd, is_host, std::move(inst));
    }
  }

  // The template arguments of a variant, spelled as C++ that both the
  // CPU's compiler and NVRTC read: integers by value, types as the
  // explicit instantiation writes them, or (deduced) by their canonical
  // name, the 16-bit floats as CUDA names them.
  std::vector<std::string> TemplateArgs(const clang::FunctionDecl* spec) {
    std::vector<std::string> out;
    const clang::TemplateArgumentList* args =
        spec->getTemplateSpecializationArgs();
    const clang::ASTTemplateArgumentListInfo* written =
        spec->getTemplateSpecializationArgsAsWritten();
    clang::PrintingPolicy policy = ctx_.getPrintingPolicy();
    policy.SuppressTagKeyword = true;
    for (unsigned i = 0; args != nullptr && i < args->size(); ++i) {
      const clang::TemplateArgument& a = args->get(i);
      if (a.getKind() == clang::TemplateArgument::Integral) {
        out.push_back(llvm::toString(a.getAsIntegral(), 10));
        continue;
      }
      if (a.getKind() == clang::TemplateArgument::Type) {
        clang::QualType t = a.getAsType();
        if (written != nullptr && i < written->NumTemplateArgs &&
            written->getTemplateArgs()[i].getArgument().getKind() ==
                clang::TemplateArgument::Type)
          t = written->getTemplateArgs()[i].getTypeSourceInfo()->getType();
        TypeClass c = ClassifyType(t, ctx_);
        if (c.dtype == DType::kF16)
          out.push_back("__half");
        else if (c.dtype == DType::kBF16)
          out.push_back("__nv_bfloat16");
        else
          out.push_back(t.getAsString(policy));
        continue;
      }
      std::string text;
      llvm::raw_string_ostream os(text);
      a.print(policy, os, /*IncludeType=*/true);
      out.push_back(os.str());
    }
    return out;
  }

  // Reads kernel `fd`: a function, or a variant of the template whose
  // pattern is `pattern` (which the checks of the declaration read).
  void Read(const clang::FunctionDecl* fd, const clang::FunctionDecl* pattern,
            bool is_host, std::optional<model::Instantiation> inst) {
    std::vector<const clang::AnnotateAttr*> own = KcAnnotations(fd, sm_);
    std::string name = pattern->getNameAsString();
    model::Kernel k;
    k.name =
        inst ? fmt::format("{}<{}>", name, fmt::join(inst->args, ", ")) : name;
    k.kind = is_host ? model::KernelKind::kHost : model::KernelKind::kGlobal;
    k.source = source_;
    k.loc = ToSourceLoc(pattern->getLocation());
    const bool first = !inst || inst->variant == 0;
    k.instantiation = std::move(inst);
    Constants(fd, k);

    CheckUnique(fd, k);
    if (first) {
      if (!pattern->getDeclContext()->getRedeclContext()->isTranslationUnit())
        Report<Id::kKernelNotInGlobalNamespace>(pattern->getLocation(), name);
      if (pattern->isVariadic())
        Report<Id::kKernelIsVariadic>(pattern->getLocation(), name);
      if (!pattern->getReturnType()->isVoidType()) {
        clang::SourceLocation at =
            pattern->getReturnTypeSourceRange().getBegin();
        Report<Id::kKernelReturnsValue>(
            at.isValid() ? at : pattern->getLocation(),
            is_host ? "host" : "__global__", name,
            TypeName(pattern->getReturnType()));
      }
    }

    LaunchConfig(fd, own, k);
    for (unsigned i = 0; i < fd->getNumParams(); ++i) {
      std::optional<model::Param> p = Param(k, i, fd->getParamDecl(i));
      if (!p) continue;
      if (p->role == Role::kIn) CheckInputWrites(fd, fd->getParamDecl(i), k, *p);
      k.params.push_back(std::move(*p));
    }
    BlockUse block = FindBlockFeatures(fd, sm_);
    k.block_features = std::move(block.features);
    k.extern_shared = std::move(block.extern_shared);
    if (k.kind == model::KernelKind::kGlobal) k.guard = FindGridGuard(fd, ctx_);
    module_.kernels.push_back(std::move(k));
  }

  // A KC_IN tensor is the caller's JAX array: nothing may write through it.
  void CheckInputWrites(const clang::FunctionDecl* fd,
                        const clang::ParmVarDecl* pd, const model::Kernel& k,
                        const model::Param& p) {
    std::optional<InputWrite> w = FindInputWrite(fd, pd, ctx_);
    if (!w) return;
    WritePlace place = PlaceOf(*w, sm_);
    if (w->escapes)
      Report<Id::kInputEscapes>(place.at, k.name, p.name);
    else if (!place.callee.empty())
      Report<Id::kInputWrittenByCall>(place.at, k.name, p.name, place.callee);
    else
      Report<Id::kInputWritten>(place.at, k.name, p.name);
    if (place.through.isValid())
      Report<Id::kInputWriteThroughCall>(place.through, p.name);
  }

  void CheckUnique(const clang::FunctionDecl* fd, const model::Kernel& k) {
    if (const model::Kernel* first = module_.FindKernel(k.name)) {
      Report<Id::kDuplicateKernelName>(fd->getLocation(), k.name);
      clang::SourceLocation at = FromSourceLoc(first->loc);
      if (at.isValid()) Report<Id::kKernelFirstDefinedHere>(at, k.name);
    }
  }

  // KC_GRID and KC_BLOCK.
  void LaunchConfig(const clang::FunctionDecl* fd,
                    const std::vector<const clang::AnnotateAttr*>& own,
                    model::Kernel& k) {
    const clang::AnnotateAttr* grid = nullptr;
    const clang::AnnotateAttr* blocks = nullptr;
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
      if (name == kGrid || name == kBlocks || name == kBlock ||
          name == kSharedBytes) {
        if (k.kind == model::KernelKind::kHost) {
          Report<Id::kLaunchAnnotationOnHostKernel>(a->getLocation(),
                                                    SpelledName(name), k.name);
          continue;
        }
        const clang::AnnotateAttr*& slot = name == kGrid     ? grid
                                           : name == kBlocks ? blocks
                                           : name == kBlock  ? block
                                                             : shared;
        if (slot != nullptr) {
          Report<Id::kKernelAnnotationRepeated>(a->getLocation(), k.name,
                                                SpelledName(name));
          continue;
        }
        slot = a;
      } else if (IsParamAnnotation(name)) {
        Report<Id::kParamAnnotationOnKernel>(a->getLocation(),
                                             SpelledName(name), k.name);
      } else {
        Report<Id::kUnknownKernelAnnotation>(a->getLocation(), name.str(),
                                             k.name);
      }
    }
    if (k.kind == model::KernelKind::kHost) return;

    if (shared != nullptr) {
      std::optional<model::Text> t;
      if (shared->args_size() == 1) t = TextOf(*shared->args_begin());
      if (t)
        k.shared_bytes = std::move(*t);
      else
        Report<Id::kSharedBytesArgument>(shared->getLocation(), k.name);
    }

    if (grid != nullptr && blocks != nullptr) {
      Report<Id::kGridAndBlocks>(blocks->getLocation(), k.name);
      return;
    }
    bool grid_ok = false;
    k.grid_in_blocks = blocks != nullptr;
    if (blocks != nullptr) grid = blocks;
    if (grid == nullptr) {
      Report<Id::kGlobalKernelNeedsGrid>(fd->getLocation(), k.name);
    } else if (grid->args_size() < 1 || grid->args_size() > 3) {
      Report<Id::kGridArity>(
          grid->getLocation(), SpelledName(grid->getAnnotation()).str(), k.name,
          k.grid_in_blocks ? "blocks" : "threads", grid->args_size());
    } else {
      grid_ok = StringArguments(grid, k.name, k.grid);
    }

    if (block == nullptr) return;
    static constexpr const char* kAxes[] = {"x", "y", "z"};
    std::vector<int64_t> sizes;
    bool sizes_ok = true;
    unsigned i = 0;
    for (const clang::Expr* e : block->args()) {
      ++i;
      std::optional<llvm::APSInt> v = BlockSize(e, k);
      if (!v) {
        Report<Id::kBlockArgumentNotConstant>(e->getBeginLoc(), i, k.name);
        sizes_ok = false;
        continue;
      }
      if ((v->isSigned() && v->isNegative()) || *v == 0) {
        Report<Id::kBlockSizeNotPositive>(e->getBeginLoc(), k.name,
                                          llvm::toString(*v, 10),
                                          i <= 3 ? kAxes[i - 1] : "?");
        sizes_ok = false;
        continue;
      }
      // Anything wider than 32 bits is over the limit below anyway.
      sizes.push_back(v->getActiveBits() > 32
                          ? int64_t{1} << 32
                          : static_cast<int64_t>(v->getZExtValue()));
    }
    if (grid_ok && block->args_size() != grid->args_size()) {
      Report<Id::kBlockGridMismatch>(
          block->getLocation(), k.name, block->args_size(),
          block->args_size() == 1 ? "" : "s", grid->args_size());
      return;
    }
    if (!sizes_ok || !grid_ok) return;
    int64_t threads = 1;
    for (int64_t s : sizes) threads = std::min<int64_t>(threads * s, 1 << 30);
    if (threads > 1024) {
      Report<Id::kBlockTooLarge>(block->getLocation(), k.name, threads);
      return;
    }
    k.block = std::move(sizes);
  }

  // A KC_BLOCK argument: a C++ integer constant expression (a template
  // parameter's in a variant), or a string of the expression language
  // whose names are the kernel's constants ("BLOCK", "TILE * 2").
  std::optional<llvm::APSInt> BlockSize(const clang::Expr* e,
                                        const model::Kernel& k) {
    if (std::optional<model::Text> t = TextOf(e)) {
      auto parsed = expr::Parse(t->text);
      if (std::holds_alternative<expr::ParseError>(parsed)) return std::nullopt;
      expr::Evaluation v = expr::Evaluate(
          std::get<expr::NodePtr>(parsed),
          [&k](const expr::Node& leaf) -> std::optional<int64_t> {
            const model::Constant* c = leaf.kind == expr::Node::Kind::kName
                                           ? k.FindConstant(leaf.name)
                                           : nullptr;
            if (c == nullptr) return std::nullopt;
            return c->value;
          });
      if (!v.value) return std::nullopt;
      return llvm::APSInt(llvm::APInt(64, static_cast<uint64_t>(*v.value),
                                      /*isSigned=*/true),
                          /*isUnsigned=*/false);
    }
    clang::Expr::EvalResult r;
    if (e->isValueDependent() || !e->EvaluateAsInt(r, ctx_))
      return std::nullopt;
    return r.Val.getInt();
  }

  // KC_VJP("bwd") and KC_PARALLEL("m", ...): string literals, read as
  // written; sema checks what they name.
  void Autodiff(const clang::AnnotateAttr* a, model::Kernel& k) {
    const bool jvp = a->getAnnotation() == kJvp;
    const bool vjp = a->getAnnotation() == kVjp || jvp;
    const llvm::StringRef spelled = SpelledName(a->getAnnotation());
    if (vjp && (jvp ? k.jvp : k.vjp)) {
      Report<Id::kKernelAnnotationRepeated>(a->getLocation(), k.name,
                                            spelled.str());
      return;
    }
    if (a->args_size() < 1 || (vjp && a->args_size() != 1)) {
      if (jvp)
        Report<Id::kJvpArity>(a->getLocation(), k.name);
      else if (vjp)
        Report<Id::kVjpArity>(a->getLocation(), k.name);
      else
        Report<Id::kParallelArity>(a->getLocation(), k.name);
      return;
    }
    std::vector<model::Text> texts;
    StringArguments(a, k.name, texts);
    if (!vjp)
      k.parallel.insert(k.parallel.end(), texts.begin(), texts.end());
    else if (!texts.empty())
      (jvp ? k.jvp : k.vjp) = std::move(texts[0]);
  }

  // Appends the string-literal arguments of kernel annotation `a` to
  // `out`, and reports each other argument; false when there was one.
  bool StringArguments(const clang::AnnotateAttr* a, const std::string& kernel,
                       std::vector<model::Text>& out) {
    bool all = true;
    unsigned i = 0;
    for (const clang::Expr* e : a->args()) {
      ++i;
      if (std::optional<model::Text> t = TextOf(e)) {
        out.push_back(std::move(*t));
        continue;
      }
      Report<Id::kAnnotationArgumentNotString>(
          e->getBeginLoc(), i, SpelledName(a->getAnnotation()).str(), kernel);
      all = false;
    }
    return all;
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
      Report<Id::kParamUnnamed>(at, index + 1, kn);
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
    const clang::AnnotateAttr* traced = nullptr;
    const clang::AnnotateAttr* optional = nullptr;
    const clang::AnnotateAttr* sum = nullptr;
    bool ok = true;
    for (const clang::AnnotateAttr* a : KcAnnotations(pd, sm_)) {
      llvm::StringRef name = a->getAnnotation();
      if (IsRoleAnnotation(name)) {
        if (role != nullptr) {
          Report<Id::kParamRolesRepeated>(a->getLocation(), pn, kn,
                                          SpelledName(role->getAnnotation()),
                                          SpelledName(name));
          ok = false;
          continue;
        }
        role = a;
      } else if (name == kShape || name == kInit || name == kTraced ||
                 name == kOptional || name == kSum) {
        const clang::AnnotateAttr*& slot = name == kShape      ? shape
                                           : name == kInit     ? init
                                           : name == kTraced   ? traced
                                           : name == kOptional ? optional
                                                               : sum;
        if (slot != nullptr) {
          Report<Id::kParamAnnotationRepeated>(a->getLocation(), pn, kn,
                                               SpelledName(name));
          ok = false;
          continue;
        }
        slot = a;
      } else if (IsFunctionAnnotation(name) || name == kBlockFeature) {
        Report<Id::kKernelAnnotationOnParam>(a->getLocation(),
                                             SpelledName(name), pn, kn);
        ok = false;
      } else {
        Report<Id::kUnknownParamAnnotation>(a->getLocation(), name.str(), pn,
                                            kn);
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
        Report<Id::kDerivedNotInteger>(pd->getLocation(), pn, kn,
                                       TypeName(type));
        ok = false;
      } else {
        p.role = Role::kDerived;
        p.dtype = *c.dtype;
        p.derived = RoleText(role, pn, kn);
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
        Report<Id::kRoleOnView>(role->getLocation(), SpelledName(role_name), pn,
                                kn);
        ok = false;
      }
      if (view->rank < 0) {
        Report<Id::kViewNegativeRank>(pd->getLocation(), pn, kn, view->rank);
        ok = false;
      }
      p.rank = static_cast<int>(view->rank);
      if (!ElementType(pd, view->element, pn, kn, &p.dtype)) ok = false;
      if (shape != nullptr) {
        p.shape = RoleText(shape, pn, kn);
        if (!p.shape) ok = false;
      } else if (view->role == Role::kOut && role == nullptr) {
        Report<Id::kOutputViewNeedsShape>(pd->getLocation(), pn, kn);
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
        Report<Id::kOutputPointsToConst>(pd->getLocation(),
                                         SpelledName(role_name), pn, kn);
        ok = false;
      }
      if (!ElementType(pd, pointee, pn, kn, &p.dtype)) ok = false;
      p.shape = RoleText(role, pn, kn);
      if (!p.shape) ok = false;
      if (shape != nullptr) {
        ShapeOnNonViewError(shape, pn, kn);
        ok = false;
      }
    } else if (pointer != nullptr) {
      if (shape != nullptr) {
        ShapeOnNonViewError(shape, pn, kn);
      } else {
        Report<Id::kPointerNeedsRole>(pd->getLocation(), pn, kn);
      }
      ok = false;
    } else if (role != nullptr) {
      Report<Id::kRoleNeedsPointer>(role->getLocation(), SpelledName(role_name),
                                    pn, kn, TypeName(type));
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
        Report<Id::kHalfScalar>(pd->getLocation(), pn, kn, TypeName(type));
        ok = false;
      } else if (c.dtype) {
        p.dtype = *c.dtype;
      } else if (canonical->isBuiltinType()) {
        Report<Id::kUnsupportedScalarType>(pd->getLocation(), pn, kn,
                                           TypeName(type));
        ok = false;
      } else {
        Report<Id::kUnsupportedParamType>(pd->getLocation(), pn, kn,
                                          TypeName(type));
        ok = false;
      }
      if (shape != nullptr) {
        ShapeOnNonViewError(shape, pn, kn);
        ok = false;
      }
    }

    if (traced != nullptr) {
      if (p.role != Role::kScalar || role != nullptr || view) {
        Report<Id::kTracedNotScalar>(traced->getLocation(), pn, kn);
        ok = false;
      }
      p.traced = true;
    }
    if (optional != nullptr) {
      const bool input = view ? view->role == Role::kIn
                              : pointer != nullptr && role_name == kIn;
      if (!input) {
        Report<Id::kOptionalNotInput>(optional->getLocation(), pn, kn);
        ok = false;
      }
      p.optional = true;
    }
    // KC_SUM's checks (an output, a parallel dimension it lacks) are sema's,
    // which sees specs read from JSON too.
    if (sum != nullptr) {
      p.sum = RoleText(sum, pn, kn);
      if (!p.sum) ok = false;
    }
    if (init != nullptr) {
      if (!is_out) {
        Report<Id::kInitOnNonOutput>(init->getLocation(), pn, kn);
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
    Report<Id::kPlainChar>(pd->getLocation(), pn, kn);
  }

  void ShapeOnNonViewError(const clang::AnnotateAttr* shape,
                           const std::string& pn, const std::string& kn) {
    Report<Id::kShapeOnNonView>(shape->getLocation(), pn, kn);
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
      Report<Id::kUnsupportedElementType>(
          pd->getLocation(), pn, kn, TypeName(element.getUnqualifiedType()));
      return false;
    }
    *out = *c.dtype;
    return true;
  }

  // The one string argument of KC_IN/KC_INMUT/KC_OUT/KC_SHAPE (the shape)
  // or KC_DERIVED (the expression).
  std::optional<model::Text> RoleText(const clang::AnnotateAttr* a,
                                      const std::string& pn,
                                      const std::string& kn) {
    std::optional<model::Text> t;
    if (a->args_size() == 1) t = TextOf(*a->args_begin());
    if (!t) {
      clang::SourceLocation at = a->args_size() == 1
                                     ? (*a->args_begin())->getBeginLoc()
                                     : a->getLocation();
      if (a->getAnnotation() == kDerived)
        Report<Id::kDerivedNotString>(at, pn, kn);
      else if (a->getAnnotation() == kSum)
        Report<Id::kSumNotString>(at, pn, kn);
      else
        Report<Id::kShapeNotString>(at, SpelledName(a->getAnnotation()), pn,
                                    kn);
    }
    return t;
  }

  std::optional<model::Text> InitText(const clang::AnnotateAttr* a,
                                      const std::string& pn,
                                      const std::string& kn) {
    if (a->args_size() != 1) {
      Report<Id::kInitArity>(a->getLocation(), pn, kn);
      return std::nullopt;
    }
    const clang::Expr* e = *a->args_begin();
    clang::Expr::EvalResult r;
    std::optional<std::string> text;
    if (!e->isValueDependent() && e->EvaluateAsRValue(r, ctx_))
      text = ConstantText(r.Val);
    if (!text) {
      Report<Id::kInitNotConstant>(e->getBeginLoc(), pn, kn);
      return std::nullopt;
    }
    return model::Text{std::move(*text), ToSourceLoc(e->getBeginLoc())};
  }

  clang::ASTContext& ctx_;
  clang::Preprocessor& pp_;
  clang::SourceManager& sm_;
  const std::string& source_;
  model::Module& module_;
  DiagnosticAdapter& reporter_;
  const diag::DiagnosticEngine& diags_;
  const ConstantEvaluator& evaluate_;
  // The value of each macro expansion the annotations name (EvaluateMacros).
  std::map<std::string, std::optional<int64_t>> macro_values_;
  // Macros reported as not constant, by annotation and name: once for all
  // variants of a template.
  std::set<std::pair<std::string, std::string>> reported_macros_;
};

}  // namespace

void ReadKernels(clang::ASTContext& ctx, clang::Preprocessor& pp,
                 const std::string& source, model::Module& module,
                 DiagnosticAdapter& reporter,
                 const diag::DiagnosticEngine& diags,
                 const ConstantEvaluator& evaluate) {
  KernelReader(ctx, pp, source, module, reporter, diags, evaluate).Run();
}

}  // namespace kernelc::frontend
