#include "compiler/wheel/manylinux.h"

#include <catch2/catch.hpp>

#include "compiler/wheel/test_elf.h"

namespace kernelc::wheel {
namespace {

using Strings = std::vector<std::string>;

// ReadElfLibrary's library, which it must read.
ElfLibrary Read(const std::string& bytes, const std::string& name = "lib.so") {
  diag::DiagnosticEngine diags;
  Result<ElfLibrary> lib = ReadElfLibrary(bytes, name, diags);
  INFO(diags.Render());
  REQUIRE(lib.ok());
  return std::move(lib).value();
}

// What ReadElfLibrary reports about `bytes`, which it must not read.
std::string ReadError(const std::string& bytes, const std::string& name) {
  diag::DiagnosticEngine diags;
  REQUIRE(!ReadElfLibrary(bytes, name, diags).ok());
  return diags.Render();
}

// ChoosePlatformTags' tags (none when it fails), and what it reported.
struct Choice {
  Strings tags;
  std::string reported;
};

Choice Choose(const std::vector<ElfLibrary>& libraries,
              std::string_view requested) {
  diag::DiagnosticEngine diags;
  Result<Strings> tags = ChoosePlatformTags(libraries, requested, diags);
  return {tags.ok() ? tags.value() : Strings{}, diags.Render()};
}

TEST_CASE("ReadElfLibrary names the architecture as auditwheel does") {
  const std::tuple<const char*, const char*, const char*, const char*,
                   const char*>
      cases[] = {
          {"EM_X86_64", "ELFCLASS64", "ELFDATA2LSB", "", "x86_64"},
          {"EM_386", "ELFCLASS32", "ELFDATA2LSB", "", "i686"},
          {"EM_AARCH64", "ELFCLASS64", "ELFDATA2LSB", "", "aarch64"},
          {"EM_PPC64", "ELFCLASS64", "ELFDATA2LSB", "", "ppc64le"},
          {"EM_PPC64", "ELFCLASS64", "ELFDATA2MSB", "", "ppc64"},
          {"EM_S390", "ELFCLASS64", "ELFDATA2MSB", "", "s390x"},
          {"EM_RISCV", "ELFCLASS64", "ELFDATA2LSB", "", "riscv64"},
          {"EM_LOONGARCH", "ELFCLASS64", "ELFDATA2LSB", "", "loongarch64"},
          {"EM_ARM", "ELFCLASS32", "ELFDATA2LSB",
           // EF_ARM_VFP_FLOAT is EF_ARM_ABI_FLOAT_HARD's value.
           "EF_ARM_EABI_VER5, EF_ARM_VFP_FLOAT", "armv7l"},
          // Soft-float ARM, 32-bit x86-64 (x32), SPARC: no platform tag.
          {"EM_ARM", "ELFCLASS32", "ELFDATA2LSB", "EF_ARM_EABI_VER5", ""},
          {"EM_X86_64", "ELFCLASS32", "ELFDATA2LSB", "", ""},
          {"EM_SPARCV9", "ELFCLASS64", "ELFDATA2MSB", "", ""},
      };
  for (const auto& [machine, cls, data, flags, arch] : cases) {
    INFO(machine << " " << cls << " " << data << " " << flags);
    REQUIRE(Read(HeaderOnlyElf(machine, cls, data, flags)).architecture ==
            arch);
  }
  REQUIRE(
      Read(HeaderOnlyElf("EM_PPC64", "ELFCLASS64", "ELFDATA2MSB")).machine ==
      "EM_PPC64, 64-bit, big-endian");
}

// libc 2.17 and libstdc++ of GCC 12 by version, and libc and libz by
// DT_NEEDED (through a string table of the test's own, so that the offsets
// are the test's), the dynamic loader's versions (left out), memcpy (an
// import) and a weak import (not one).
constexpr const char* kLinkedLibrarySections = R"(Sections:
  - Name:    .gnu.version
    Type:    SHT_GNU_versym
    Entries: [ 0, 2, 0 ]
  - Name:    .gnu.version_r
    Type:    SHT_GNU_verneed
    Flags:   [ SHF_ALLOC ]
    AddressAlign: 4
    Dependencies:
      - Version: 1
        File:    libc.so.6
        Entries:
          - { Name: GLIBC_2.2.5, Hash: 1, Flags: 0, Other: 2 }
          - { Name: GLIBC_2.17, Hash: 2, Flags: 0, Other: 3 }
      - Version: 1
        File:    libstdc++.so.6
        Entries:
          - { Name: GLIBCXX_3.4.30, Hash: 3, Flags: 0, Other: 4 }
      - Version: 1
        File:    ld-linux-x86-64.so.2
        Entries:
          - { Name: GLIBC_2.35, Hash: 4, Flags: 0, Other: 5 }
  - Name:    .needed_names
    Type:    SHT_STRTAB
    Content: 006c6962632e736f2e36006c69627a2e736f2e3100
  - Name:    .dynamic
    Type:    SHT_DYNAMIC
    Link:    .needed_names
    Entries:
      - { Tag: DT_NEEDED, Value: 1 }
      - { Tag: DT_NEEDED, Value: 11 }
      - { Tag: DT_NULL, Value: 0 }
DynamicSymbols:
  - { Name: memcpy, Binding: STB_GLOBAL }
  - { Name: __gmon_start__, Binding: STB_WEAK }
)";

TEST_CASE("ReadElfLibrary reads what auditwheel reads") {
  ElfLibrary lib =
      Read(ElfFromYaml(ElfHeaderYaml("EM_X86_64") + kLinkedLibrarySections));
  REQUIRE(lib.architecture == "x86_64");
  REQUIRE(lib.needed == Strings{"libc.so.6", "libz.so.1"});
  REQUIRE(lib.versions == std::map<std::string, std::set<std::string>>{
                              {"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.17"}},
                              {"libstdc++.so.6", {"GLIBCXX_3.4.30"}}});
  REQUIRE(lib.undefined_symbols == std::set<std::string>{"memcpy"});
  REQUIRE(lib.x86_isa_level == 1);
}

TEST_CASE("ReadElfLibrary reads the x86-64 ISA level of a GNU property note") {
  // GNU_PROPERTY_X86_ISA_1_NEEDED (0xc0008002), 4 bytes: `bits`, little
  // endian, as hex.
  auto with_isa_needed = [](const std::string& bits) {
    return ElfFromYaml(ElfHeaderYaml("EM_X86_64") + R"(Sections:
  - Name:         .note.gnu.property
    Type:         SHT_NOTE
    AddressAlign: 8
    Notes:
      - Name: GNU
        Type: NT_GNU_PROPERTY_TYPE_0
        Desc: 028000c004000000)" +
                       bits + "00000000\n");
  };
  REQUIRE(Read(with_isa_needed("05000000")).x86_isa_level == 3);  // v3 | base
  REQUIRE(Read(with_isa_needed("01000000")).x86_isa_level == 1);
  // Bits that no ISA level has.
  REQUIRE(ReadError(with_isa_needed("41000000"), "v?.so") ==
          "kernelc: error: 'v?.so' needs an x86-64 ISA that its GNU property "
          "note names by unknown bits (0x40)\n");
}

TEST_CASE("ReadElfLibrary rejects what is not ELF") {
  REQUIRE(ReadError("#!/bin/sh\n", "x.so") ==
          "kernelc: error: 'x.so' is not an ELF file\n");
  REQUIRE(ReadError(std::string("\x7f"
                                "ELF\x09\x01",
                                6),
                    "y.so") == "kernelc: error: 'y.so' is not an ELF file\n");
  std::string truncated = HeaderOnlyElf("EM_X86_64").substr(0, 40);
  REQUIRE(llvm::StringRef(ReadError(truncated, "z.so"))
              .starts_with("kernelc: error: cannot read 'z.so' as ELF: "));
}

ElfLibrary Library(std::map<std::string, std::set<std::string>> versions,
                   Strings needed = {"libc.so.6"}) {
  ElfLibrary lib;
  lib.name = "_kernelc_0123.so";
  lib.architecture = "x86_64";
  lib.machine = "EM_X86_64, 64-bit, little-endian";
  lib.needed = std::move(needed);
  lib.versions = std::move(versions);
  return lib;
}

TEST_CASE("ChoosePlatformTags takes the widest policy the library allows") {
  // auditwheel's policies: GLIBC_2.17 is manylinux2014's glibc, and GCC 12's
  // libstdc++ (GLIBCXX_3.4.30) that of manylinux_2_35.
  Choice c =
      Choose({Library({{"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.17"}}},
                      {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2"})},
             "");
  REQUIRE(c.tags == Strings{"manylinux_2_17_x86_64", "manylinux2014_x86_64"});
  REQUIRE(c.reported.empty());
  c = Choose({Library({{"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.32"}},
                       {"libstdc++.so.6", {"GLIBCXX_3.4", "GLIBCXX_3.4.30"}}},
                      {"libstdc++.so.6", "libc.so.6"})},
             "");
  REQUIRE(c.tags == Strings{"manylinux_2_35_x86_64"});
  c = Choose({Library({})}, "");
  REQUIRE(c.tags == Strings{"manylinux_2_5_x86_64", "manylinux1_x86_64"});
}

TEST_CASE("ChoosePlatformTags falls back to linux_<arch>, saying why") {
  const std::string warning =
      "kernelc: warning: the wheel is tagged linux_x86_64, which PyPI does "
      "not accept: no manylinux policy admits '_kernelc_0123.so'\n"
      "kernelc: note: '_kernelc_0123.so' ";
  ElfLibrary lib = Library({{"libc.so.6", {"GLIBC_2.17"}}},
                           {"libc.so.6", "libcudart.so.12"});
  Choice c = Choose({lib}, "");
  REQUIRE(c.tags == Strings{"linux_x86_64"});
  REQUIRE(c.reported == warning +
                            "links libcudart.so.12, which the policy does not "
                            "let a wheel take from the system\n");
  lib = Library({{"libc.so.6", {"GLIBC_2.17", "GLIBC_PRIVATE"}}});
  c = Choose({lib}, "");
  REQUIRE(c.tags == Strings{"linux_x86_64"});
  REQUIRE(c.reported == warning + "needs GLIBC_PRIVATE from libc.so.6\n");
  lib = Library({}, {"libz.so.1"});
  lib.undefined_symbols = {"deflate", "_tr_flush_block"};
  c = Choose({lib}, "");
  REQUIRE(c.tags == Strings{"linux_x86_64"});
  REQUIRE(c.reported == warning +
                            "uses _tr_flush_block of libz.so.1, which the "
                            "policy forbids\n");
  lib = Library({});
  lib.x86_isa_level = 3;
  c = Choose({lib}, "");
  REQUIRE(c.tags == Strings{"linux_x86_64"});
  REQUIRE(c.reported == warning +
                            "needs the x86-64-v3 instruction set (its GNU "
                            "property note)\n");
}

TEST_CASE("ChoosePlatformTags checks a requested tag against the library") {
  ElfLibrary lib = Library(
      {{"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.32"}},
       {"libstdc++.so.6", {"GLIBCXX_3.4", "GLIBCXX_3.4.29", "GLIBCXX_3.4.30"}}},
      {"libstdc++.so.6", "libc.so.6"});
  REQUIRE(Choose({lib}, "manylinux_2_39_x86_64").tags ==
          Strings{"manylinux_2_39_x86_64"});
  REQUIRE(Choose({lib}, "linux_x86_64").tags == Strings{"linux_x86_64"});
  const std::string what =
      "'_kernelc_0123.so' is an ELF shared library for Linux on x86_64 "
      "(EM_X86_64, 64-bit, little-endian)";
  const std::string widest =
      "kernelc: note: the widest tag it can have is manylinux_2_35_x86_64\n";
  const std::pair<const char*, std::string> errors[] = {
      {"manylinux2014_x86_64",
       "kernelc: error: '_kernelc_0123.so' cannot be tagged "
       "manylinux2014_x86_64\n"
       "kernelc: note: '_kernelc_0123.so' needs GLIBC_2.32 from libc.so.6\n"
       "kernelc: note: '_kernelc_0123.so' needs GLIBCXX_3.4.29, "
       "GLIBCXX_3.4.30 from libstdc++.so.6\n" +
           widest},
      {"manylinux_2_34_x86_64",
       "kernelc: error: '_kernelc_0123.so' cannot be tagged "
       "manylinux_2_34_x86_64\n"
       "kernelc: note: '_kernelc_0123.so' needs GLIBCXX_3.4.30 from "
       "libstdc++.so.6\n" +
           widest},
      {"win_amd64",
       "kernelc: error: 'win_amd64' is not a Linux platform tag: " + what +
           "\n" + widest},
      {"macosx_11_0_arm64",
       "kernelc: error: 'macosx_11_0_arm64' is not a Linux platform tag: " +
           what + "\n" + widest},
      {"manylinux_2_17_aarch64",
       "kernelc: error: 'manylinux_2_17_aarch64' is a platform tag for "
       "aarch64: " +
           what + "\n" + widest},
      {"musllinux_1_2_x86_64",
       "kernelc: error: 'musllinux_1_2_x86_64' is a platform tag for musl "
       "libc: " +
           what + ", linked with glibc\n" + widest},
  };
  for (const auto& [tag, message] : errors) {
    INFO(tag);
    Choice c = Choose({lib}, tag);
    REQUIRE(c.tags.empty());
    REQUIRE(c.reported == message);
  }
  REQUIRE(llvm::StringRef(Choose({lib}, "manylinux_2_99_x86_64").reported)
              .starts_with("kernelc: error: 'manylinux_2_99_x86_64' is not a "
                           "manylinux policy that kernelc knows (auditwheel "));
  // A library that only linux_<arch> admits.
  lib.needed.push_back("libcudart.so.12");
  REQUIRE(Choose({lib}, "manylinux_2_39_x86_64").reported ==
          "kernelc: error: '_kernelc_0123.so' cannot be tagged "
          "manylinux_2_39_x86_64\n"
          "kernelc: note: '_kernelc_0123.so' links libcudart.so.12, which the "
          "policy does not let a wheel take from the system\n"
          "kernelc: note: the only tag it can have is linux_x86_64\n");
}

TEST_CASE("ChoosePlatformTags wants libraries of one known architecture") {
  ElfLibrary a = Library({}), b = Library({});
  b.name = "other.so";
  b.architecture = "aarch64";
  REQUIRE(Choose({a, b}, "").reported ==
          "kernelc: error: '_kernelc_0123.so' is x86_64 but 'other.so' is "
          "aarch64\n");
  b.architecture = "";
  b.machine = "e_machine 43, 64-bit, big-endian";
  REQUIRE(Choose({b}, "").reported ==
          "kernelc: error: 'other.so' (e_machine 43, 64-bit, big-endian) is of "
          "an architecture that has no platform tag\n");
  REQUIRE(Choose({}, "").reported ==
          "kernelc: error: the package holds no shared library to tag\n");
}

}  // namespace
}  // namespace kernelc::wheel
