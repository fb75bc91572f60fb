// Versions (PEP 440) as the `packaging` distribution parses and normalises
// them: the grammar of packaging.version.VERSION_PATTERN, and the text of
// str(packaging.version.Version(text)). pip, PyPI and every installer agree
// on that normal form, and a wheel's file name and dist-info directory must
// carry it.
#ifndef KERNELC_COMPILER_WHEEL_PEP440_H_
#define KERNELC_COMPILER_WHEEL_PEP440_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernelc::wheel {

// A parsed version. Numbers are kept as their decimal text without leading
// zeros ("0" for zero), since PEP 440 puts no bound on them.
struct Version {
  std::string epoch = "0";
  std::vector<std::string> release;  // at least one number
  // "a", "b" or "rc" and its number; empty letter: no pre-release.
  std::string pre_letter;
  std::string pre_number;
  std::optional<std::string> post;  // the post-release's number
  std::optional<std::string> dev;   // the dev release's number
  // Lower-case letters and digits; numeric parts without leading zeros.
  std::vector<std::string> local;

  // The normal form: "1!2.0rc1.post3.dev4+ubuntu.1".
  std::string Normalized() const;
};

// Parses `text`. Accepted as packaging accepts it: a leading "v", any case,
// the alternative spellings (alpha, beta, c, pre, preview, rev, r), "-N" as
// a post-release, optional separators (".", "-", "_") and implicit numbers
// ("1.0-dev" is 1.0.dev0), leading zeros, and white space around it.
// nullopt when it is not a version. Only ASCII text is taken: packaging also
// strips Unicode white space around a version, which no tag or file name
// needs.
std::optional<Version> ParseVersion(std::string_view text);

}  // namespace kernelc::wheel

#endif  // KERNELC_COMPILER_WHEEL_PEP440_H_
