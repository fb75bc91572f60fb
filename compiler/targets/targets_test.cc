#include <catch2/catch.hpp>

#include "compiler/targets/cpu_target.h"
#include "compiler/targets/cuda_target.h"

namespace kernelc::targets {
namespace {

model::Kernel KernelAt(std::string name, model::KernelKind kind, int line) {
  model::Kernel k;
  k.name = std::move(name);
  k.kind = kind;
  k.source = "k.cu";
  k.loc = {"k.cu", line, 17};
  return k;
}

TEST_CASE("The cpu target reports block-level features, with each use") {
  model::Module m;
  m.sources = {"k.cu"};
  m.kernels.push_back(KernelAt("plain", model::KernelKind::kGlobal, 1));
  model::Kernel block = KernelAt("block", model::KernelKind::kGlobal, 5);
  block.block_features = {{"__shared__", {"k.cu", 7, 3}},
                          {"__syncthreads", {"k.cu", 9, 3}}};
  m.kernels.push_back(block);
  BuildSettings settings;
  settings.targets = {model::Target::kCpu};
  diag::DiagnosticEngine diags;
  CpuTarget().Check(m, settings, diags);
  REQUIRE(diags.diagnostics().size() == 3);
  CHECK(diags.error_count() == 1);
  CHECK(diags.diagnostics()[0].message ==
        "kernel 'block' uses __shared__ and __syncthreads and cannot target "
        "cpu: the CPU runs threads one after another, so block-level "
        "features are unavailable");
  CHECK(diags.diagnostics()[0].loc.line == 5);
  CHECK(diags.diagnostics()[1].message == "__shared__ used here");
  CHECK(diags.diagnostics()[2].loc.line == 9);
}

TEST_CASE("The cuda target needs the cpu target for host kernels") {
  model::Module m;
  m.sources = {"k.cu"};
  m.kernels.push_back(KernelAt("device", model::KernelKind::kGlobal, 1));
  m.kernels.push_back(KernelAt("host", model::KernelKind::kHost, 3));
  BuildSettings settings;
  settings.targets = {model::Target::kCuda};
  diag::DiagnosticEngine diags;
  CudaTarget().Check(m, settings, diags);
  REQUIRE(diags.diagnostics().size() == 1);
  CHECK(diags.diagnostics()[0].message ==
        "host kernel 'host' (KC_KERNEL) runs only on the CPU: build with "
        "--target cpu,cuda");
  settings.targets = {model::Target::kCpu, model::Target::kCuda};
  diag::DiagnosticEngine with_cpu;
  CudaTarget().Check(m, settings, with_cpu);
  CHECK(with_cpu.diagnostics().empty());
}

TEST_CASE(
    "The cuda target's part of the content hash is NVRTC's version "
    "and its images") {
  model::BuildInfo info;
  CHECK(CudaTarget().ContentHashFields(info).empty());
  info.cuda_version = 13000;
  model::CudaBinary bin;
  bin.source = "src/k.cu";
  bin.images = {{80, false, "cubin", "c80"}, {80, true, "ptx", "p80"}};
  bin.fold_images = {{80, false, "fold", "f80"}};
  info.cuda_binaries = {bin};
  CHECK(CudaTarget().ContentHashFields(info) ==
        IdentityFields{{"cuda", "nvrtc 13.0"},
                       {"src/k.cu", "c80"},
                       {"src/k.cu", "p80"},
                       {"fold", "f80"}});
  CHECK(CpuTarget().ContentHashFields(info).empty());
}

TEST_CASE("The cpu target compiles each source with its entry points") {
  model::Module m;
  m.sources = {"a.cu", "lib/b.cu", "c.cu"};
  std::map<std::string, std::string> generated = {
      {"host_0_a.cc", ""}, {"host_2_c.cc", ""}, {"shim.cc", ""}};
  std::vector<backends::HostBuild::UserUnit> units = CpuTarget().HostUnits(
      m, {"/x/a.cu", "/x/lib/b.cu", "/x/c.cu"}, generated);
  REQUIRE(units.size() == 2);
  CHECK(units[0].file == "host_0_a.cc");
  CHECK(units[0].source_path == "/x/a.cu");
  CHECK(units[1].file == "host_2_c.cc");
  CHECK(CudaTarget().HostUnits(m, {}, generated).empty());
}

}  // namespace
}  // namespace kernelc::targets
