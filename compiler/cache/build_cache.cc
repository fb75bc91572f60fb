#include "compiler/cache/build_cache.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

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

std::string BuildCache::KeyDirectory(const std::string& key) const {
  return fmt::format("{}/{}/{}/{}", directory_, kFormat, key.substr(0, 2), key);
}

std::optional<Files> BuildCache::Lookup(const std::string& key) const {
  std::string dir = KeyDirectory(key);
  std::vector<std::string> entries;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (llvm::StringRef(it->path()).endswith(".kce"))
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
    for (const nlohmann::json& d : header["deps"]) {
      if (!d.is_array() || d.size() != 2 || !d[0].is_string() ||
          !d[1].is_string()) {
        valid = false;
        break;
      }
      std::optional<std::string> now = ReadFile(d[0].get<std::string>());
      if (!now || Sha256Hex(*now) != d[1].get<std::string>()) {
        valid = false;
        break;
      }
    }
    if (!valid) continue;
    Files files;
    size_t offset = nl + 1 + header_size;
    for (const nlohmann::json& f : header["files"]) {
      if (!f.is_array() || f.size() != 3 || !f[0].is_string() ||
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

Status BuildCache::Store(const std::string& key,
                         const std::vector<std::string>& dependencies,
                         const Files& files) const {
  nlohmann::json deps = nlohmann::json::array();
  std::string dep_digest;
  for (const std::string& d : dependencies) {
    std::optional<std::string> text = ReadFile(d);
    if (!text)
      return Error::Internal(
          fmt::format("cannot read '{}' to record it in the build cache", d));
    std::string sha = Sha256Hex(*text);
    deps.push_back({d, sha});
    dep_digest += d + '\0' + sha + '\0';
  }
  nlohmann::json list = nlohmann::json::array();
  std::string body;
  for (const auto& [path, bytes] : files) {
    list.push_back({path, bytes.size(), Sha256Hex(bytes)});
    body += bytes;
  }
  nlohmann::json header = {{"deps", deps}, {"files", list}};
  std::string header_text = header.dump();
  std::string data = fmt::format("{}{}\n", kMagic, header_text.size());
  data += header_text;
  data += body;

  std::string dir = KeyDirectory(key);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return Error::Internal(fmt::format("cannot create the build cache '{}': {}",
                                       dir, ec.message()));
  // Entries under one key differ only in their dependencies' contents, so
  // those name the entry.
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
