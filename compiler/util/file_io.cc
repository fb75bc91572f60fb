#include "compiler/util/file_io.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace kernelc {

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(f),
                     std::istreambuf_iterator<char>());
}

Status WriteFileIfChanged(const std::string& path, std::string_view contents) {
  if (std::optional<std::string> old = ReadFile(path); old && *old == contents)
    return Status();
  std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) {
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec)
      return Error::User("cannot create '" + p.parent_path().string() +
                         "': " + ec.message());
  }
  std::string tmp = path + ".kernelc-tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!f) return Error::User("cannot write '" + tmp + "'");
  }
  std::filesystem::rename(tmp, p, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Error::User("cannot write '" + path + "': " + ec.message());
  }
  return Status();
}

}  // namespace kernelc
