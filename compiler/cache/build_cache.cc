#include "compiler/cache/build_cache.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

#include "compiler/util/file_io.h"

namespace kernelc::cache {

namespace {

// Bumped whenever the entry format changes; old entries are then ignored.
constexpr const char* kFormat = "v1";

// An entry file: "kce1 <header bytes>\n", the JSON header, then each file's
// bytes in the header's order. The header lists the dependencies with their
// SHA-256 and the files with size and SHA-256.
constexpr std::string_view kMagic = "kce1 ";

}  // namespace

std::string DefaultDirectory() {
  if (const char* d = std::getenv("KERNELC_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d)
    return std::string(d) + "/kernelc";
  if (const char* h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/kernelc";
  return "";
}

std::string PreludeDirectory(const std::string& cache_dir,
                             const std::string& identity) {
  const std::string parent = cache_dir + "/prelude";
  const std::string dir = parent + "/" + identity;
  if (llvm::sys::fs::is_directory(dir)) return dir;
  if (llvm::sys::fs::create_directories(dir)) return "";
  // The other identities' directories, newest first. Only names of the
  // form kernelc gives (a hex SHA-256) are touched; a build of another
  // kernelc may be using one that goes, and then compiles without it.
  std::vector<std::pair<llvm::sys::TimePoint<>, std::string>> others;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(parent, ec), end; !ec && it != end;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    llvm::sys::fs::file_status st;
    if (name == identity || name.size() != 64 ||
        !llvm::all_of(name, llvm::isHexDigit) ||
        llvm::sys::fs::status(it->path(), st) ||
        !llvm::sys::fs::is_directory(st))
      continue;
    others.emplace_back(st.getLastModificationTime(), it->path());
  }
  std::sort(others.begin(), others.end(), std::greater<>());
  for (size_t i = kKeptPreludeDirectories; i < others.size(); ++i)
    llvm::sys::fs::remove_directories(others[i].second,
                                      /*IgnoreErrors=*/true);
  return dir;
}

std::string Sha256Hex(std::string_view bytes) {
  llvm::SHA256 h;
  h.update(llvm::StringRef(bytes.data(), bytes.size()));
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

KeyBuilder& KeyBuilder::Add(std::string_view field, std::string_view value) {
  // Length-prefixed, so that no two field lists give the same bytes.
  buffer_ += fmt::format("{}:{}:{}:", field.size(), field, value.size());
  buffer_ += value;
  return *this;
}

bool KeyBuilder::AddFile(std::string_view field, const std::string& path) {
  std::optional<std::string> text = ReadFile(path);
  Add(field, path);
  if (!text) {
    Add("unreadable", "");
    return false;
  }
  Add("sha256", Sha256Hex(*text));
  return true;
}

namespace {

std::string MTime(const llvm::sys::fs::file_status& st) {
  return std::to_string(
      st.getLastModificationTime().time_since_epoch().count());
}

// "size mtime" of a file (symbolic links followed); empty when it is not
// there.
std::string Identity(const std::string& path) {
  llvm::sys::fs::file_status st;
  if (llvm::sys::fs::status(path, st)) return "";
  return fmt::format("{} {}", st.getSize(), MTime(st));
}

}  // namespace

bool KeyBuilder::AddFileIdentity(std::string_view field,
                                 const std::string& path) {
  Add(field, path);
  llvm::SmallString<256> real;
  llvm::sys::fs::file_status st;
  if (llvm::sys::fs::real_path(path, real) || llvm::sys::fs::status(real, st)) {
    Add("missing", "");
    return false;
  }
  Add("real", std::string(real));
  Add("size", std::to_string(st.getSize()));
  Add("mtime", MTime(st));
  return true;
}

std::string KeyBuilder::Finish() { return Sha256Hex(buffer_); }

std::vector<std::string> ParseDepFile(std::string_view text) {
  std::vector<std::string> deps;
  // Skip the target, up to the first unescaped ':' followed by a space or
  // the end of a line.
  size_t i = 0;
  for (; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      ++i;
      continue;
    }
    if (text[i] == ':' && (i + 1 == text.size() || text[i + 1] == ' ' ||
                           text[i + 1] == '\n' || text[i + 1] == '\t'))
      break;
  }
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) deps.push_back(cur);
    cur.clear();
  };
  for (++i; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      char n = text[i + 1];
      if (n == '\n') {  // line continuation
        flush();
        ++i;
        continue;
      }
      if (n == ' ' || n == '#' || n == '\\') {
        cur += n;
        ++i;
        continue;
      }
    }
    if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      cur += '$';
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
      // A second rule (clang's -MP phony targets) ends the list.
      if (c == '\n' && i + 1 < text.size() && text[i + 1] != ' ' &&
          text[i + 1] != '\t')
        break;
      continue;
    }
    cur += c;
  }
  flush();
  return deps;
}

namespace {

// The name in an #include or #include_next line; empty for other lines and
// for an include through a macro.
std::string_view IncludedName(std::string_view line) {
  auto skip_space = [&line] {
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
      line.remove_prefix(1);
  };
  skip_space();
  if (line.empty() || line.front() != '#') return {};
  line.remove_prefix(1);
  skip_space();
  if (line.substr(0, 7) != "include") return {};
  line.remove_prefix(7);
  if (line.substr(0, 5) == "_next") line.remove_prefix(5);
  skip_space();
  if (line.empty() || (line.front() != '<' && line.front() != '"')) return {};
  char close = line.front() == '<' ? '>' : '"';
  line.remove_prefix(1);
  size_t end = line.find(close);
  if (end == std::string_view::npos || end == 0) return {};
  return line.substr(0, end);
}

std::string Normalized(const llvm::Twine& path) {
  llvm::SmallString<256> p;
  path.toVector(p);
  llvm::sys::fs::make_absolute(p);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return std::string(p);
}

}  // namespace

std::vector<std::string> IncludeClosure(
    const std::vector<std::string>& files,
    const std::vector<std::string>& search_path) {
  std::set<std::string> seen;
  std::vector<std::string> todo;
  for (const std::string& f : files)
    if (seen.insert(Normalized(f)).second) todo.push_back(Normalized(f));
  // A name resolves the same way from every file of one directory: look
  // each (directory, name) up once, since a stat is what this costs.
  std::map<std::string, bool> exists;
  auto add = [&](const std::string& candidate) {
    auto [it, fresh] = exists.emplace(candidate, false);
    if (fresh) it->second = llvm::sys::fs::is_regular_file(candidate);
    if (it->second && seen.insert(candidate).second) todo.push_back(candidate);
  };
  std::vector<std::string> dirs;
  for (const std::string& d : search_path) dirs.push_back(Normalized(d));
  while (!todo.empty()) {
    std::string file = std::move(todo.back());
    todo.pop_back();
    std::optional<std::string> text = ReadFile(file);
    if (!text) continue;
    llvm::StringRef here = llvm::sys::path::parent_path(file);
    for (llvm::StringRef line : llvm::split(*text, '\n')) {
      std::string_view name = IncludedName(std::string_view(line));
      if (name.empty()) continue;
      if (llvm::sys::path::is_absolute(llvm::StringRef(name))) {
        add(Normalized(llvm::StringRef(name)));
        continue;
      }
      add(Normalized(here + "/" + llvm::StringRef(name)));
      for (const std::string& d : dirs)
        add(Normalized(llvm::Twine(d) + "/" + llvm::StringRef(name)));
    }
  }
  return std::vector<std::string>(seen.begin(), seen.end());
}

bool IsPackagePath(std::string_view path) {
  if (path.empty() || path.front() == '/' ||
      path.find('\0') != std::string_view::npos ||
      !llvm::json::isUTF8(llvm::StringRef(path.data(), path.size())))
    return false;
  for (llvm::StringRef part :
       llvm::split(llvm::StringRef(path.data(), path.size()), '/'))
    if (part.empty() || part == "." || part == "..") return false;
  return true;
}

namespace {

// A dependency's path in an entry's JSON header: the path itself, or, when
// it is not valid UTF-8 (which JSON strings must be, and file names need
// not), {"hex": its bytes in hex}.
nlohmann::json EncodePath(const std::string& path) {
  if (llvm::json::isUTF8(path)) return path;
  return {{"hex", llvm::toHex(path, /*LowerCase=*/true)}};
}

std::optional<std::string> DecodePath(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  std::string bytes;
  if (j.is_object() && j.size() == 1 && j.contains("hex") &&
      j["hex"].is_string() &&
      llvm::tryGetFromHex(j["hex"].get<std::string>(), bytes))
    return bytes;
  return std::nullopt;
}

}  // namespace

std::string BuildCache::KeyDirectory(const std::string& key) const {
  return fmt::format("{}/{}/{}/{}", directory_, kFormat, key.substr(0, 2), key);
}

std::optional<Files> BuildCache::Lookup(const std::string& key) const {
  std::string dir = KeyDirectory(key);
  std::vector<std::string> entries;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (llvm::StringRef(it->path()).ends_with(".kce"))
      entries.push_back(it->path());
  }
  // Directory order is the file system's; sorted order makes the choice
  // among several valid entries the same everywhere.
  std::sort(entries.begin(), entries.end());
  for (const std::string& path : entries) {
    std::optional<std::string> data = ReadFile(path);
    if (!data || data->compare(0, kMagic.size(), kMagic) != 0) continue;
    size_t nl = data->find('\n');
    if (nl == std::string::npos) continue;
    unsigned long long header_size = 0;
    if (llvm::StringRef(*data)
            .slice(kMagic.size(), nl)
            .getAsInteger(10, header_size) ||
        nl + 1 + header_size > data->size())
      continue;
    nlohmann::json header = nlohmann::json::parse(
        data->substr(nl + 1, header_size), nullptr, /*allow_exceptions=*/false);
    if (!header.is_object() || !header["deps"].is_array() ||
        !header["files"].is_array())
      continue;
    bool valid = true;
    // Toolchain files, by identity (absent in entries without any).
    if (header.contains("ids")) {
      const nlohmann::json& ids = header["ids"];
      valid = ids.is_array();
      for (size_t i = 0; valid && i < ids.size(); ++i) {
        const nlohmann::json& d = ids[i];
        std::optional<std::string> path;
        if (d.is_array() && d.size() == 2) path = DecodePath(d[0]);
        valid = path && d[1].is_string() &&
                Identity(*path) == d[1].get<std::string>();
      }
    }
    for (size_t i = 0; valid && i < header["deps"].size(); ++i) {
      const nlohmann::json& d = header["deps"][i];
      std::optional<std::string> path;
      if (d.is_array() && d.size() == 2) path = DecodePath(d[0]);
      if (!path || !d[1].is_string()) {
        valid = false;
        break;
      }
      std::optional<std::string> now = ReadFile(*path);
      valid = now && Sha256Hex(*now) == d[1].get<std::string>();
    }
    if (!valid) continue;
    Files files;
    size_t offset = nl + 1 + header_size;
    for (const nlohmann::json& f : header["files"]) {
      // A file outside the package (an absolute path, "..") is a damaged
      // or forged entry: installing it would write anywhere.
      if (!f.is_array() || f.size() != 3 || !f[0].is_string() ||
          !IsPackagePath(f[0].get<std::string>()) ||
          !f[1].is_number_unsigned() || !f[2].is_string()) {
        valid = false;
        break;
      }
      size_t size = f[1].get<size_t>();
      if (offset + size > data->size()) {
        valid = false;
        break;
      }
      std::string bytes = data->substr(offset, size);
      offset += size;
      if (Sha256Hex(bytes) != f[2].get<std::string>()) {
        valid = false;
        break;
      }
      files[f[0].get<std::string>()] = std::move(bytes);
    }
    if (valid && offset == data->size()) return files;
  }
  return std::nullopt;
}

Status BuildCache::Store(
    const std::string& key, const std::vector<std::string>& dependencies,
    const Files& files, const std::vector<std::string>& toolchain_files) const {
  nlohmann::json deps = nlohmann::json::array();
  nlohmann::json ids = nlohmann::json::array();
  std::string dep_digest;
  for (const std::string& t : toolchain_files) {
    std::string id = Identity(t);
    if (id.empty())
      return Error::Internal(
          fmt::format("cannot find '{}' to record it in the build cache", t));
    ids.push_back({EncodePath(t), id});
    dep_digest += t + '\0' + id + '\0';
  }
  for (const std::string& d : dependencies) {
    std::optional<std::string> text = ReadFile(d);
    if (!text)
      return Error::Internal(
          fmt::format("cannot read '{}' to record it in the build cache", d));
    std::string sha = Sha256Hex(*text);
    deps.push_back({EncodePath(d), sha});
    dep_digest += d + '\0' + sha + '\0';
  }
  nlohmann::json list = nlohmann::json::array();
  std::string body;
  for (const auto& [path, bytes] : files) {
    if (!IsPackagePath(path))
      return Error::Internal(
          fmt::format("'{}' is not a relative path inside a package", path));
    list.push_back({path, bytes.size(), Sha256Hex(bytes)});
    body += bytes;
  }
  nlohmann::json header = {{"deps", deps}, {"files", list}};
  if (!ids.empty()) header["ids"] = ids;
  std::string header_text = header.dump();
  std::string data = fmt::format("{}{}\n", kMagic, header_text.size());
  data += header_text;
  data += body;

  std::string dir = KeyDirectory(key);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return Error::Internal(fmt::format("cannot create the build cache '{}': {}",
                                       dir, ec.message()));
  // Entries under one key differ only in their dependencies' contents (and
  // toolchain files' identities), so those name the entry.
  std::string final_path =
      fmt::format("{}/{}.kce", dir, Sha256Hex(dep_digest).substr(0, 32));
  llvm::SmallString<256> tmp;
  int fd = -1;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(dir + "/.tmp-%%%%%%%%%%%%", fd, tmp))
    return Error::Internal(fmt::format("cannot write the build cache '{}': {}",
                                       dir, ec.message()));
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << data;
    out.close();
    if (out.has_error()) {
      out.clear_error();
      llvm::sys::fs::remove(tmp);
      return Error::Internal(
          fmt::format("cannot write the build cache entry '{}'", tmp.str()));
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, final_path)) {
    llvm::sys::fs::remove(tmp);
    return Error::Internal(fmt::format("cannot write the build cache '{}': {}",
                                       final_path, ec.message()));
  }
  return Status();
}

}  // namespace kernelc::cache
