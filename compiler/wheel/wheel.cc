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
#include <sys/utsname.h>
#include <zip.h>

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>
#include <regex>

#include "compiler/util/file_io.h"

namespace kernelc::wheel {

namespace {

// Zip stores local DOS times; 1980-01-01 00:00:00 is the earliest.
constexpr int64_t kZipEpoch = 315532800;
constexpr int64_t kZipEnd = 4354819199;  // 2107-12-31 23:59:59

bool IsPep440Version(const std::string& v) {
  static const std::regex re(
      R"(^([1-9][0-9]*!)?(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*)"
      R"(((a|b|rc)(0|[1-9][0-9]*))?(\.post(0|[1-9][0-9]*))?)"
      R"((\.dev(0|[1-9][0-9]*))?(\+[a-z0-9]+(\.[a-z0-9]+)*)?$)");
  return std::regex_match(v, re);
}

bool IsPlatformTag(const std::string& tag) {
  static const std::regex re(R"(^[a-z0-9_]+$)");
  return std::regex_match(tag, re);
}

std::string Requirement(const std::string& floor) {
  return fmt::format(">={}", floor);
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

std::string HostPlatformTag() {
  struct utsname u;
  std::string machine = uname(&u) == 0 ? u.machine : "unknown";
  for (char& c : machine)
    if (c == '-' || c == '.') c = '_';
  return "linux_" + machine;
}

Result<Files> ReadPackage(const std::string& dir) {
  if (!llvm::sys::fs::is_directory(dir))
    return Error::User(fmt::format("'{}' is not a directory", dir));
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
    if (!bytes) return Error::User(fmt::format("cannot read '{}'", it->path()));
    llvm::SmallString<256> rel(
        llvm::StringRef(it->path())
            .drop_front(llvm::StringRef(dir).rtrim('/').size() + 1));
    llvm::sys::path::native(rel, llvm::sys::path::Style::posix);
    files[std::string(rel)] = std::move(*bytes);
  }
  if (ec)
    return Error::User(fmt::format("cannot read '{}': {}", dir, ec.message()));
  if (!files.count("kernelc.json") || !files.count("__init__.py"))
    return Error::User(fmt::format(
        "'{}' is not a package that kernelc built: it has no kernelc.json and "
        "__init__.py",
        dir));
  return files;
}

Result<Wheel> MakeWheel(const Files& package, const Options& o) {
  auto manifest_it = package.find("kernelc.json");
  if (manifest_it == package.end())
    return Error::User("the package has no kernelc.json manifest");
  nlohmann::json m = nlohmann::json::parse(manifest_it->second, nullptr,
                                           /*allow_exceptions=*/false);
  auto str = [&m](const char* key) -> std::string {
    return m.is_object() && m.contains(key) && m[key].is_string()
               ? m[key].get<std::string>()
               : "";
  };
  std::string name = str("package"), ffi_api = str("xla_ffi_api"),
              floor = str("jaxlib_headers"), library = str("library");
  if (name.empty() || ffi_api.empty() || floor.empty() || library.empty())
    return Error::User(
        "the package's kernelc.json lacks package, library, xla_ffi_api or "
        "jaxlib_headers: rebuild it with this kernelc");
  if (!package.count(library))
    return Error::User(
        fmt::format("the package lacks its library '{}': rebuild it", library));
  if (!IsPep440Version(o.version))
    return Error::User(fmt::format(
        "'{}' is not a valid version (PEP 440, e.g. 1.2.0)", o.version));
  if (!IsPlatformTag(o.platform))
    return Error::User(fmt::format(
        "'{}' is not a platform tag (e.g. linux_x86_64)", o.platform));
  std::vector<std::string> functions, targets;
  if (m.contains("kernels") && m["kernels"].is_array())
    for (const nlohmann::json& k : m["kernels"])
      if (k.contains("python_name") && k["python_name"].is_string())
        functions.push_back(k["python_name"].get<std::string>());
  if (m.contains("targets") && m["targets"].is_array())
    for (const nlohmann::json& t : m["targets"])
      if (t.is_string()) targets.push_back(t.get<std::string>());

  Wheel w;
  std::string version = o.version;
  for (char& c : version)
    if (c == '-') c = '_';
  // The library is loaded with ctypes, not as a CPython extension: any
  // Python 3, any ABI, but only this platform.
  std::string tag = "py3-none-" + o.platform;
  w.file_name = fmt::format("{}-{}-{}.whl", name, version, tag);
  std::string dist_info = fmt::format("{}-{}.dist-info", name, version);

  for (const auto& [path, bytes] : package)
    w.entries.push_back({name + "/" + path, bytes});
  std::string metadata = fmt::format(
      "Metadata-Version: 2.1\n"
      "Name: {name}\n"
      "Version: {version}\n"
      "Summary: JAX ops compiled by {gen}: {functions}\n"
      "Requires-Dist: jax{req}\n"
      "Requires-Dist: jaxlib{req}\n"
      "Requires-Dist: numpy\n"
      "Description-Content-Type: text/plain\n"
      "\n"
      "JAX ops compiled ahead of time by {gen} (targets: {targets}).\n"
      "Built against XLA FFI API {ffi} (the headers of jaxlib {floor}): the\n"
      "ops register on jax and jaxlib {floor} and newer. Importing the\n"
      "package under an older jaxlib raises ImportError saying so.\n",
      fmt::arg("name", name), fmt::arg("version", o.version),
      fmt::arg("gen", o.generator),
      fmt::arg("functions", fmt::join(functions, ", ")),
      fmt::arg("ffi", ffi_api), fmt::arg("req", Requirement(floor)),
      fmt::arg("floor", floor), fmt::arg("targets", fmt::join(targets, ", ")));
  w.entries.push_back({dist_info + "/METADATA", metadata});
  w.entries.push_back(
      {dist_info + "/WHEEL", fmt::format("Wheel-Version: 1.0\n"
                                         "Generator: {}\n"
                                         "Root-Is-Purelib: false\n"
                                         "Tag: {}\n",
                                         o.generator, tag)});
  std::string record;
  for (const auto& [path, bytes] : w.entries)
    record += fmt::format("{},{},{}\n", path, RecordHash(bytes), bytes.size());
  record += dist_info + "/RECORD,,\n";
  w.entries.push_back({dist_info + "/RECORD", record});
  return w;
}

Result<std::string> WriteWheel(const Wheel& wheel, const std::string& dist_dir,
                               int64_t mtime) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dist_dir))
    return Error::User(
        fmt::format("cannot create '{}': {}", dist_dir, ec.message()));
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
    return Error::User(fmt::format("cannot write '{}': {}", path, msg));
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
