#include "compiler/wheel/manylinux.h"

#include <catch2/catch.hpp>

#include "compiler/wheel/test_elf.h"

namespace kernelc::wheel {
namespace {

using Strings = std::vector<std::string>;

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
    Result<ElfLibrary> lib =
        ReadElfLibrary(HeaderOnlyElf(machine, cls, data, flags), "lib.so");
    REQUIRE(lib.ok());
    REQUIRE(lib.value().architecture == arch);
  }
  Result<ElfLibrary> lib = ReadElfLibrary(
      HeaderOnlyElf("EM_PPC64", "ELFCLASS64", "ELFDATA2MSB"), "lib.so");
  REQUIRE(lib.value().machine == "EM_PPC64, 64-bit, big-endian");
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
  Result<ElfLibrary> lib = ReadElfLibrary(
      ElfFromYaml(ElfHeaderYaml("EM_X86_64") + kLinkedLibrarySections), "l.so");
  INFO((lib.ok() ? "" : lib.error().message));
  REQUIRE(lib.ok());
  REQUIRE(lib.value().architecture == "x86_64");
  REQUIRE(lib.value().needed == Strings{"libc.so.6", "libz.so.1"});
  REQUIRE(lib.value().versions ==
          std::map<std::string, std::set<std::string>>{
              {"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.17"}},
              {"libstdc++.so.6", {"GLIBCXX_3.4.30"}}});
  REQUIRE(lib.value().undefined_symbols == std::set<std::string>{"memcpy"});
  REQUIRE(lib.value().x86_isa_level == 1);
}

TEST_CASE("ReadElfLibrary reads the x86-64 ISA level of a GNU property note") {
  // GNU_PROPERTY_X86_ISA_1_NEEDED (0xc0008002), 4 bytes: baseline | v3.
  Result<ElfLibrary> lib =
      ReadElfLibrary(ElfFromYaml(ElfHeaderYaml("EM_X86_64") + R"(Sections:
  - Name:         .note.gnu.property
    Type:         SHT_NOTE
    AddressAlign: 8
    Notes:
      - Name: GNU
        Type: NT_GNU_PROPERTY_TYPE_0
        Desc: 028000c0040000000500000000000000
)"),
                     "v3.so");
  REQUIRE(lib.ok());
  REQUIRE(lib.value().x86_isa_level == 3);
}

TEST_CASE("ReadElfLibrary rejects what is not ELF") {
  REQUIRE(ReadElfLibrary("#!/bin/sh\n", "x.so").error().message ==
          "'x.so' is not an ELF file");
  REQUIRE(ReadElfLibrary(std::string("\x7f"
                                     "ELF\x09\x01",
                                     6),
                         "y.so")
              .error()
              .message == "'y.so' is not an ELF file");
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
  Result<PlatformTags> t = ChoosePlatformTags(
      {Library({{"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.17"}}},
               {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2"})},
      "");
  REQUIRE(t.ok());
  REQUIRE(t.value().tags ==
          Strings{"manylinux_2_17_x86_64", "manylinux2014_x86_64"});
  REQUIRE(t.value().not_manylinux.empty());
  t = ChoosePlatformTags(
      {Library({{"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.32"}},
                {"libstdc++.so.6", {"GLIBCXX_3.4", "GLIBCXX_3.4.30"}}},
               {"libstdc++.so.6", "libc.so.6"})},
      "");
  REQUIRE(t.value().tags == Strings{"manylinux_2_35_x86_64"});
  t = ChoosePlatformTags({Library({})}, "");
  REQUIRE(t.value().tags ==
          Strings{"manylinux_2_5_x86_64", "manylinux1_x86_64"});
}

TEST_CASE("ChoosePlatformTags falls back to linux_<arch>, saying why") {
  ElfLibrary lib = Library({{"libc.so.6", {"GLIBC_2.17"}}},
                           {"libc.so.6", "libcudart.so.12"});
  Result<PlatformTags> t = ChoosePlatformTags({lib}, "");
  REQUIRE(t.value().tags == Strings{"linux_x86_64"});
  REQUIRE(t.value().not_manylinux ==
          Strings{"it links libcudart.so.12, which the policy does not let a "
                  "wheel take from the system"});
  lib = Library({{"libc.so.6", {"GLIBC_2.17", "GLIBC_PRIVATE"}}});
  t = ChoosePlatformTags({lib}, "");
  REQUIRE(t.value().tags == Strings{"linux_x86_64"});
  REQUIRE(t.value().not_manylinux ==
          Strings{"it needs GLIBC_PRIVATE from libc.so.6"});
  lib = Library({}, {"libz.so.1"});
  lib.undefined_symbols = {"deflate", "_tr_flush_block"};
  t = ChoosePlatformTags({lib}, "");
  REQUIRE(t.value().tags == Strings{"linux_x86_64"});
  REQUIRE(t.value().not_manylinux ==
          Strings{"it uses _tr_flush_block of libz.so.1, which the policy "
                  "forbids"});
  lib = Library({});
  lib.x86_isa_level = 3;
  t = ChoosePlatformTags({lib}, "");
  REQUIRE(t.value().tags == Strings{"linux_x86_64"});
  REQUIRE(t.value().not_manylinux ==
          Strings{"it needs the x86-64-v3 instruction set (its GNU property "
                  "note)"});
}

TEST_CASE("ChoosePlatformTags checks a requested tag against the library") {
  ElfLibrary lib = Library(
      {{"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.32"}},
       {"libstdc++.so.6", {"GLIBCXX_3.4", "GLIBCXX_3.4.29", "GLIBCXX_3.4.30"}}},
      {"libstdc++.so.6", "libc.so.6"});
  Result<PlatformTags> t = ChoosePlatformTags({lib}, "manylinux_2_39_x86_64");
  REQUIRE(t.value().tags == Strings{"manylinux_2_39_x86_64"});
  t = ChoosePlatformTags({lib}, "linux_x86_64");
  REQUIRE(t.value().tags == Strings{"linux_x86_64"});
  const std::pair<const char*, const char*> errors[] = {
      {"manylinux2014_x86_64",
       "'_kernelc_0123.so' cannot be tagged manylinux2014_x86_64: it needs "
       "GLIBC_2.32 from libc.so.6; it needs GLIBCXX_3.4.29, GLIBCXX_3.4.30 "
       "from libstdc++.so.6; the widest tag it can have is "
       "manylinux_2_35_x86_64"},
      {"manylinux_2_34_x86_64",
       "'_kernelc_0123.so' cannot be tagged manylinux_2_34_x86_64: it needs "
       "GLIBCXX_3.4.30 from libstdc++.so.6; the widest tag it can have is "
       "manylinux_2_35_x86_64"},
      {"win_amd64",
       "'win_amd64' is not a Linux platform tag: '_kernelc_0123.so' is an "
       "ELF shared library for Linux on x86_64 (EM_X86_64, 64-bit, "
       "little-endian); the widest tag it can have is manylinux_2_35_x86_64"},
      {"macosx_11_0_arm64",
       "'macosx_11_0_arm64' is not a Linux platform tag: '_kernelc_0123.so' "
       "is an ELF shared library for Linux on x86_64 (EM_X86_64, 64-bit, "
       "little-endian); the widest tag it can have is manylinux_2_35_x86_64"},
      {"manylinux_2_17_aarch64",
       "'manylinux_2_17_aarch64' is a platform tag for aarch64: "
       "'_kernelc_0123.so' is an ELF shared library for Linux on x86_64 "
       "(EM_X86_64, 64-bit, little-endian); the widest tag it can have is "
       "manylinux_2_35_x86_64"},
      {"musllinux_1_2_x86_64",
       "'musllinux_1_2_x86_64' is a platform tag for musl libc: "
       "'_kernelc_0123.so' is an ELF shared library for Linux on x86_64 "
       "(EM_X86_64, 64-bit, little-endian), linked with glibc; the widest "
       "tag it can have is manylinux_2_35_x86_64"},
  };
  for (const auto& [tag, message] : errors) {
    INFO(tag);
    t = ChoosePlatformTags({lib}, tag);
    REQUIRE(!t.ok());
    REQUIRE(t.error().message == message);
  }
  t = ChoosePlatformTags({lib}, "manylinux_2_99_x86_64");
  REQUIRE(llvm::StringRef(t.error().message)
              .starts_with("'manylinux_2_99_x86_64' is not a manylinux policy "
                           "that kernelc knows (auditwheel "));
}

TEST_CASE("ChoosePlatformTags wants libraries of one known architecture") {
  ElfLibrary a = Library({}), b = Library({});
  b.name = "other.so";
  b.architecture = "aarch64";
  REQUIRE(ChoosePlatformTags({a, b}, "").error().message ==
          "'_kernelc_0123.so' is x86_64 but 'other.so' is aarch64");
  b.architecture = "";
  b.machine = "e_machine 43, 64-bit, big-endian";
  REQUIRE(ChoosePlatformTags({b}, "").error().message ==
          "'other.so' (e_machine 43, 64-bit, big-endian) is of an "
          "architecture that has no platform tag");
  REQUIRE(ChoosePlatformTags({}, "").error().message ==
          "the package holds no shared library to tag");
}

}  // namespace
}  // namespace kernelc::wheel
