// The frontend's Clang session: ParseSources sets up Clang's invocation
// for each source (the dialect it is read in, kernelc's headers in an
// in-memory file system over the real one, the include paths), records the
// files it reads and the first CUDA toolkit header that a source read as
// the CPU sees it includes, and hands each translation unit to the kernel
// reader (kernel_reader.h). Clang's diagnostics reach the engine through a
// DiagnosticAdapter.
#include "compiler/frontend/frontend.h"

#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ASTContext.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/FileManager.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Basic/Version.h>
#include <clang/Driver/Driver.h>
#include <clang/Frontend/ASTUnit.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Frontend/Utils.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Tooling/Tooling.h>
#include <fmt/format.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/cache/build_cache.h"
#include "compiler/diag/engine.h"
#include "compiler/frontend/declarations.h"
#include "compiler/frontend/diagnostic_adapter.h"
#include "compiler/frontend/host_code.h"
#include "compiler/frontend/kernel_reader.h"
#include "compiler/frontend/locations.h"
#include "compiler/util/file_io.h"
#include "runtime/embedded_headers.h"

// The LLVM installation whose clang driver and resource directory
// (stddef.h, ...) the frontend parses with: the one it links against, which
// @llvm//:clang_tooling names.
#ifndef KERNELC_LLVM_PREFIX
#error "KERNELC_LLVM_PREFIX must name the LLVM installation"
#endif

namespace kernelc::frontend {
namespace {

// Read as the CPU sees it, the source being parsed included `header` of
// the CUDA toolkit at `loc` (a file location): its first error is then
// followed by one naming the header, the likely cause, at the #include:
// right after that error, which may be the last (a fatal "file not found"),
// before the errors that follow from it.
struct ToolkitInclude {
  clang::SourceLocation loc;
  std::string header;
  bool reported = false;

  bool seen() const { return loc.isValid() || reported; }
};

// An #include of a C or C++ library header, which NVRTC does not have: its
// directive, in a file of the user's.
struct LibraryInclude {
  std::string file;  // the including file, as Clang names it
  Span span;         // from '#' to the end of the header's name
};

// What reads a source's translation unit, once Clang has parsed it: the
// kernel reader, or what a caller of Parse reads instead.
using TuReader =
    std::function<void(clang::ASTContext& ctx, clang::Preprocessor& pp,
                       const std::string& source)>;

// State shared by the sources of one parse.
struct Session {
  // Where the parse under way reports (a scratch engine for a parse that
  // may be retried), and the client of its Clang engine.
  diag::DiagnosticEngine* diags = nullptr;
  DiagnosticAdapter* adapter = nullptr;
  model::Module module;
  // The parse under way: in Clang's CUDA mode; what reads its translation
  // unit (none when it only finds a whole .cu file's host code).
  bool cuda = false;
  TuReader read;
  // What the parse under way found: the host-only code of the user's files
  // (CUDA mode only), the #include directives of library headers, and the
  // name by which each user header was included ("common.h").
  std::map<std::string, std::vector<Span>> host_code;
  std::vector<LibraryInclude> library_includes;
  std::map<std::string, std::string> include_names;
  std::set<std::string> dependencies;  // non-system files read, as named
  // Read as the CPU sees a source: the CUDA toolkit's include directories
  // (real paths), whose headers other than kernelc's stand-ins need a CUDA
  // compiler.
  std::vector<std::string> toolkit_dirs;
  ToolkitInclude toolkit_include;  // of the source being parsed
  ConstantEvaluator evaluate;      // of the macros annotations name
  // Where precompiled headers are kept (Options::prelude_dir): what is
  // read from there is kernelc's, not a dependency of the sources.
  std::string prelude_dir;

  // Whether a real path is under one of toolkit_dirs.
  bool InToolkit(llvm::StringRef path) const {
    for (const std::string& dir : toolkit_dirs)
      if (path.starts_with(dir + "/")) return true;
    return false;
  }

  // After Clang's first error in a source that included a toolkit header.
  void ReportToolkitInclude(const clang::SourceManager& sm) {
    if (toolkit_include.loc.isInvalid()) return;
    diag::Diagnostic d = diag::Make<diag::Id::kToolkitHeaderNeedsCuda>(
        {}, toolkit_include.header);
    Locate(d, toolkit_include.loc, sm);
    diags->Add(std::move(d));
    toolkit_include.loc = clang::SourceLocation();
    toolkit_include.reported = true;
  }
};

// Records the first #include that resolves into the CUDA toolkit's
// directories, or that names a file found only there. Only kernelc's
// stand-ins of <cuda_runtime.h>, <cuda_fp16.h>, <cuda_bf16.h> and
// <cooperative_groups.h> (and of the headers they include) are read as the
// CPU sees a source; a toolkit header
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
    if (session_.toolkit_include.seen()) return;
    llvm::SmallString<256> real;
    bool in_toolkit = false;
    if (file) {
      in_toolkit =
          !llvm::sys::fs::real_path(file->getName(), real) && session_.InToolkit(real);
    } else {
      for (const std::string& dir : session_.toolkit_dirs)
        in_toolkit = in_toolkit || llvm::sys::fs::exists(dir + "/" + name);
    }
    if (in_toolkit)
      session_.toolkit_include = {sm_.getFileLoc(range.getBegin()), name.str()};
  }

 private:
  const clang::SourceManager& sm_;
  Session& session_;
};

// The headers kernelc gives NVRTC in place of the C and C++ library's.
bool NvrtcHasHeader(llvm::StringRef name) {
  static const char* const kOwn[] = {
      "stdint.h", "stddef.h", "math.h", "float.h", "limits.h",
      "cstdint",  "cstddef",  "cmath",  "cfloat",  "climits"};
  for (const char* own : kOwn)
    if (name == own) return true;
  return name.starts_with("kernelc");
}

// Records, in the user's files, the #include directives of system headers
// that are neither the CUDA toolkit's nor kernelc's (NVRTC has none of
// them), and the name by which each user header is included.
class IncludeRecorder : public clang::PPCallbacks {
 public:
  IncludeRecorder(const clang::SourceManager& sm, Session& session)
      : sm_(sm), session_(session) {}

  void InclusionDirective(clang::SourceLocation hash, const clang::Token&,
                          llvm::StringRef name, bool angled,
                          clang::CharSourceRange,
                          clang::OptionalFileEntryRef file, llvm::StringRef,
                          llvm::StringRef, const clang::Module*, bool,
                          clang::SrcMgr::CharacteristicKind kind) override {
    if (!file || hash.isMacroID() || sm_.isInSystemHeader(hash)) return;
    // kernelc's own headers reach NVRTC as they are, under their names.
    auto includer = sm_.getFileEntryRefForID(sm_.getFileID(hash));
    if (!includer || includer->getName().starts_with(kVirtualRoot)) return;
    if (!clang::SrcMgr::isSystem(kind)) {
      if (!angled && !file->getName().starts_with(kVirtualRoot))
        session_.include_names[file->getName().str()] = name.str();
      return;
    }
    llvm::SmallString<256> real;
    if (NvrtcHasHeader(name) || file->getName().starts_with(kVirtualRoot) ||
        (!llvm::sys::fs::real_path(file->getName(), real) && session_.InToolkit(real)))
      return;
    // To the end of the line: the directive, and a comment after it.
    const clang::FileID fid = sm_.getFileID(hash);
    const unsigned begin = sm_.getFileOffset(hash);
    llvm::StringRef text = sm_.getBufferData(fid);
    size_t end = text.find('\n', begin);
    if (end == llvm::StringRef::npos) end = text.size();
    session_.library_includes.push_back(
        {includer->getName().str(), {begin, static_cast<unsigned>(end)}});
  }

 private:
  const clang::SourceManager& sm_;
  Session& session_;
};

class KernelConsumer : public clang::ASTConsumer {
 public:
  KernelConsumer(Session& session, clang::Preprocessor& pp,
                 const std::string& source)
      : session_(session), pp_(pp), source_(source) {}

  // After the whole TU: template instantiations needed by kernels are done.
  // After a fatal error Clang reports nothing more, and the AST is missing
  // what it could not read: the kernels are not read either.
  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    if (ctx.getDiagnostics().hasFatalErrorOccurred()) return;
    if (session_.cuda) session_.host_code = HostOnlyCode(ctx);
    if (session_.read) session_.read(ctx, pp_, source_);
  }

 private:
  Session& session_;
  clang::Preprocessor& pp_;
  const std::string& source_;
};

class KernelAction : public clang::ASTFrontendAction {
 public:
  KernelAction(Session& session, const std::string& source)
      : session_(session), source_(source) {}

 protected:
  bool BeginSourceFileAction(clang::CompilerInstance& ci) override {
    if (!session_.cuda && !session_.toolkit_dirs.empty())
      ci.getPreprocessor().addPPCallbacks(
          std::make_unique<ToolkitIncludeRecorder>(ci.getSourceManager(),
                                                   session_));
    ci.getPreprocessor().addPPCallbacks(
        std::make_unique<IncludeRecorder>(ci.getSourceManager(), session_));
    return true;
  }

  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(
      clang::CompilerInstance& ci, llvm::StringRef) override {
    return std::make_unique<KernelConsumer>(session_, ci.getPreprocessor(),
                                            source_);
  }

 private:
  Session& session_;
  const std::string& source_;
};

// Sets `ci` up for `invocation` as tooling's FrontendActionFactory does,
// except that the compiler instance's own summary line ("1 error
// generated.") goes nowhere instead of to stderr: this library never
// prints, and the diagnostics engine counts the errors.
bool SetUpQuietly(clang::CompilerInstance& ci,
                  std::shared_ptr<clang::CompilerInvocation> invocation,
                  clang::FileManager* files,
                  clang::DiagnosticConsumer* consumer) {
  ci.setInvocation(std::move(invocation));
  ci.setFileManager(files);
  ci.setVerboseOutputStream(std::make_unique<llvm::raw_null_ostream>());
  ci.createDiagnostics(consumer, /*ShouldOwnClient=*/false);
  if (!ci.hasDiagnostics()) return false;
  ci.createSourceManager(*files);
  return true;
}

// Runs KernelAction, quietly (SetUpQuietly).
class QuietToolAction : public clang::tooling::ToolAction {
 public:
  QuietToolAction(Session& session, const std::string& source)
      : session_(session), source_(source) {}

  bool runInvocation(std::shared_ptr<clang::CompilerInvocation> invocation,
                     clang::FileManager* files,
                     std::shared_ptr<clang::PCHContainerOperations> pch,
                     clang::DiagnosticConsumer* consumer) override {
    clang::CompilerInstance ci(std::move(pch));
    // Declared after `ci`, so that it is destroyed first.
    KernelAction action(session_, source_);
    if (!SetUpQuietly(ci, std::move(invocation), files, consumer))
      return false;
    session_.toolkit_include = {};
    // Without system headers (kernelc's own are on the system path): what a
    // build cache must re-check besides the toolchain's identity.
    auto collector = std::make_shared<clang::DependencyCollector>();
    ci.addDependencyCollector(collector);
    bool ok = ci.ExecuteAction(action);
    // kernelc's own headers are on the path with -I, but are kernelc's
    // identity, not the user's files.
    for (const std::string& d : collector->getDependencies())
      if (!llvm::StringRef(d).starts_with(kVirtualRoot) &&
          (session_.prelude_dir.empty() ||
           !llvm::StringRef(d).starts_with(session_.prelude_dir + "/")))
        session_.dependencies.insert(d);
    files->clearStatCache();
    return ok;
  }

 private:
  Session& session_;
  const std::string& source_;
};

// Whether `text`, a source, opens with #include <kernelc.h> (or
// "kernelc.h" where the source's directory has no kernelc.h of its own),
// after nothing but blank space and comments: read after kernelc.h's
// precompiled header, it then reads as it would alone.
bool OpensWithKernelcH(llvm::StringRef text, llvm::StringRef source,
                       llvm::vfs::FileSystem& fs) {
  for (;;) {
    text = text.ltrim();
    if (text.consume_front("//")) {
      text = text.drop_until([](char c) { return c == '\n'; });
    } else if (text.consume_front("/*")) {
      size_t end = text.find("*/");
      if (end == llvm::StringRef::npos) return false;
      text = text.drop_front(end + 2);
    } else {
      break;
    }
  }
  if (!text.consume_front("#")) return false;
  text = text.ltrim(" \t");
  if (!text.consume_front("include")) return false;
  text = text.ltrim(" \t");
  if (text.consume_front("<kernelc.h>")) return true;
  if (!text.consume_front("\"kernelc.h\"")) return false;
  llvm::SmallString<256> local(llvm::sys::path::parent_path(source));
  llvm::sys::path::append(local, "kernelc.h");
  return !fs.exists(local);
}

// The inputs of a precompiled header, one per line: "size mtime path"
// (seconds), as Clang checks them when it loads the header.
std::string DescribeInputs(const std::set<std::string>& paths) {
  std::string text;
  for (const std::string& path : paths) {
    llvm::sys::fs::file_status st;
    if (llvm::sys::fs::status(path, st)) return "";
    text += fmt::format(
        "{} {} {}\n", st.getSize(),
        llvm::sys::toTimeT(st.getLastModificationTime()), path);
  }
  return text;
}

// Whether the inputs that `manifest` describes are all as they were.
bool InputsUnchanged(const std::string& manifest) {
  std::optional<std::string> text = ReadFile(manifest);
  if (!text || text->empty()) return false;
  std::set<std::string> paths;
  for (llvm::StringRef line : llvm::split(llvm::StringRef(*text).rtrim('\n'), '\n')) {
    llvm::StringRef path = line.split(' ').second.split(' ').second;
    if (path.empty()) return false;
    paths.insert(path.str());
  }
  return DescribeInputs(paths) == *text;
}

// Runs GeneratePCHAction over an invocation, recording every file it reads
// outside kernelc's own in-memory headers, system headers among them.
class PchToolAction : public clang::tooling::ToolAction {
 public:
  bool runInvocation(std::shared_ptr<clang::CompilerInvocation> invocation,
                     clang::FileManager* files,
                     std::shared_ptr<clang::PCHContainerOperations> pch,
                     clang::DiagnosticConsumer* consumer) override {
    clang::CompilerInstance ci(std::move(pch));
    clang::GeneratePCHAction action;
    if (!SetUpQuietly(ci, std::move(invocation), files, consumer))
      return false;
    auto collector = std::make_shared<AllFiles>();
    ci.addDependencyCollector(collector);
    const bool ok = ci.ExecuteAction(action);
    for (const std::string& d : collector->getDependencies())
      if (!llvm::StringRef(d).starts_with(kVirtualRoot)) inputs.insert(d);
    return ok;
  }

  std::set<std::string> inputs;

 private:
  struct AllFiles : clang::DependencyCollector {
    bool needSystemDependencies() override { return true; }
  };
};

// kernelc.h precompiled for a parse with `flags` (the arguments between
// the language and the source), under `dir`, made when missing or when a
// file it read has changed since; nullopt when it cannot be made. The file
// is named by the flags, which hold everything that shapes how kernelc.h
// reads (the language, -D, -I, the dialect's macros); Clang checks the
// rest when it loads it. kernelc.h, with the CPU's view of CUDA's
// built-ins (<math.h>, <memory>), is most of a small source's parse.
std::optional<std::string> KernelcHPrecompiled(
    const std::string& clang_path, const std::vector<std::string>& flags,
    const std::string& dir,
    llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs) {
  cache::KeyBuilder name;
  for (const std::string& flag : flags) name.Add("flag", flag);
  const std::string base = fmt::format("{}/frontend-{}", dir, name.Finish());
  const std::string pch = base + ".pch";
  if (llvm::sys::fs::exists(pch) && InputsUnchanged(base + ".inputs"))
    return pch;
  if (!WriteFileIfChanged(base + ".h", "#include <kernelc.h>\n").ok())
    return std::nullopt;
  const bool made = MakeFileInPlace(pch, [&](const std::string& temp) {
    std::vector<std::string> args = {clang_path, "-x", "c++-header"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"-o", temp, "--", base + ".h"});
    auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(
        clang::FileSystemOptions(), fs);
    PchToolAction action;
    clang::tooling::ToolInvocation invocation(
        std::move(args), &action, files.get(),
        std::make_shared<clang::PCHContainerOperations>());
    clang::IgnoringDiagConsumer ignore;
    invocation.setDiagnosticConsumer(&ignore);
    if (!invocation.run()) return false;
    const std::string manifest = DescribeInputs(action.inputs);
    return !manifest.empty() &&
           WriteFileIfChanged(base + ".inputs", manifest).ok();
  });
  if (!made) return std::nullopt;
  return pch;
}

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

// Evaluates macro expansions with the Clang that parses the sources, in a
// translation unit of their own (see ConstantEvaluator). Its diagnostics
// are not the user's: an expansion that does not compile is no constant.
std::vector<std::optional<int64_t>> EvaluateConstants(
    const std::vector<std::string>& texts, const std::string& clang_path,
    const std::string& resource_dir) {
  std::string code = "#include <stddef.h>\n#include <stdint.h>\n";
  for (size_t i = 0; i < texts.size(); ++i)
    code += fmt::format("constexpr auto kc_constant_{} = ({});\n", i, texts[i]);
  clang::IgnoringDiagConsumer ignore;
  std::unique_ptr<clang::ASTUnit> ast =
      clang::tooling::buildASTFromCodeWithArgs(
          code, {"-std=c++17", "-w", "-resource-dir", resource_dir},
          "kernelc-constants.cc", clang_path,
          std::make_shared<clang::PCHContainerOperations>(),
          clang::tooling::getClangStripDependencyFileAdjuster(), {}, &ignore);
  std::vector<std::optional<int64_t>> values(texts.size());
  if (!ast) return values;
  for (const clang::Decl* d :
       ast->getASTContext().getTranslationUnitDecl()->decls()) {
    const auto* v = llvm::dyn_cast<clang::VarDecl>(d);
    if (v == nullptr || v->isInvalidDecl() ||
        !v->getName().starts_with("kc_constant_"))
      continue;
    size_t i = 0;
    if (v->getName().drop_front(12).getAsInteger(10, i) || i >= texts.size())
      continue;
    const clang::APValue* value = v->evaluateValue();
    if (value == nullptr || !value->isInt()) continue;
    const llvm::APSInt& n = value->getInt();
    if (n.isSigned() ? n.getSignificantBits() <= 64 : n.getActiveBits() <= 63)
      values[i] = n.getExtValue();
  }
  return values;
}

// Parses each source as ParseSources says; `read`, when set, reads each
// translation unit instead of the kernel reader, which fills the module.
Result<model::Module> Parse(const std::vector<std::string>& sources,
                            const Options& options,
                            diag::DiagnosticEngine& diags, TuReader read) {
  const std::string clang_path = KERNELC_LLVM_PREFIX "/bin/clang";
  const std::string resource_dir =
      options.resource_dir.empty()
          ? clang::driver::Driver::GetResourcesPath(clang_path)
          : options.resource_dir;
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

  const bool cuda = options.dialect == Options::Dialect::kCudaDevice;
  Session session;
  session.module.sources = sources;
  session.prelude_dir = options.prelude_dir;
  if (!read) {
    read = [&session](clang::ASTContext& ctx, clang::Preprocessor& pp,
                      const std::string& source) {
      ReadKernels(ctx, pp, source, session.module, *session.adapter,
                  *session.diags, session.evaluate);
    };
  }
  for (const std::string& dir : options.cuda_include_dirs) {
    llvm::SmallString<256> real;
    if (!llvm::sys::fs::real_path(dir, real))
      session.toolkit_dirs.push_back(std::string(real));
  }
  session.evaluate = [&clang_path,
                      &resource_dir](const std::vector<std::string>& texts) {
    return EvaluateConstants(texts, clang_path, resource_dir);
  };

  // One parse of `source`, in Clang's CUDA mode or as the CPU sees it, over
  // the file system `fs`, reporting to `target`; `reader` reads its
  // translation unit, when set. With `pch` set, kernelc.h is read
  // precompiled where the source allows it, and *pch names the header
  // read (empty: none).
  auto parse_once = [&](const std::string& source, bool cuda_mode,
                        llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs,
                        diag::DiagnosticEngine& target,
                        const TuReader& reader, std::string* pch) -> Status {
    DiagnosticAdapter adapter(target);
    adapter.set_error_hook([&session](const clang::SourceManager& sm) {
      session.ReportToolkitInclude(sm);
    });
    session.diags = &target;
    session.adapter = &adapter;
    session.cuda = cuda_mode;
    session.read = reader;
    session.host_code.clear();
    session.library_includes.clear();
    session.include_names.clear();
    // The language, then the flags a precompiled kernelc.h is made with.
    std::vector<std::string> args = {clang_path, "-fsyntax-only"};
    if (cuda_mode) {
      std::vector<std::string> device = CudaDeviceArgs(options.cuda_arch);
      args.insert(args.end(), device.begin(), device.end());
    } else {
      args.insert(args.end(), {"-x", "c++"});
    }
    const size_t flags_begin = args.size();
    args.insert(args.end(),
                {"-std=c++17", "-D__KERNELC_FRONTEND__", "-resource-dir",
                 resource_dir, "-fno-color-diagnostics",
                 "-fno-diagnostics-show-line-numbers", "-ferror-limit=0",
                 // Warnings are the backends' to report, when they
                 // compile the source.
                 "-w"});
    if (!options.sysroot.empty())
      args.push_back("--sysroot=" + options.sysroot);
    // kernelc's headers come first, as -I (which Clang searches before any
    // -isystem): read as the CPU sees it, a source's <cuda_fp16.h> is
    // kernelc's stand-in even when -I names the CUDA toolkit's include
    // directory. In CUDA mode only kernelc.h is kernelc's; the toolkit's
    // headers are the real ones.
    args.push_back("-I" + options.kernelc_include_dir);
    if (!cuda_mode) {
      args.push_back("-I" + options.host_include_dir);
      // The cooperative-groups stand-ins are read as system headers, as
      // CUDA's are in CUDA mode: the block-level features used inside them
      // are reported at the user's call.
      args.insert(args.end(),
                  {"--system-header-prefix=cooperative_groups.h",
                   "--system-header-prefix=cooperative_groups/"});
    }
    for (const std::string& dir : options.include_dirs)
      args.push_back("-I" + dir);
    if (cuda_mode) {
      args.insert(args.end(), {"-isystem", options.cuda_shim_dir});
      for (const std::string& dir : options.cuda_include_dirs)
        args.insert(args.end(), {"-isystem", dir});
      // Clang's CUDA runtime wrapper, which -nocudainc leaves out, after
      // the toolkit's directories are on the path; then what it lacks.
      args.insert(args.end(),
                  {"-include", "__clang_cuda_runtime_wrapper.h", "-include",
                   options.cuda_shim_dir + "/cache_hints.h"});
    }
    if (options.include_kernelc_h)
      args.insert(args.end(), {"-include", "kernelc.h"});
    for (const std::string& define : options.defines)
      args.push_back("-D" + define);
    // Read as the CPU sees it, a source that opens with kernelc.h (or is
    // read after it) reads it precompiled, when there is a place to keep
    // it.
    if (pch != nullptr && !cuda_mode && !options.prelude_dir.empty()) {
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
          fs->getBufferForFile(source);
      if (options.include_kernelc_h ||
          (text && OpensWithKernelcH((*text)->getBuffer(), source, *fs))) {
        std::optional<std::string> made = KernelcHPrecompiled(
            clang_path, {args.begin() + flags_begin, args.end()},
            options.prelude_dir, fs);
        if (made) {
          *pch = *made;
          args.insert(args.end(), {"-include-pch", *made});
        }
      }
    }
    args.push_back("--");
    args.push_back(source);

    auto files = llvm::makeIntrusiveRefCnt<clang::FileManager>(
        clang::FileSystemOptions(), fs);
    QuietToolAction action(session, source);
    clang::tooling::ToolInvocation invocation(
        std::move(args), &action, files.get(),
        std::make_shared<clang::PCHContainerOperations>());
    invocation.setDiagnosticConsumer(&adapter);
    const int source_errors_before = target.error_count();
    // run() also fails when the source has errors. A failure that reported
    // nothing is not the user's.
    if (!invocation.run() && target.error_count() == source_errors_before)
      return Error::Internal(
          fmt::format("Clang failed on '{}' without a diagnostic", source));
    return Status();
  };

  // parse_once with kernelc.h precompiled where it can be. A parse with it
  // that fails is done again whole, whose diagnostics are then the ones, as
  // a header that Clang will not load (a damaged one) fails it; when the
  // whole source then reads without an error, the header was at fault: it
  // is removed, and the next parse makes it anew.
  auto parse = [&](const std::string& source, bool cuda_mode,
                   llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs,
                   diag::DiagnosticEngine& target,
                   const TuReader& reader) -> Status {
    const size_t kernels_before = session.module.kernels.size();
    diag::DiagnosticEngine with_pch;
    std::string pch;
    if (Status st = parse_once(source, cuda_mode, fs, with_pch, reader, &pch);
        !st.ok())
      return st;
    if (pch.empty() || !with_pch.has_errors()) {
      for (const diag::Diagnostic& d : with_pch.diagnostics()) target.Add(d);
      session.diags = &target;
      return Status();
    }
    session.module.kernels.resize(kernels_before);
    const int errors_before = target.error_count();
    Status st = parse_once(source, cuda_mode, fs, target, reader, nullptr);
    if (st.ok() && target.error_count() == errors_before)
      llvm::sys::fs::remove(pch);
    return st;
  };

  // What the backends compile of source `index`, where that differs from
  // the files: the host code `host` left out, and for NVRTC the #include
  // of library headers that the last parse found.
  auto record = [&](size_t index, const std::string& source,
                    const std::map<std::string, std::vector<Span>>& host,
                    const std::map<std::string, std::string>& names) {
    std::map<std::string, std::vector<Span>> device = host;
    for (const LibraryInclude& inc : session.library_includes)
      device[inc.file].push_back(inc.span);
    if (device.empty()) return;
    model::KernelText t;
    for (const auto& [file, spans] : device) {
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
          overlay->getBufferForFile(file);
      if (!text) continue;
      llvm::StringRef data = (*text)->getBuffer();
      auto it = host.find(file);
      std::string cpu = it == host.end()
                            ? std::string()
                            : Blank({data.data(), data.size()}, it->second);
      std::string gpu = Blank({data.data(), data.size()}, spans);
      if (file == source) {
        t.cpu = std::move(cpu);
        t.cuda = std::move(gpu);
      } else if (auto name = names.find(file); name != names.end()) {
        t.headers.push_back({name->second, std::move(cpu), std::move(gpu)});
      }
    }
    if (session.module.kernel_texts.size() <= index)
      session.module.kernel_texts.resize(index + 1);
    session.module.kernel_texts[index] = std::move(t);
  };

  const int errors_before = diags.error_count();
  for (size_t index = 0; index < sources.size(); ++index) {
    const std::string& source = sources[index];
    // Clang's driver would say so too, and then two more errors about
    // having nothing to compile.
    if (!overlay->exists(source)) {
      diags.Report<diag::Id::kNoSuchSource>({}, source);
      continue;
    }
    if (cuda || options.cuda_include_dirs.empty()) {
      if (Status st = parse(source, cuda, overlay, diags, read); !st.ok())
        return st.error();
      record(index, source, session.host_code, session.include_names);
      continue;
    }
    // Read as the CPU sees it, a whole .cu file's host code (its launches,
    // cudaMalloc) does not parse. Where the first parse fails, Clang's CUDA
    // mode, which reads both sides, finds the host code, and the source
    // without it is read again; should that find no host code, the first
    // parse's errors are the ones.
    const size_t kernels_before = session.module.kernels.size();
    diag::DiagnosticEngine first;
    if (Status st = parse(source, false, overlay, first, read); !st.ok())
      return st.error();
    std::map<std::string, std::vector<Span>> host;
    std::map<std::string, std::string> names;
    if (first.has_errors()) {
      session.module.kernels.resize(kernels_before);
      diag::DiagnosticEngine scratch;
      if (Status st = parse(source, true, overlay, scratch, nullptr); !st.ok())
        return st.error();
      if (!scratch.has_errors()) {
        host = session.host_code;
        names = session.include_names;
      }
    }
    if (host.empty()) {
      for (const diag::Diagnostic& d : first.diagnostics()) diags.Add(d);
      if (!first.has_errors())
        record(index, source, host, session.include_names);
      continue;
    }
    auto without_host =
        llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(overlay);
    auto blanked = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
    without_host->pushOverlay(blanked);
    for (const auto& [file, spans] : host) {
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
          overlay->getBufferForFile(file);
      if (!text) continue;
      llvm::StringRef data = (*text)->getBuffer();
      blanked->addFile(file, /*ModificationTime=*/0,
                       llvm::MemoryBuffer::getMemBufferCopy(
                           Blank({data.data(), data.size()}, spans), file));
    }
    if (Status st = parse(source, false, without_host, diags, read); !st.ok())
      return st.error();
    record(index, source, host, names);
  }

  if (diags.error_count() > errors_before) return Error::Reported();
  if (options.dependencies != nullptr)
    options.dependencies->assign(session.dependencies.begin(),
                                 session.dependencies.end());
  return std::move(session.module);
}

}  // namespace

Result<model::Module> ParseSources(const std::vector<std::string>& sources,
                                   const Options& options,
                                   diag::DiagnosticEngine& diags) {
  return Parse(sources, options, diags, nullptr);
}

Result<std::vector<model::DeclaredKernel>> ReadDeclarations(
    const model::Module& spec, const Options& options,
    diag::DiagnosticEngine& diags) {
  std::vector<model::DeclaredKernel> declared(spec.kernels.size());
  Options with_kernelc_h = options;
  with_kernelc_h.include_kernelc_h = true;
  std::vector<std::string> sources;
  for (const model::Kernel& k : spec.kernels)
    if (std::find(sources.begin(), sources.end(), k.source) == sources.end())
      sources.push_back(k.source);
  Result<model::Module> parsed =
      Parse(sources, with_kernelc_h, diags,
            [&spec, &declared](clang::ASTContext& ctx, clang::Preprocessor&,
                               const std::string& source) {
              std::vector<const model::Kernel*> kernels;
              std::vector<model::DeclaredKernel*> out;
              for (size_t i = 0; i < spec.kernels.size(); ++i) {
                if (spec.kernels[i].source != source) continue;
                kernels.push_back(&spec.kernels[i]);
                out.push_back(&declared[i]);
              }
              frontend::ReadDeclarations(ctx, kernels, out);
            });
  if (!parsed.ok()) return parsed.error();
  return declared;
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
