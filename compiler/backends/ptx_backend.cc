#include "compiler/backends/ptx_backend.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FileUtilities.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/SHA256.h>

#include <map>
#include <regex>

#include "compiler/util/file_io.h"

namespace kernelc::backends {

namespace {

// kc_fill_u64 of the NVRTC programs (nvrtc_backend.cc's kFillKernel), in
// PTX: every kernelc module has it, for KC_INIT's 64-bit fills. Appended
// after the user's PTX, so its lines stay the file's; it uses nothing newer
// than PTX ISA 2.0 and sm_20, so any module's .version and .target take it.
constexpr std::string_view kFillKernelPtx = R"ptx(
// kernelc: the fill of KC_INIT
.visible .entry kc_fill_u64(
	.param .u64 kc_fill_u64_p,
	.param .u64 kc_fill_u64_v,
	.param .u64 kc_fill_u64_n
)
{
	.reg .pred 	%kcp<2>;
	.reg .b32 	%kcr<4>;
	.reg .b64 	%kcrd<8>;
	ld.param.u64 	%kcrd1, [kc_fill_u64_p];
	ld.param.u64 	%kcrd2, [kc_fill_u64_v];
	ld.param.u64 	%kcrd3, [kc_fill_u64_n];
	mov.u32 	%kcr1, %ctaid.x;
	mov.u32 	%kcr2, %ntid.x;
	mov.u32 	%kcr3, %tid.x;
	mul.wide.u32 	%kcrd4, %kcr1, %kcr2;
	cvt.u64.u32 	%kcrd5, %kcr3;
	add.s64 	%kcrd4, %kcrd4, %kcrd5;
	setp.ge.s64 	%kcp1, %kcrd4, %kcrd3;
	@%kcp1 bra 	$KC_FILL_DONE;
	cvta.to.global.u64 	%kcrd6, %kcrd1;
	shl.b64 	%kcrd7, %kcrd4, 3;
	add.s64 	%kcrd6, %kcrd6, %kcrd7;
	st.global.u64 	[%kcrd6], %kcrd2;
$KC_FILL_DONE:
	ret;
}
)ptx";

std::string Sha256Hex(std::string_view data) {
  llvm::SHA256 h;
  h.update(llvm::StringRef(data.data(), data.size()));
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

// The size of one `.param` declaration (".param .u64 name", ".param .align 8
// .b8 name[24]", ".param .u64 .ptr.global.align 1 name"): its type's width
// times the array's length.
int ParamBytes(llvm::StringRef decl) {
  // The type is the first one (".align 8" is none).
  static const std::regex type(R"(\.(?:[usbf](8|16|32|64)|pred)\b)");
  const std::string d = decl.str();
  std::smatch m;
  int bytes = 0;
  if (std::regex_search(d, m, type))
    bytes = m[1].matched ? std::stoi(m[1].str()) / 8 : 1;
  int count = 1;
  size_t open = d.rfind('['), close = d.rfind(']');
  if (open != std::string::npos && close != std::string::npos && close > open &&
      llvm::StringRef(d)
          .substr(open + 1, close - open - 1)
          .trim()
          .getAsInteger(10, count))
    count = 1;
  return bytes * count;
}

// Relays ptxas's "ptxas <file>, line N; error   : message" lines at the
// PTX file's lines. Returns whether any line was recognized.
bool RelayPtxasLog(const std::string& log, const std::string& file,
                   diag::DiagnosticEngine& diags) {
  static const std::regex head(
      R"(^ptxas[^,]*, line (\d+); (error|warning)\s*: (.*)$)");
  bool any = false;
  for (llvm::StringRef line : llvm::split(log, '\n')) {
    std::smatch m;
    std::string l = line.rtrim().str();
    if (!std::regex_match(l, m, head)) continue;
    diag::Diagnostic d;
    d.severity = m[2].str() == "warning" ? diag::Severity::kWarning
                                         : diag::Severity::kError;
    d.loc = diag::SourceLoc{file, std::stoi(m[1].str()), 1};
    d.message = m[3].str();  // ptxas's words, relayed as they are
    diags.Add(std::move(d));
    any = true;
  }
  return any;
}

// Runs ptxas on `ptx` for sm_<arch>; the cubin, or the log when it fails
// (in `log`, with an empty result).
Result<std::string> RunPtxas(const std::string& ptxas, const std::string& ptx,
                             int arch, std::string* log) {
  llvm::SmallString<128> in, out, err;
  for (auto [path, suffix] : {std::pair{&in, "ptx"}, std::pair{&out, "cubin"},
                              std::pair{&err, "log"}})
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("kernelc", suffix, *path))
      return Error::Internal(
          fmt::format("cannot create a temporary file: {}", ec.message()));
  llvm::FileRemover remove_in(in), remove_out(out), remove_err(err);
  if (Status s = WriteFileIfChanged(std::string(in), ptx); !s.ok())
    return s.error();
  const std::string arch_flag = fmt::format("-arch=sm_{}", arch);
  std::vector<llvm::StringRef> argv = {ptxas, arch_flag, "-o", out, in};
  std::optional<llvm::StringRef> redirects[3] = {
      llvm::StringRef(""), llvm::StringRef(err), llvm::StringRef(err)};
  std::string error;
  bool failed = false;
  int code = llvm::sys::ExecuteAndWait(ptxas, argv, std::nullopt, redirects, 0,
                                       0, &error, &failed);
  if (failed || code < 0)
    return Error::Internal(fmt::format("cannot run {}: {}", ptxas, error));
  *log = ReadFile(std::string(err)).value_or("");
  if (code != 0) return std::string();
  std::optional<std::string> cubin = ReadFile(std::string(out));
  if (!cubin || cubin->empty())
    return Error::Internal(
        fmt::format("{} wrote no cubin for sm_{}", ptxas, arch));
  return *std::move(cubin);
}

// Checks each kernel's .entry in `ptx` against its ABI; false when one
// does not match (reported).
bool CheckEntries(const std::string& file, const std::string& ptx,
                  const std::vector<const model::Kernel*>& kernels,
                  const PtxBuild& build, diag::DiagnosticEngine& diags) {
  bool ok = true;
  for (const model::Kernel* k : kernels) {
    const std::string& entry = k->ptx->entry;
    std::optional<std::vector<int>> have = PtxEntryParamBytes(ptx, entry);
    if (!have) {
      diags.Report<diag::Id::kPtxNoEntry>(k->ptx->loc, k->name, file, entry);
      ok = false;
      continue;
    }
    const std::vector<model::PtxParam> want = build.params(*k);
    const std::string_view abi = model::PtxAbiName(k->ptx->abi);
    if (have->size() != want.size()) {
      diags.Report<diag::Id::kPtxParamCount>(k->ptx->loc, k->name, entry,
                                             have->size(), abi, want.size());
      ok = false;
      continue;
    }
    for (size_t i = 0; i < want.size(); ++i) {
      if ((*have)[i] == want[i].bytes) continue;
      diags.Report<diag::Id::kPtxParamSize>(k->ptx->loc, k->name, i + 1, entry,
                                            (*have)[i], abi, want[i].bytes,
                                            want[i].what);
      ok = false;
      break;
    }
  }
  return ok;
}

}  // namespace

std::optional<std::vector<int>> PtxEntryParamBytes(std::string_view ptx,
                                                   std::string_view entry) {
  llvm::StringRef text(ptx.data(), ptx.size());
  size_t at = 0;
  while ((at = text.find(".entry", at)) != llvm::StringRef::npos) {
    at += 6;
    llvm::StringRef rest = text.substr(at).ltrim();
    if (!rest.starts_with(entry)) continue;
    rest = rest.substr(entry.size()).ltrim();
    if (!rest.starts_with("(")) continue;
    size_t close = rest.find(')');
    if (close == llvm::StringRef::npos) return std::nullopt;
    std::vector<int> bytes;
    for (llvm::StringRef decl : llvm::split(rest.substr(1, close - 1), ','))
      if (!decl.trim().empty()) bytes.push_back(ParamBytes(decl.trim()));
    return bytes;
  }
  return std::nullopt;
}

int PtxTarget(std::string_view ptx) {
  static const std::regex target(R"(^\s*\.target\s+sm_(\d+))");
  std::string text(ptx);
  std::smatch m;
  for (llvm::StringRef line : llvm::split(llvm::StringRef(text), '\n')) {
    std::string l = line.str();
    if (std::regex_search(l, m, target)) return std::stoi(m[1].str());
  }
  return 0;
}

std::optional<std::string> FindPtxas(const std::string& cuda_include) {
  if (!cuda_include.empty()) {
    llvm::SmallString<256> p(cuda_include);
    llvm::sys::path::remove_filename(p);  // the toolkit
    llvm::sys::path::append(p, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(p)) return std::string(p);
  }
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  return std::nullopt;
}

Result<std::vector<model::CudaBinary>> AssemblePtx(
    const model::Module& module, const PtxBuild& build, int first_index,
    diag::DiagnosticEngine& diags) {
  // The PTX kernels by file, in first-use order.
  std::vector<std::string> files;
  std::map<std::string, std::vector<const model::Kernel*>> by_file;
  for (const model::Kernel& k : module.kernels) {
    if (!k.ptx) continue;
    auto& kernels = by_file[k.ptx->file];
    if (kernels.empty()) files.push_back(k.ptx->file);
    kernels.push_back(&k);
  }
  std::vector<model::CudaBinary> out;
  bool ok = true;
  for (size_t fi = 0; fi < files.size(); ++fi) {
    const std::string& file = files[fi];
    const std::vector<const model::Kernel*>& kernels = by_file[file];
    std::optional<std::string> text = ReadFile(file);
    if (!text) {
      diags.Report<diag::Id::kCannotRead>({}, file);
      return Error::Reported();
    }
    if (!CheckEntries(file, *text, kernels, build, diags)) {
      ok = false;
      continue;
    }
    const std::string ptx = *text + std::string(kFillKernelPtx);
    model::CudaBinary bin;
    bin.source = file;
    bin.source_index = first_index + static_cast<int>(fi);
    for (const model::Kernel* k : kernels) {
      bin.kernels.push_back(k->name);
      bin.lowered.push_back(k->ptx->entry);
    }
    for (int arch : build.archs) {
      Progress::Stage stage(build.progress, fmt::format("ptxas sm_{}", arch),
                            file);
      std::string log;
      Result<std::string> cubin = RunPtxas(build.ptxas, ptx, arch, &log);
      if (!cubin.ok()) return cubin.error();
      if (cubin.value().empty()) {
        if (!RelayPtxasLog(log, file, diags))
          diags.Report<diag::Id::kPtxasFailed>({}, file, arch, log);
        return Error::Reported();
      }
      model::CudaImage image;
      image.sm = arch;
      image.data = std::move(cubin).value();
      image.sha256 = Sha256Hex(image.data);
      bin.images.push_back(std::move(image));
      stage.Done();
    }
    model::CudaImage image;
    image.is_ptx = true;
    image.sm = PtxTarget(ptx);
    if (image.sm == 0) image.sm = build.archs.front();
    image.data = ptx;
    image.sha256 = Sha256Hex(image.data);
    bin.images.push_back(std::move(image));
    out.push_back(std::move(bin));
  }
  if (!ok) return Error::Reported();
  return out;
}

}  // namespace kernelc::backends
