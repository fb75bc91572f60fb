// What a static link of kernelc leaves out of Debian's LLVM, and stands in
// for here (@llvm//:static_libraries).
#include <llvm/Config/llvm-config.h>
#include <llvm/Passes/PassPlugin.h>

// Debian's LLVM is built with Polly linked into its tools, so Clang's
// optimization pipeline (clang/CodeGen) and LLVM's LTO call Polly's plugin
// entry point (llvm/Support/Extension.def). Polly's static libraries are a
// package of their own, and Polly runs only when asked for (-mllvm
// -polly), which kernelc never does: this entry point registers nothing.
llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "Polly", LLVM_VERSION_STRING,
          [](llvm::PassBuilder&) {}};
}

// LLD's ELF driver initializes every target LLVM was built with, for link
// time optimization, which kernelc does not use. kernelc compiles for the
// machine it runs on (x86-64) only: the other targets' initializers do
// nothing, so that the link leaves their code generators out (more than a
// third of the executable).
#define KERNELC_NO_TARGET(T)                         \
  extern "C" void LLVMInitialize##T##TargetInfo() {} \
  extern "C" void LLVMInitialize##T##Target() {}     \
  extern "C" void LLVMInitialize##T##TargetMC() {}   \
  extern "C" void LLVMInitialize##T##AsmPrinter() {} \
  extern "C" void LLVMInitialize##T##AsmParser() {}  \
  extern "C" void LLVMInitialize##T##Disassembler() {}

KERNELC_NO_TARGET(AArch64)
KERNELC_NO_TARGET(AMDGPU)
KERNELC_NO_TARGET(ARM)
KERNELC_NO_TARGET(AVR)
KERNELC_NO_TARGET(BPF)
KERNELC_NO_TARGET(Hexagon)
KERNELC_NO_TARGET(Lanai)
KERNELC_NO_TARGET(LoongArch)
KERNELC_NO_TARGET(M68k)
KERNELC_NO_TARGET(MSP430)
KERNELC_NO_TARGET(Mips)
KERNELC_NO_TARGET(NVPTX)
KERNELC_NO_TARGET(PowerPC)
KERNELC_NO_TARGET(RISCV)
KERNELC_NO_TARGET(Sparc)
KERNELC_NO_TARGET(SystemZ)
KERNELC_NO_TARGET(VE)
KERNELC_NO_TARGET(WebAssembly)
KERNELC_NO_TARGET(XCore)
KERNELC_NO_TARGET(Xtensa)
