#include "compiler/util/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace kernelc {

namespace {

// Closes a descriptor on every way out.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

InputFile Failed(InputFile::Problem problem, int error_number = 0) {
  InputFile f;
  f.problem = problem;
  if (error_number != 0) f.error = std::strerror(error_number);
  return f;
}

InputFile Open(const std::string& path, uint64_t max_bytes, bool read) {
  Descriptor d;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
  // writer. It does not change how a regular file reads.
  do {
    d.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  } while (d.fd < 0 && errno == EINTR);
  if (d.fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return Failed(InputFile::Problem::kMissing);
    // ENXIO: a socket; EISDIR cannot happen with O_RDONLY, but says so.
    if (errno == ENXIO || errno == EISDIR)
      return Failed(InputFile::Problem::kNotRegular);
    return Failed(InputFile::Problem::kUnreadable, errno);
  }
  struct stat st;
  if (::fstat(d.fd, &st) != 0)
    return Failed(InputFile::Problem::kUnreadable, errno);
  if (!S_ISREG(st.st_mode)) return Failed(InputFile::Problem::kNotRegular);
  InputFile f;
  f.size = static_cast<uint64_t>(st.st_size);
  if (f.size > max_bytes) {
    f.problem = InputFile::Problem::kTooLarge;
    return f;
  }
  if (!read) return f;
  f.contents.reserve(f.size);
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(d.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Failed(InputFile::Problem::kUnreadable, errno);
    if (n == 0) break;
    f.contents.append(buffer, static_cast<size_t>(n));
    if (f.contents.size() > max_bytes) {
      InputFile large;
      large.problem = InputFile::Problem::kTooLarge;
      large.size = f.contents.size();
      return large;
    }
  }
  f.size = f.contents.size();
  return f;
}

}  // namespace

InputFile ReadInputFile(const std::string& path, uint64_t max_bytes) {
  return Open(path, max_bytes, /*read=*/true);
}

InputFile CheckInputFile(const std::string& path, uint64_t max_bytes) {
  return Open(path, max_bytes, /*read=*/false);
}

}  // namespace kernelc
