// The platform tag of a wheel that holds ELF shared libraries, decided as
// auditwheel (PyPA's wheel auditor) decides it, from auditwheel's own
// manylinux policies (PEP 600): the symbol versions each policy's glibc,
// libstdc++ and libgcc provide per architecture, the system libraries a
// wheel may link without carrying them, and the symbols it must not use.
// kernelc compiles auditwheel's policy file in (tools/setup.sh fetches it),
// so a wheel's tag is the one `auditwheel show` reports for it.
#ifndef KERNELC_COMPILER_WHEEL_MANYLINUX_H_
#define KERNELC_COMPILER_WHEEL_MANYLINUX_H_

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/diag/engine.h"
#include "compiler/util/status.h"

namespace kernelc::wheel {

// What auditwheel reads from an ELF shared library.
struct ElfLibrary {
  std::string name;  // for messages: its path in the package
  // The architecture by auditwheel's name for the ELF header's machine,
  // class and byte order ("x86_64", "aarch64", "ppc64le", ...); empty for
  // one that has no platform tag.
  std::string architecture;
  std::string machine;  // the header's words, for messages: "EM_X86_64, ..."
  std::vector<std::string> needed;  // DT_NEEDED, in order
  // The symbol versions it needs, by the library that defines them
  // (.gnu.version_r): "libc.so.6" -> {"GLIBC_2.2.5", "GLIBC_2.14"}. The
  // dynamic loader's own (ld-linux*, ld64.so.*) are left out, as auditwheel
  // leaves them out.
  std::map<std::string, std::set<std::string>> versions;
  // The dynamic symbols it imports, weak ones aside.
  std::set<std::string> undefined_symbols;
  // x86-64 only: the ISA level its GNU property note says it needs (1: the
  // baseline, 2-4: x86-64-v2 to v4).
  int x86_isa_level = 1;
};

// Reads `bytes`, an ELF shared library. One that is not, or cannot be read,
// is reported to `diags` under `name` (Error::Reported()).
Result<ElfLibrary> ReadElfLibrary(std::string_view bytes,
                                  const std::string& name,
                                  diag::DiagnosticEngine& diags);

// Whether `bytes` start like an ELF file.
bool IsElf(std::string_view bytes);

// One of auditwheel's policies for one architecture.
struct Policy {
  std::string name;                  // "manylinux_2_17_x86_64", "linux_x86_64"
  std::vector<std::string> aliases;  // "manylinux2014_x86_64"
  int priority = 0;                  // higher: older glibc, wider reach
  // Symbol versions provided, by prefix: "GLIBC" -> {"2.2.5", ..., "2.17"}.
  std::map<std::string, std::set<std::string>> symbol_versions;
  std::set<std::string> whitelist;  // libraries a wheel may link to
  // Symbols of a library that a wheel must not use.
  std::map<std::string, std::set<std::string>> blacklist;

  bool IsGenericLinux() const { return priority == 0; }
};

class Policies {
 public:
  // The policies of `architecture` in auditwheel's policy file (the JSON
  // text of manylinux-policy.json), the generic linux policy first, then by
  // ascending priority. An internal error for a malformed file.
  static Result<Policies> Parse(std::string_view policy_json,
                                const std::string& architecture);
  // The same from the policy file compiled into kernelc.
  static Result<Policies> Embedded(const std::string& architecture);

  const std::vector<Policy>& all() const { return policies_; }
  // The policy that `tag` names (by name or alias); null when none does.
  const Policy* Find(std::string_view tag) const;

 private:
  std::vector<Policy> policies_;
};

// One reason why a policy does not admit a library.
struct Violation {
  enum Kind {
    kSymbolVersions,      // `items` (versions) of `from` that it lacks
    kExternalLibraries,   // `items`, linked, outside its whitelist
    kBlacklistedSymbols,  // `items` of `from`, on its blacklist
    kIsaLevel,            // x86-64-v`items`, above the baseline
  };
  Kind kind;
  std::string library;  // the ELF file
  std::string items;    // comma-separated
  std::string from;
};

// Why `library` is not eligible for `policy`; empty when it is. The generic
// linux policy admits every library.
std::vector<Violation> Violations(const Policy& policy,
                                  const ElfLibrary& library);

// Reports each violation as a note.
void ReportViolations(const std::vector<Violation>& violations,
                      diag::DiagnosticEngine& diags);

// The version of auditwheel whose policies kernelc carries ("6.8.2").
std::string_view PolicySource();

// The platform tags of a wheel holding `libraries` (at least one, all of
// one architecture): the policy's name, then its aliases, as auditwheel
// repair writes them ("manylinux_2_17_x86_64", "manylinux2014_x86_64").
// With an empty `requested`, those of the policy of the highest priority
// that admits every library, as auditwheel's analysis chooses it; when that
// is the generic linux policy, which PyPI refuses, a warning says why no
// manylinux policy admits them. Else those of the policy `requested` names,
// which must admit them. Reported to `diags`: libraries of no or of
// different architectures; a requested tag that is not Linux's (win_amd64,
// macosx_11_0_arm64, any), is for musl, names another architecture or a
// policy kernelc does not know, or whose policy the libraries violate (with
// a note for each violation, naming the symbol versions), each error with a
// note of the tag the libraries can have.
Result<std::vector<std::string>> ChoosePlatformTags(
    const std::vector<ElfLibrary>& libraries, std::string_view requested,
    diag::DiagnosticEngine& diags);

}  // namespace kernelc::wheel

#endif  // KERNELC_COMPILER_WHEEL_MANYLINUX_H_
