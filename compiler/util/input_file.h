// Reading the files a user gives kernelc as input (sources, JSON specs, the
// files a diagnostic quotes), so that no path can make kernelc block or
// read without bound: a FIFO, a device such as /dev/zero, a directory or a
// huge file is refused without reading it.
#ifndef KERNELC_COMPILER_UTIL_INPUT_FILE_H_
#define KERNELC_COMPILER_UTIL_INPUT_FILE_H_

#include <cstdint>
#include <string>

namespace kernelc {

// The most bytes kernelc reads of one source or spec (64 MiB). The README
// documents it.
inline constexpr uint64_t kMaxInputBytes = uint64_t{64} << 20;

struct InputFile {
  enum class Problem {
    kNone,
    kMissing,     // no file of that name
    kNotRegular,  // a directory, FIFO, socket or device
    kTooLarge,    // more than the limit
    kUnreadable,  // no permission, an I/O error
  };
  Problem problem = Problem::kNone;
  std::string contents;  // when problem is kNone
  uint64_t size = 0;     // the file's size, also when it is too large
  std::string error;     // the system's words for kUnreadable

  bool ok() const { return problem == Problem::kNone; }
};

// Reads `path` (symbolic links followed) when it is a regular file of at
// most `max_bytes`. The file is opened without blocking and checked on the
// open descriptor, so a name that is a FIFO, or is swapped for one between
// a check and the open, is refused rather than waited on; a file that
// grows while it is read is cut at `max_bytes + 1` bytes and refused.
InputFile ReadInputFile(const std::string& path,
                        uint64_t max_bytes = kMaxInputBytes);

// As ReadInputFile, but without reading the contents: for a file that
// another reader (Clang) reads next.
InputFile CheckInputFile(const std::string& path,
                         uint64_t max_bytes = kMaxInputBytes);

}  // namespace kernelc

#endif  // KERNELC_COMPILER_UTIL_INPUT_FILE_H_
