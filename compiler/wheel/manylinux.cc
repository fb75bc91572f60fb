#include "compiler/wheel/manylinux.h"

#include <fmt/format.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ELF.h>
#include <llvm/Support/Endian.h>
#include <llvm/Support/Error.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <utility>

#include "compiler/wheel/embedded_policy.h"

namespace kernelc::wheel {

using diag::Id;

namespace {

namespace elf = llvm::ELF;
using llvm::object::ELFFile;

// auditwheel's Architecture for an ELF header (lddtree._get_platform).
struct Machine {
  uint16_t e_machine;
  bool is64;
  bool little_endian;
  const char* architecture;
  const char* text;
};

constexpr Machine kMachines[] = {
    {elf::EM_386, false, true, "i686", "EM_386"},
    {elf::EM_X86_64, true, true, "x86_64", "EM_X86_64"},
    {elf::EM_PPC64, true, true, "ppc64le", "EM_PPC64"},
    {elf::EM_PPC64, true, false, "ppc64", "EM_PPC64"},
    {elf::EM_RISCV, true, true, "riscv64", "EM_RISCV"},
    {elf::EM_AARCH64, true, true, "aarch64", "EM_AARCH64"},
    {elf::EM_S390, true, false, "s390x", "EM_S390"},
    {elf::EM_ARM, false, true, "armv7l", "EM_ARM"},
    {elf::EM_LOONGARCH, true, true, "loongarch64", "EM_LOONGARCH"},
};

// A library that every manylinux policy leaves to the system: the dynamic
// loader (auditwheel's lddtree filter).
bool IsLoader(const std::string& lib) {
  return lib.find("ld-linux") != std::string::npos || lib == "ld64.so.2" ||
         lib == "ld64.so.1";
}

std::string Message(llvm::Error error) {
  return llvm::toString(std::move(error));
}

// The ISA level of an x86-64 GNU property note's descriptor: its
// GNU_PROPERTY_X86_ISA_1_NEEDED bits, read as auditwheel reads them.
template <class ELFT>
Result<int> IsaLevel(llvm::ArrayRef<uint8_t> desc, const std::string& name,
                     diag::DiagnosticEngine& diags) {
  constexpr size_t kAlign = ELFT::Is64Bits ? 8 : 4;
  size_t pos = 0;
  while (pos + 8 <= desc.size()) {
    uint32_t type =
        llvm::support::endian::read32<ELFT::Endianness>(desc.data() + pos);
    uint32_t size =
        llvm::support::endian::read32<ELFT::Endianness>(desc.data() + pos + 4);
    pos += 8;
    if (pos + size > desc.size()) break;
    if (type == elf::GNU_PROPERTY_X86_ISA_1_NEEDED && size == 4) {
      uint32_t bits =
          llvm::support::endian::read32<ELFT::Endianness>(desc.data() + pos) &
          ~uint32_t{elf::GNU_PROPERTY_X86_ISA_1_BASELINE};
      if (bits & elf::GNU_PROPERTY_X86_ISA_1_V4) return 4;
      if (bits & elf::GNU_PROPERTY_X86_ISA_1_V3) return 3;
      if (bits & elf::GNU_PROPERTY_X86_ISA_1_V2) return 2;
      if (bits != 0) {
        diags.Report<Id::kUnknownIsaBits>({}, name, fmt::format("{:#x}", bits));
        return Error::Reported();
      }
      return 1;
    }
    pos += (size + kAlign - 1) / kAlign * kAlign;
  }
  return 1;
}

template <class ELFT>
Result<ElfLibrary> Read(const ELFFile<ELFT>& file, ElfLibrary lib,
                        diag::DiagnosticEngine& diags) {
  const typename ELFT::Ehdr& header = file.getHeader();
  bool is64 = ELFT::Is64Bits;
  bool little = ELFT::Endianness == llvm::endianness::little;
  lib.machine = fmt::format("e_machine {}, {}-bit, {}-endian", header.e_machine,
                            is64 ? 64 : 32, little ? "little" : "big");
  for (const Machine& m : kMachines)
    if (m.e_machine == header.e_machine && m.is64 == is64 &&
        m.little_endian == little) {
      lib.machine = fmt::format("{}, {}-bit, {}-endian", m.text, is64 ? 64 : 32,
                                little ? "little" : "big");
      lib.architecture = m.architecture;
    }
  // auditwheel takes armv7l only for the hard-float EABI 5.
  if (lib.architecture == "armv7l" &&
      ((header.e_flags & elf::EF_ARM_EABIMASK) != elf::EF_ARM_EABI_VER5 ||
       !(header.e_flags & elf::EF_ARM_ABI_FLOAT_HARD)))
    lib.architecture.clear();

  auto unreadable = [&](const std::string& why) -> Error {
    diags.Report<Id::kCannotReadElf>({}, lib.name, why);
    return Error::Reported();
  };
  auto fail = [&](llvm::Error e) { return unreadable(Message(std::move(e))); };
  auto sections = file.sections();
  if (!sections) return fail(sections.takeError());
  // Each kind from its first section, as auditwheel (pyelftools) reads it.
  bool seen_dynamic = false, seen_verneed = false, seen_dynsym = false;
  bool seen_property = false;
  for (const typename ELFT::Shdr& sec : *sections) {
    if (sec.sh_type == elf::SHT_DYNAMIC && !seen_dynamic) {
      seen_dynamic = true;
      auto strtab = file.getLinkAsStrtab(sec);
      if (!strtab) return fail(strtab.takeError());
      auto entries =
          file.template getSectionContentsAsArray<typename ELFT::Dyn>(sec);
      if (!entries) return fail(entries.takeError());
      for (const typename ELFT::Dyn& d : *entries) {
        if (d.getTag() != elf::DT_NEEDED) continue;
        if (d.getVal() >= strtab->size())
          return unreadable("a DT_NEEDED entry lies outside its string table");
        lib.needed.emplace_back(strtab->data() + d.getVal());
      }
    } else if (sec.sh_type == elf::SHT_GNU_verneed && !seen_verneed) {
      seen_verneed = true;
      auto deps = file.getVersionDependencies(sec);
      if (!deps) return fail(deps.takeError());
      for (const llvm::object::VerNeed& need : *deps) {
        if (IsLoader(need.File)) continue;
        for (const llvm::object::VernAux& aux : need.AuxV) {
          // LLVM hands each name with the rest of the string table behind
          // it, and marks names outside the table "<corrupt...>".
          std::string version = aux.Name.c_str();
          if (llvm::StringRef(need.File).starts_with("<corrupt") ||
              llvm::StringRef(version).starts_with("<corrupt"))
            return unreadable(
                "a symbol version names a string outside its string table");
          lib.versions[need.File].insert(version);
        }
      }
    } else if ((sec.sh_type == elf::SHT_DYNSYM ||
                sec.sh_type == elf::SHT_SYMTAB) &&
               !seen_dynsym) {
      seen_dynsym = true;
      auto strtab = file.getStringTableForSymtab(sec);
      if (!strtab) return fail(strtab.takeError());
      auto symbols = file.symbols(&sec);
      if (!symbols) return fail(symbols.takeError());
      for (const typename ELFT::Sym& sym : *symbols) {
        if (sym.st_shndx != elf::SHN_UNDEF || sym.getBinding() == elf::STB_WEAK)
          continue;
        auto symbol_name = sym.getName(*strtab);
        if (!symbol_name) return fail(symbol_name.takeError());
        if (!symbol_name->empty())
          lib.undefined_symbols.insert(symbol_name->str());
      }
    } else if (sec.sh_type == elf::SHT_NOTE && lib.architecture == "x86_64" &&
               !seen_property) {
      llvm::Error error = llvm::Error::success();
      for (const typename ELFT::Note& note : file.notes(sec, error)) {
        if (note.getType() != elf::NT_GNU_PROPERTY_TYPE_0 ||
            note.getName() != "GNU")
          continue;
        seen_property = true;
        Result<int> level =
            IsaLevel<ELFT>(note.getDesc(sec.sh_addralign), lib.name, diags);
        if (!level.ok()) return level.error();
        lib.x86_isa_level = level.value();
        break;
      }
      if (error) return fail(std::move(error));
    }
  }
  return lib;
}

template <class ELFT>
Result<ElfLibrary> Read(std::string_view bytes, ElfLibrary lib,
                        diag::DiagnosticEngine& diags) {
  auto file =
      ELFFile<ELFT>::create(llvm::StringRef(bytes.data(), bytes.size()));
  if (!file) {
    diags.Report<Id::kCannotReadElf>({}, lib.name, Message(file.takeError()));
    return Error::Reported();
  }
  return Read(*file, std::move(lib), diags);
}

// "GLIBCXX_3.4.29" -> "GLIBCXX", as auditwheel splits a version.
std::string Prefix(const std::string& version) {
  return version.substr(0, version.find('_'));
}

std::string Join(const std::set<std::string>& items) {
  return fmt::format("{}", fmt::join(items, ", "));
}

std::string StringsAt(const nlohmann::json& j, std::set<std::string>& out) {
  if (!j.is_array()) return "not a list";
  for (const nlohmann::json& s : j) {
    if (!s.is_string()) return "not a list of strings";
    out.insert(s.get<std::string>());
  }
  return "";
}

// The tag's form, and what it says of the library.
struct TagParts {
  enum Kind { kLinux, kManylinux, kMusllinux, kOther } kind = kOther;
  std::string architecture;
};

TagParts ParseTag(std::string_view tag) {
  // PEP 600's manylinux_X_Y_arch, the legacy aliases (PEP 513, 571, 599),
  // PEP 656's musllinux_X_Y_arch, and the generic linux_arch.
  static const std::regex kManylinux(
      R"(^(manylinux_[0-9]+_[0-9]+|manylinux1|manylinux2010|manylinux2014)_([a-z0-9_]+)$)");
  static const std::regex kMusllinux(
      R"(^musllinux_[0-9]+_[0-9]+_([a-z0-9_]+)$)");
  static const std::regex kLinux(R"(^linux_([a-z0-9_]+)$)");
  std::string text(tag);
  std::smatch m;
  if (std::regex_match(text, m, kManylinux))
    return {TagParts::kManylinux, m[2].str()};
  if (std::regex_match(text, m, kMusllinux))
    return {TagParts::kMusllinux, m[1].str()};
  if (std::regex_match(text, m, kLinux)) return {TagParts::kLinux, m[1].str()};
  return {};
}

const EmbeddedFile* EmbeddedPolicyFile(std::string_view path) {
  for (const EmbeddedFile& f : embedded::ManylinuxPolicy())
    if (f.path == path) return &f;
  return nullptr;
}

}  // namespace

bool IsElf(std::string_view bytes) {
  return llvm::StringRef(bytes.data(), bytes.size()).starts_with(elf::ElfMagic);
}

Result<ElfLibrary> ReadElfLibrary(std::string_view bytes,
                                  const std::string& name,
                                  diag::DiagnosticEngine& diags) {
  ElfLibrary lib;
  lib.name = name;
  if (!IsElf(bytes) || bytes.size() < elf::EI_NIDENT) {
    diags.Report<Id::kNotAnElfFile>({}, name);
    return Error::Reported();
  }
  unsigned char cls = bytes[elf::EI_CLASS], data = bytes[elf::EI_DATA];
  if (cls == elf::ELFCLASS32 && data == elf::ELFDATA2LSB)
    return Read<llvm::object::ELF32LE>(bytes, std::move(lib), diags);
  if (cls == elf::ELFCLASS32 && data == elf::ELFDATA2MSB)
    return Read<llvm::object::ELF32BE>(bytes, std::move(lib), diags);
  if (cls == elf::ELFCLASS64 && data == elf::ELFDATA2LSB)
    return Read<llvm::object::ELF64LE>(bytes, std::move(lib), diags);
  if (cls == elf::ELFCLASS64 && data == elf::ELFDATA2MSB)
    return Read<llvm::object::ELF64BE>(bytes, std::move(lib), diags);
  diags.Report<Id::kCannotReadElf>({}, name, "unknown class or byte order");
  return Error::Reported();
}

Result<Policies> Policies::Parse(std::string_view policy_json,
                                 const std::string& architecture) {
  nlohmann::json all = nlohmann::json::parse(policy_json, nullptr,
                                             /*allow_exceptions=*/false);
  auto malformed = [](const std::string& what) -> Error {
    return Error::Internal("malformed manylinux policy file: " + what);
  };
  if (!all.is_array()) return malformed("not a list of policies");
  Policies result;
  for (const nlohmann::json& p : all) {
    if (!p.is_object() || !p.contains("name") || !p["name"].is_string() ||
        !p.contains("priority") || !p["priority"].is_number_integer() ||
        !p.contains("symbol_versions") || !p["symbol_versions"].is_object())
      return malformed("a policy without name, priority or symbol_versions");
    Policy policy;
    std::string base = p["name"].get<std::string>();
    policy.priority = p["priority"].get<int>();
    const nlohmann::json& versions = p["symbol_versions"];
    if (base != "linux" && !versions.contains(architecture)) continue;
    policy.name = base + "_" + architecture;
    nlohmann::json aliases = p.value("aliases", nlohmann::json::array());
    nlohmann::json whitelist =
        p.value("lib_whitelist", nlohmann::json::array());
    nlohmann::json blacklist = p.value("blacklist", nlohmann::json::object());
    std::set<std::string> alias_set;
    if (std::string e = StringsAt(aliases, alias_set); !e.empty())
      return malformed(base + ": aliases: " + e);
    // In the file's order, which auditwheel repair keeps.
    for (const nlohmann::json& a : aliases)
      policy.aliases.push_back(a.get<std::string>() + "_" + architecture);
    if (base != "linux") {
      if (!versions[architecture].is_object())
        return malformed(base + ": symbol_versions");
      for (const auto& [prefix, list] : versions[architecture].items())
        if (std::string e = StringsAt(list, policy.symbol_versions[prefix]);
            !e.empty())
          return malformed(base + ": symbol_versions: " + e);
    }
    if (std::string e = StringsAt(whitelist, policy.whitelist); !e.empty())
      return malformed(base + ": lib_whitelist: " + e);
    if (!blacklist.is_object()) return malformed(base + ": blacklist");
    for (const auto& [lib, list] : blacklist.items())
      if (std::string e = StringsAt(list, policy.blacklist[lib]); !e.empty())
        return malformed(base + ": blacklist: " + e);
    result.policies_.push_back(std::move(policy));
  }
  std::stable_sort(
      result.policies_.begin(), result.policies_.end(),
      [](const Policy& a, const Policy& b) { return a.priority < b.priority; });
  if (result.policies_.empty() || !result.policies_[0].IsGenericLinux())
    return malformed("no generic linux policy");
  return result;
}

Result<Policies> Policies::Embedded(const std::string& architecture) {
  const EmbeddedFile* f = EmbeddedPolicyFile("manylinux-policy.json");
  if (!f) return Error::Internal("kernelc carries no manylinux policy file");
  return Parse(f->contents, architecture);
}

const Policy* Policies::Find(std::string_view tag) const {
  for (const Policy& p : policies_)
    if (p.name == tag ||
        std::find(p.aliases.begin(), p.aliases.end(), tag) != p.aliases.end())
      return &p;
  return nullptr;
}

std::string_view PolicySource() {
  const EmbeddedFile* f = EmbeddedPolicyFile("VERSION");
  return f ? llvm::StringRef(f->contents.data(), f->contents.size()).trim()
           : "unknown";
}

std::vector<Violation> Violations(const Policy& policy,
                                  const ElfLibrary& library) {
  std::vector<Violation> found;
  if (policy.IsGenericLinux()) return found;
  // Symbol versions: each that the policy knows the prefix of must be one
  // it provides (auditwheel's versioned_symbols_policy).
  for (const auto& [lib, versions] : library.versions) {
    std::set<std::string> missing;
    for (const std::string& v : versions) {
      auto provided = policy.symbol_versions.find(Prefix(v));
      if (provided != policy.symbol_versions.end() &&
          !provided->second.count(v.substr(Prefix(v).size() + 1)))
        missing.insert(v);
    }
    if (!missing.empty())
      found.push_back(
          {Violation::kSymbolVersions, library.name, Join(missing), lib});
  }
  std::set<std::string> external;
  for (const std::string& lib : library.needed)
    if (!IsLoader(lib) && !policy.whitelist.count(lib)) external.insert(lib);
  if (!external.empty())
    found.push_back(
        {Violation::kExternalLibraries, library.name, Join(external), ""});
  for (const auto& [lib, symbols] : policy.blacklist) {
    if (std::find(library.needed.begin(), library.needed.end(), lib) ==
        library.needed.end())
      continue;
    std::set<std::string> used;
    for (const std::string& s : symbols)
      if (s == "*" || library.undefined_symbols.count(s)) used.insert(s);
    if (!used.empty())
      found.push_back(
          {Violation::kBlacklistedSymbols, library.name, Join(used), lib});
  }
  if (library.x86_isa_level > 1)
    found.push_back({Violation::kIsaLevel, library.name,
                     std::to_string(library.x86_isa_level), ""});
  return found;
}

void ReportViolations(const std::vector<Violation>& violations,
                      diag::DiagnosticEngine& diags) {
  for (const Violation& v : violations) switch (v.kind) {
      case Violation::kSymbolVersions:
        diags.Report<Id::kNeedsSymbolVersions>({}, v.library, v.items, v.from);
        break;
      case Violation::kExternalLibraries:
        diags.Report<Id::kLinksExternalLibraries>({}, v.library, v.items);
        break;
      case Violation::kBlacklistedSymbols:
        diags.Report<Id::kUsesBlacklistedSymbols>({}, v.library, v.items,
                                                  v.from);
        break;
      case Violation::kIsaLevel:
        diags.Report<Id::kNeedsIsaLevel>({}, v.library, v.items);
        break;
    }
}

Result<std::vector<std::string>> ChoosePlatformTags(
    const std::vector<ElfLibrary>& libraries, std::string_view requested,
    diag::DiagnosticEngine& diags) {
  if (libraries.empty()) {
    diags.Report<Id::kNoLibraryToTag>({});
    return Error::Reported();
  }
  const ElfLibrary& first = libraries.front();
  for (const ElfLibrary& lib : libraries) {
    if (lib.architecture.empty()) {
      diags.Report<Id::kUntaggedArchitecture>({}, lib.name, lib.machine);
      return Error::Reported();
    }
    if (lib.architecture != first.architecture) {
      diags.Report<Id::kLibrariesOfTwoArchitectures>(
          {}, first.name, first.architecture, lib.name, lib.architecture);
      return Error::Reported();
    }
  }
  const std::string& arch = first.architecture;
  Result<Policies> policies = Policies::Embedded(arch);
  if (!policies.ok()) return policies.error();
  const std::vector<Policy>& all = policies.value().all();
  auto violations = [&libraries](const Policy& p) {
    std::vector<Violation> found;
    for (const ElfLibrary& lib : libraries)
      for (Violation& v : Violations(p, lib)) found.push_back(std::move(v));
    return found;
  };
  auto tags_of = [](const Policy& p) {
    std::vector<std::string> tags = {p.name};
    tags.insert(tags.end(), p.aliases.begin(), p.aliases.end());
    return tags;
  };

  // The highest priority that admits the libraries. The policies grow
  // monotonically (PEP 600), so this is the minimum of auditwheel's verdicts
  // on symbol versions, linked libraries, blacklisted symbols and ISA.
  const Policy* best = &all.front();
  for (const Policy& p : all)
    if (violations(p).empty()) best = &p;
  if (requested.empty()) {
    if (best->IsGenericLinux() && all.size() > 1) {
      diags.Report<Id::kWheelNotManylinux>({}, best->name, first.name);
      ReportViolations(violations(all[1]), diags);  // the newest glibc's
    }
    return tags_of(*best);
  }

  // An error about the requested tag, then the tag the libraries can have.
  auto reject = [&](auto report) -> Error {
    report();
    if (best->IsGenericLinux())
      diags.Report<Id::kOnlyPlatformTag>({}, best->name);
    else
      diags.Report<Id::kWidestPlatformTag>({}, best->name);
    return Error::Reported();
  };
  TagParts parts = ParseTag(requested);
  if (parts.kind == TagParts::kOther)
    return reject([&] {
      diags.Report<Id::kPlatformNotLinux>({}, requested, first.name, arch,
                                          first.machine);
    });
  if (parts.kind == TagParts::kMusllinux)
    return reject([&] {
      diags.Report<Id::kPlatformForMusl>({}, requested, first.name, arch,
                                         first.machine);
    });
  if (parts.architecture != arch)
    return reject([&] {
      diags.Report<Id::kPlatformForOtherArchitecture>(
          {}, requested, parts.architecture, first.name, arch, first.machine);
    });
  const Policy* policy = policies.value().Find(requested);
  if (!policy) {
    std::vector<std::string> known;
    for (const Policy& p : all)
      if (!p.IsGenericLinux()) known.push_back(p.name);
    return reject([&] {
      diags.Report<Id::kUnknownManylinuxPolicy>(
          {}, requested, PolicySource(), arch,
          fmt::format("{}", fmt::join(known, ", ")));
    });
  }
  if (std::vector<Violation> found = violations(*policy); !found.empty())
    return reject([&] {
      diags.Report<Id::kLibraryViolatesPolicy>({}, first.name, requested);
      ReportViolations(found, diags);
    });
  return tags_of(*policy);
}

}  // namespace kernelc::wheel
