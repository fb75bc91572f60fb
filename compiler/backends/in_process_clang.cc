#include "compiler/backends/in_process_clang.h"

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Basic/Version.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Driver/Compilation.h>
#include <clang/Driver/Driver.h>
#include <clang/Driver/Job.h>
#include <clang/Driver/Tool.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Frontend/FrontendOptions.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>
#include <lld/Common/Driver.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>

#include <memory>
#include <mutex>
#include <set>

#include "compiler/backends/resumable_threads.h"

LLD_HAS_DRIVER(elf)

// The LLVM installation whose resource directory a build from source
// compiles with: the one it links against, which @llvm names.
#ifndef KERNELC_LLVM_PREFIX
#error "KERNELC_LLVM_PREFIX must name the LLVM installation"
#endif

namespace kernelc::backends {

namespace {

// The shared libraries that a link against the sysroot's libc, libm,
// libstdc++ and libgcc_s resolves to. A bundled sysroot carries their
// linker scripts and static parts only: the shared objects are this
// machine's, those the dynamic loader gives the package's library when it
// is loaded, so the library is linked against what it will run with.
constexpr const char* kRuntimeLibraries[] = {
    "libc.so.6",      "libm.so.6",     "libmvec.so.1",
    "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2"};

// The directories the dynamic loader finds kRuntimeLibraries in, asking it
// (once: they do not move while kernelc runs).
std::vector<std::string> FindRuntimeLibraryDirs() {
  std::set<std::string> seen;
  std::vector<std::string> dirs;
  for (const char* soname : kRuntimeLibraries) {
    void* handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) continue;
    struct link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr &&
        map->l_name != nullptr && map->l_name[0] == '/') {
      std::string dir(llvm::sys::path::parent_path(map->l_name));
      if (seen.insert(dir).second) dirs.push_back(dir);
    }
    dlclose(handle);
  }
  return dirs;
}

const std::vector<std::string>& RuntimeLibraryDirs() {
  static const std::vector<std::string> dirs = FindRuntimeLibraryDirs();
  return dirs;
}

std::string ExecutableDir() {
  static int anchor = 0;
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  llvm::SmallString<256> real;
  if (!exe.empty() && !llvm::sys::fs::real_path(exe, real))
    return std::string(llvm::sys::path::parent_path(real));
  return std::string(llvm::sys::path::parent_path(exe));
}

void InitializeCodeGen() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

// Runs `work` where a crash (or LLD's fatal errors, which exit) returns to
// the caller instead of ending the process.
bool RunRecoverably(llvm::function_ref<void()> work) {
  static std::once_flag once;
  std::call_once(once, [] { llvm::CrashRecoveryContext::Enable(); });
  llvm::CrashRecoveryContext context;
  return context.RunSafely(work);
}

// A compile job: the arguments of `clang -cc1`, run by a CompilerInstance.
bool RunCompile(const llvm::opt::ArgStringList& cc1_args,
                llvm::raw_ostream& os) {
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  auto diag_options = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  clang::TextDiagnosticPrinter parse_printer(os, diag_options.get());
  clang::DiagnosticsEngine parse_diags(
      llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>(), diag_options.get(),
      &parse_printer, /*ShouldOwnClient=*/false);
  if (!clang::CompilerInvocation::CreateFromArgs(
          *invocation, llvm::ArrayRef(cc1_args).drop_front(), parse_diags))
    return false;
  // Objects, and the precompiled header of a prelude (-x c++-header) that
  // later compiles load with -include-pch.
  std::unique_ptr<clang::FrontendAction> action;
  switch (invocation->getFrontendOpts().ProgramAction) {
    case clang::frontend::EmitObj:
      action = std::make_unique<clang::EmitObjAction>();
      // Block kernels' threads as resumable functions, where they can be.
      invocation->getCodeGenOpts().PassBuilderCallbacks.push_back(
          AddResumableThreads);
      break;
    case clang::frontend::GeneratePCH:
      action = std::make_unique<clang::GeneratePCHAction>();
      break;
    default:
      os << "kernelc: in-process Clang runs compiles to objects and "
            "precompiled headers only\n";
      return false;
  }
  // A process would leave the freeing to its exit; this one goes on.
  invocation->getFrontendOpts().DisableFree = false;
  // Declared before the instance, which reports to it until destroyed.
  clang::TextDiagnosticPrinter printer(os, &invocation->getDiagnosticOpts());
  clang::CompilerInstance ci;
  ci.setInvocation(std::move(invocation));
  ci.createDiagnostics(&printer, /*ShouldOwnClient=*/false);
  if (!ci.hasDiagnostics()) return false;
  // The summary ("1 error generated.") goes with the diagnostics, as
  // clang++ prints it.
  ci.setVerboseOutputStream(os);
  bool ok = false;
  if (!RunRecoverably([&] { ok = ci.ExecuteAction(*action); })) {
    os << "kernelc: Clang crashed compiling in process\n";
    return false;
  }
  return ok;
}

// A link job: the arguments of `ld`, run by LLD's ELF driver. LLD keeps
// global state: one link at a time, and none after a link it could not
// clean up after.
bool RunLink(const llvm::opt::ArgStringList& ld_args, const ClangRoot& root,
             llvm::raw_ostream& os) {
  static std::mutex mutex;
  static bool usable = true;
  std::lock_guard<std::mutex> lock(mutex);
  if (!usable) {
    os << "kernelc: the in-process linker failed earlier and cannot run "
          "again in this process\n";
    return false;
  }
  // Searched after the sysroot's directories, which the driver put first.
  std::vector<std::string> extra;
  if (!root.sysroot.empty())
    for (const std::string& dir : RuntimeLibraryDirs())
      extra.push_back("-L" + dir);
  std::vector<const char*> argv = {"ld.lld"};
  argv.insert(argv.end(), ld_args.begin(), ld_args.end());
  for (const std::string& e : extra) argv.push_back(e.c_str());
  lld::Result result{1, true};
  if (!RunRecoverably([&] {
        result = lld::lldMain(argv, os, os, {{lld::Gnu, &lld::elf::link}});
      })) {
    os << "kernelc: LLD crashed linking in process\n";
    usable = false;
    return false;
  }
  usable = result.canRunAgain;
  return result.retCode == 0;
}

}  // namespace

ClangRoot FindClangRoot() {
  ClangRoot root;
  llvm::SmallString<256> bundle(ExecutableDir());
  llvm::sys::path::append(bundle, "..", "toolchain");
  llvm::sys::path::remove_dots(bundle, /*remove_dot_dot=*/true);
  llvm::SmallString<256> manifest(bundle);
  llvm::sys::path::append(manifest, "manifest.json");
  if (llvm::sys::fs::exists(manifest)) {
    root.clang = std::string(bundle) + "/bin/clang++";
    root.resource_dir = std::string(bundle) + "/clang";
    root.sysroot = std::string(bundle) + "/sysroot";
    root.manifest = std::string(manifest);
    return root;
  }
  root.clang = KERNELC_LLVM_PREFIX "/bin/clang++";
  root.resource_dir = clang::driver::Driver::GetResourcesPath(root.clang);
  return root;
}

ToolRun RunClangInProcess(const ClangRoot& root,
                          const std::vector<std::string>& args) {
  InitializeCodeGen();
  ToolRun run;
  llvm::raw_string_ostream os(run.output);
  std::vector<std::string> all = {root.clang, "--no-default-config",
                                  "-resource-dir", root.resource_dir,
                                  // Diagnostics go into a string.
                                  "-fno-color-diagnostics"};
  if (!root.sysroot.empty()) all.push_back("--sysroot=" + root.sysroot);
  all.insert(all.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const std::string& a : all) argv.push_back(a.c_str());

  auto diag_options = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  clang::TextDiagnosticPrinter printer(os, diag_options.get());
  printer.setPrefix("clang++");
  clang::DiagnosticsEngine diags(
      llvm::makeIntrusiveRefCnt<clang::DiagnosticIDs>(), diag_options.get(),
      &printer, /*ShouldOwnClient=*/false);
  clang::driver::Driver driver(root.clang, llvm::sys::getDefaultTargetTriple(),
                               diags, "kernelc");
  std::unique_ptr<clang::driver::Compilation> compilation(
      driver.BuildCompilation(argv));
  if (!compilation || compilation->containsError() ||
      diags.hasErrorOccurred()) {
    run.code = 1;
    return run;
  }
  for (const clang::driver::Command& job : compilation->getJobs()) {
    const llvm::opt::ArgStringList& job_args = job.getArguments();
    bool ok = false;
    if (job.getCreator().isLinkJob()) {
      ok = RunLink(job_args, root, os);
    } else if (!job_args.empty() && llvm::StringRef(job_args[0]) == "-cc1") {
      ok = RunCompile(job_args, os);
    } else {
      os << fmt::format("kernelc: in-process Clang cannot run the {} step\n",
                        job.getCreator().getName());
    }
    if (!ok) {
      run.code = 1;
      return run;
    }
  }
  return run;
}

std::string InProcessClangVersion() {
  return "clang version " CLANG_VERSION_STRING " (in process)";
}

}  // namespace kernelc::backends
