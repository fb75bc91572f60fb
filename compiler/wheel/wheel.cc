#include "compiler/wheel/wheel.h"

#include <fmt/format.h>
#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Base64.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/SHA256.h>
#include <sys/stat.h>
#include <zip.h>

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>
#include <regex>

#include "compiler/util/file_io.h"
#include "compiler/wheel/manylinux.h"
#include "compiler/wheel/pep440.h"
#include "compiler/wheel/pep508.h"

namespace kernelc::wheel {

using diag::Id;

namespace {

// Zip stores local DOS times; 1980-01-01 00:00:00 is the earliest.
constexpr int64_t kZipEpoch = 315532800;
constexpr int64_t kZipEnd = 4354819199;  // 2107-12-31 23:59:59

// A distribution's name as the core metadata specification allows it.
bool IsDistributionName(const std::string& name) {
  static const std::regex re(
      R"(^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$)");
  return std::regex_match(name, re);
}

// The name as a wheel's file name and dist-info directory spell it: runs of
// "-", "_" and "." become one "_", upper case lower case (the binary
// distribution format's escaping).
std::string EscapedName(const std::string& name) {
  static const std::regex runs(R"([-_.]+)");
  return llvm::StringRef(std::regex_replace(name, runs, "_")).lower();
}

// Whether `text` can stand as the value of a core metadata field: one line
// of printable text.
bool IsOneLine(const std::string& text) {
  return std::none_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == '\x7f';
  });
}

std::string Requirement(const std::string& floor) {
  return fmt::format(">={}", floor);
}

// "  one\n  two": what Requires-Dist lines follow the floor's.
std::string RequiresDist(const std::vector<std::string>& requirements) {
  std::string text;
  for (const std::string& r : requirements)
    text += fmt::format("Requires-Dist: {}\n", llvm::StringRef(r).trim().str());
  return text;
}

}  // namespace

std::string RecordHash(const std::string& bytes) {
  llvm::SHA256 h;
  h.update(llvm::StringRef(bytes));
  std::string b64 = llvm::encodeBase64(h.final());
  for (char& c : b64) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  while (!b64.empty() && b64.back() == '=') b64.pop_back();
  return "sha256=" + b64;
}

Status CheckOptions(const Options& o, diag::DiagnosticEngine& diags) {
  int errors = diags.error_count();
  if (!ParseVersion(o.version))
    diags.Report<Id::kBadWheelVersion>({}, o.version);
  if (!o.distribution.empty() && !IsDistributionName(o.distribution))
    diags.Report<Id::kBadDistributionName>({}, o.distribution);
  if (!IsOneLine(o.summary)) diags.Report<Id::kSummaryNotOneLine>({});
  for (const std::string& r : o.requirements) {
    std::optional<RequirementError> e = CheckRequirement(r);
    if (e && e->not_ascii)
      diags.Report<Id::kRequirementNotAscii>({}, r);
    else if (e)
      diags.Report<Id::kBadRequirement>({}, r, e->expected, e->column);
  }
  if (diags.error_count() > errors) return Error::Reported();
  return Status();
}

Result<Files> ReadPackage(const std::string& dir,
                          diag::DiagnosticEngine& diags) {
  if (!llvm::sys::fs::is_directory(dir)) {
    diags.Report<Id::kNotADirectory>({}, dir);
    return Error::Reported();
  }
  Files files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end;
       !ec && it != end; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (name.starts_with(".") || name == "__pycache__") {
      it.no_push();
      continue;
    }
    if (it->type() == llvm::sys::fs::file_type::directory_file) continue;
    std::optional<std::string> bytes = ReadFile(it->path());
    if (!bytes) {
      diags.Report<Id::kCannotRead>({}, it->path());
      return Error::Reported();
    }
    llvm::SmallString<256> rel(
        llvm::StringRef(it->path())
            .drop_front(llvm::StringRef(dir).rtrim('/').size() + 1));
    llvm::sys::path::native(rel, llvm::sys::path::Style::posix);
    files[std::string(rel)] = std::move(*bytes);
  }
  if (ec) {
    diags.Report<Id::kCannotReadDirectory>({}, dir, ec.message());
    return Error::Reported();
  }
  if (!files.count("kernelc.json") || !files.count("__init__.py")) {
    diags.Report<Id::kNotABuiltPackage>({}, dir);
    return Error::Reported();
  }
  return files;
}

Result<Wheel> MakeWheel(const Files& package, const Options& o,
                        diag::DiagnosticEngine& diags) {
  if (Status s = CheckOptions(o, diags); !s.ok()) return s.error();
  auto manifest_it = package.find("kernelc.json");
  if (manifest_it == package.end()) {
    diags.Report<Id::kPackageWithoutManifest>({});
    return Error::Reported();
  }
  nlohmann::json m = nlohmann::json::parse(manifest_it->second, nullptr,
                                           /*allow_exceptions=*/false);
  auto str = [&m](const char* key) -> std::string {
    return m.is_object() && m.contains(key) && m[key].is_string()
               ? m[key].get<std::string>()
               : "";
  };
  std::string name = str("package"), ffi_api = str("xla_ffi_api"),
              floor = str("jaxlib_headers"), library = str("library");
  if (name.empty() || ffi_api.empty() || floor.empty() || library.empty()) {
    diags.Report<Id::kManifestIncomplete>({});
    return Error::Reported();
  }
  if (!package.count(library)) {
    diags.Report<Id::kPackageWithoutLibrary>({}, library);
    return Error::Reported();
  }
  std::string distribution = o.distribution.empty() ? name : o.distribution;
  if (!IsDistributionName(distribution)) {
    diags.Report<Id::kPackageNameNotDistributionName>({}, distribution);
    return Error::Reported();
  }
  std::vector<std::string> functions, targets;
  if (m.contains("kernels") && m["kernels"].is_array())
    for (const nlohmann::json& k : m["kernels"])
      if (k.contains("python_name") && k["python_name"].is_string())
        functions.push_back(k["python_name"].get<std::string>());
  if (m.contains("targets") && m["targets"].is_array())
    for (const nlohmann::json& t : m["targets"])
      if (t.is_string()) targets.push_back(t.get<std::string>());

  // Every ELF file in the package decides the platform, as auditwheel
  // audits every one.
  std::vector<ElfLibrary> libraries;
  for (const auto& [path, bytes] : package) {
    if (!IsElf(bytes)) continue;
    Result<ElfLibrary> lib = ReadElfLibrary(bytes, path, diags);
    if (!lib.ok()) return lib.error();
    libraries.push_back(std::move(lib).value());
  }
  Result<std::vector<std::string>> platform =
      ChoosePlatformTags(libraries, o.platform, diags);
  if (!platform.ok()) return platform.error();

  Wheel w;
  w.platform_tags = std::move(platform).value();
  std::string version = ParseVersion(o.version)->Normalized();
  std::string escaped = EscapedName(distribution);
  // The library is loaded with ctypes, not as a CPython extension: any
  // Python 3, any ABI, but only this platform.
  std::vector<std::string> sorted_tags = w.platform_tags;
  std::sort(sorted_tags.begin(), sorted_tags.end());
  w.file_name = fmt::format("{}-{}-py3-none-{}.whl", escaped, version,
                            fmt::join(sorted_tags, "."));
  std::string dist_info = fmt::format("{}-{}.dist-info", escaped, version);

  for (const auto& [path, bytes] : package)
    w.entries.push_back({name + "/" + path, bytes});
  std::string summary =
      o.summary.empty() ? fmt::format("JAX ops compiled by {}: {}", o.generator,
                                      fmt::join(functions, ", "))
                        : o.summary;
  std::string metadata = fmt::format(
      "Metadata-Version: 2.1\n"
      "Name: {name}\n"
      "Version: {version}\n"
      "Summary: {summary}\n"
      "Requires-Python: {python}\n"
      "Requires-Dist: jax{req}\n"
      "Requires-Dist: jaxlib{req}\n"
      "Requires-Dist: numpy\n"
      "{requirements}"
      "Description-Content-Type: text/plain\n"
      "\n"
      "JAX ops compiled ahead of time by {gen} (targets: {targets}).\n"
      "Built against XLA FFI API {ffi} (the headers of jaxlib {floor}): the\n"
      "ops register on jax and jaxlib {floor} and newer. Importing the\n"
      "package under an older jaxlib raises ImportError saying so.\n",
      fmt::arg("name", distribution), fmt::arg("version", version),
      fmt::arg("summary", summary), fmt::arg("python", o.requires_python),
      fmt::arg("gen", o.generator), fmt::arg("ffi", ffi_api),
      fmt::arg("req", Requirement(floor)),
      fmt::arg("requirements", RequiresDist(o.requirements)),
      fmt::arg("floor", floor), fmt::arg("targets", fmt::join(targets, ", ")));
  w.entries.push_back({dist_info + "/METADATA", metadata});
  std::string tags;
  for (const std::string& t : w.platform_tags)
    tags += fmt::format("Tag: py3-none-{}\n", t);
  w.entries.push_back(
      {dist_info + "/WHEEL", fmt::format("Wheel-Version: 1.0\n"
                                         "Generator: {}\n"
                                         "Root-Is-Purelib: false\n"
                                         "{}",
                                         o.generator, tags)});
  std::string record;
  for (const auto& [path, bytes] : w.entries)
    record += fmt::format("{},{},{}\n", path, RecordHash(bytes), bytes.size());
  record += dist_info + "/RECORD,,\n";
  w.entries.push_back({dist_info + "/RECORD", record});
  return w;
}

Result<std::string> WriteWheel(const Wheel& wheel, const std::string& dist_dir,
                               int64_t mtime, diag::DiagnosticEngine& diags) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dist_dir)) {
    diags.Report<Id::kCannotCreateDirectory>({}, dist_dir, ec.message());
    return Error::Reported();
  }
  std::string path = dist_dir + "/" + wheel.file_name;
  // libzip writes a temporary file beside `path` and renames it at
  // zip_close: a reader never sees half a wheel.
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!z) {
    zip_error_t e;
    zip_error_init_with_code(&e, err);
    std::string msg = zip_error_strerror(&e);
    zip_error_fini(&e);
    diags.Report<Id::kCannotWrite>({}, path, msg);
    return Error::Reported();
  }
  auto fail = [&](const std::string& what) -> Error {
    std::string msg = zip_strerror(z);
    zip_discard(z);
    return Error::Internal(
        fmt::format("cannot write '{}': {}: {}", path, what, msg));
  };
  // One timestamp for every entry, in UTC, so the bytes do not depend on
  // the time zone.
  time_t t = static_cast<time_t>(std::clamp(mtime, kZipEpoch, kZipEnd));
  struct tm tm;
  gmtime_r(&t, &tm);
  zip_uint16_t dos_time = static_cast<zip_uint16_t>(
      (tm.tm_hour << 11) | (tm.tm_min << 5) | (tm.tm_sec / 2));
  zip_uint16_t dos_date = static_cast<zip_uint16_t>(
      ((tm.tm_year + 1900 - 1980) << 9) | ((tm.tm_mon + 1) << 5) | tm.tm_mday);
  for (const auto& [name, bytes] : wheel.entries) {
    zip_source_t* src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    if (!src) return fail(name);
    zip_int64_t idx = zip_file_add(z, name.c_str(), src, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
      zip_source_free(src);
      return fail(name);
    }
    if (zip_set_file_compression(z, idx, ZIP_CM_DEFLATE, 9) != 0 ||
        zip_file_set_dostime(z, idx, dos_time, dos_date, 0) != 0 ||
        zip_file_set_external_attributes(z, idx, 0, ZIP_OPSYS_UNIX,
                                         (S_IFREG | 0644u) << 16) != 0)
      return fail(name);
  }
  if (zip_close(z) != 0) return fail("closing");
  return path;
}

}  // namespace kernelc::wheel
