// ELF files for the tests, written from YAML descriptions by LLVM's
// yaml2obj library, so that each test states the headers, sections and
// symbols it reads.
#ifndef KERNELC_COMPILER_WHEEL_TEST_ELF_H_
#define KERNELC_COMPILER_WHEEL_TEST_ELF_H_

#include <llvm/ObjectYAML/yaml2obj.h>
#include <llvm/Support/YAMLTraits.h>
#include <llvm/Support/raw_ostream.h>

#include <catch2/catch.hpp>
#include <string>

namespace kernelc::wheel {

inline std::string ElfFromYaml(const std::string& yaml) {
  std::string bytes;
  llvm::raw_string_ostream out(bytes);
  llvm::yaml::Input in(yaml);
  std::string errors;
  bool ok = llvm::yaml::convertYAML(
      in, out, [&errors](const llvm::Twine& msg) { errors += msg.str(); });
  INFO(errors);
  REQUIRE(ok);
  return out.str();
}

// The YAML of a shared library's header: `machine` ("EM_X86_64"),
// `elf_class` ("ELFCLASS64"), `data` ("ELFDATA2LSB") and `flags`. Sections
// may follow.
inline std::string ElfHeaderYaml(const std::string& machine,
                                 const std::string& elf_class = "ELFCLASS64",
                                 const std::string& data = "ELFDATA2LSB",
                                 const std::string& flags = "") {
  return "--- !ELF\nFileHeader:\n  Class: " + elf_class + "\n  Data: " + data +
         "\n  Type: ET_DYN\n  Machine: " + machine + "\n" +
         (flags.empty() ? "" : "  Flags: [ " + flags + " ]\n");
}

// A shared library with no sections: only its header.
inline std::string HeaderOnlyElf(const std::string& machine,
                                 const std::string& elf_class = "ELFCLASS64",
                                 const std::string& data = "ELFDATA2LSB",
                                 const std::string& flags = "") {
  return ElfFromYaml(ElfHeaderYaml(machine, elf_class, data, flags));
}

}  // namespace kernelc::wheel

#endif  // KERNELC_COMPILER_WHEEL_TEST_ELF_H_
