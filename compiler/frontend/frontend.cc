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
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Frontend/Utils.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Tooling/Tooling.h>
#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/frontend/declarations.h"
#include "compiler/frontend/diagnostic_adapter.h"
#include "compiler/frontend/kernel_reader.h"
#include "compiler/frontend/locations.h"
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

// What reads a source's translation unit, once Clang has parsed it.
using TuReader =
    std::function<void(clang::ASTContext& ctx, const std::string& source)>;

// State shared by the sources of one parse.
struct Session {
  Session(diag::DiagnosticEngine& d, DiagnosticAdapter& a)
      : diags(d), adapter(a) {}

  diag::DiagnosticEngine& diags;
  DiagnosticAdapter& adapter;  // the client of each source's engine
  TuReader read;
  std::set<std::string> dependencies;  // non-system files read, as named
  // Read as the CPU sees a source: the CUDA toolkit's include directories
  // (real paths), whose headers other than kernelc's stand-ins need a CUDA
  // compiler.
  std::vector<std::string> toolkit_dirs;
  ToolkitInclude toolkit_include;  // of the source being parsed

  // After Clang's first error in a source that included a toolkit header.
  void ReportToolkitInclude(const clang::SourceManager& sm) {
    if (toolkit_include.loc.isInvalid()) return;
    diag::Diagnostic d = diag::Make<diag::Id::kToolkitHeaderNeedsCuda>(
        {}, toolkit_include.header);
    Locate(d, toolkit_include.loc, sm);
    diags.Add(std::move(d));
    toolkit_include.loc = clang::SourceLocation();
    toolkit_include.reported = true;
  }
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
    if (session_.toolkit_include.seen()) return;
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
      session_.toolkit_include = {sm_.getFileLoc(range.getBegin()), name.str()};
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

class KernelConsumer : public clang::ASTConsumer {
 public:
  KernelConsumer(Session& session, const std::string& source)
      : session_(session), source_(source) {}

  // After the whole TU: template instantiations needed by kernels are done.
  // After a fatal error Clang reports nothing more, and the AST is missing
  // what it could not read: the kernels are not read either.
  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    if (ctx.getDiagnostics().hasFatalErrorOccurred()) return;
    session_.read(ctx, source_);
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
// nowhere instead of to stderr: this library never prints, and the
// diagnostics engine counts the errors.
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
    session_.toolkit_include = {};
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

// Parses each source as ParseSources says and hands its translation unit
// to `read`: Error::Reported() when an error was reported.
Status Parse(const std::vector<std::string>& sources, const Options& options,
             diag::DiagnosticEngine& diags,
             const std::function<TuReader(Session&)>& make_reader) {
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
  DiagnosticAdapter adapter(diags);
  Session session(diags, adapter);
  session.read = make_reader(session);
  if (!cuda) {
    for (const std::string& dir : options.cuda_include_dirs) {
      llvm::SmallString<256> real;
      if (!llvm::sys::fs::real_path(dir, real))
        session.toolkit_dirs.push_back(std::string(real));
    }
  }
  adapter.set_error_hook([&session](const clang::SourceManager& sm) {
    session.ReportToolkitInclude(sm);
  });
  const int errors_before = diags.error_count();
  for (const std::string& source : sources) {
    // Clang's driver would say so too, and then two more errors about
    // having nothing to compile.
    if (!overlay->exists(source)) {
      diags.Report<diag::Id::kNoSuchSource>({}, source);
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
    if (!options.sysroot.empty())
      args.push_back("--sysroot=" + options.sysroot);
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
      args.insert(args.end(),
                  {"-include", "__clang_cuda_runtime_wrapper.h", "-include",
                   options.cuda_shim_dir + "/cache_hints.h"});
    }
    if (options.include_kernelc_h) args.insert(args.end(), {"-include", "kernelc.h"});
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
    invocation.setDiagnosticConsumer(&adapter);
    const int source_errors_before = diags.error_count();
    // run() also fails when the source has errors. A failure that reported
    // nothing is not the user's.
    if (!invocation.run() && diags.error_count() == source_errors_before)
      return Error::Internal(
          fmt::format("Clang failed on '{}' without a diagnostic", source));
  }

  if (diags.error_count() > errors_before) return Error::Reported();
  if (options.dependencies != nullptr)
    options.dependencies->assign(session.dependencies.begin(),
                                 session.dependencies.end());
  return Status();
}

}  // namespace

Result<model::Module> ParseSources(const std::vector<std::string>& sources,
                                   const Options& options,
                                   diag::DiagnosticEngine& diags) {
  model::Module module;
  module.sources = sources;
  Status s = Parse(sources, options, diags, [&](Session& session) -> TuReader {
    return [&module, &session](clang::ASTContext& ctx,
                               const std::string& source) {
      ReadKernels(ctx, source, module, session.adapter, session.diags);
    };
  });
  if (!s.ok()) return s.error();
  return module;
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
  Status s = Parse(sources, with_kernelc_h, diags, [&](Session&) -> TuReader {
    return [&spec, &declared](clang::ASTContext& ctx,
                              const std::string& source) {
      std::vector<const model::Kernel*> kernels;
      std::vector<model::DeclaredKernel*> out;
      for (size_t i = 0; i < spec.kernels.size(); ++i) {
        if (spec.kernels[i].source != source) continue;
        kernels.push_back(&spec.kernels[i]);
        out.push_back(&declared[i]);
      }
      frontend::ReadDeclarations(ctx, kernels, out);
    };
  });
  if (!s.ok()) return s.error();
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
