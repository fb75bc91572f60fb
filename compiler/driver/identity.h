// A build's identity, declared once: each part (kernelc and its toolchain,
// every option through its entry in the option table, what the sources
// hold, each target's part through its unit) states how it enters the two
// digests below (options.h: KeyUse, HashUse).
#ifndef KERNELC_COMPILER_DRIVER_IDENTITY_H_
#define KERNELC_COMPILER_DRIVER_IDENTITY_H_

#include <string>
#include <vector>

#include "compiler/driver/options.h"
#include "compiler/driver/output_names.h"
#include "compiler/driver/target_units.h"
#include "compiler/model/artifacts.h"
#include "compiler/model/model.h"

namespace kernelc::driver {

// kernelc and the compiler of its host code, as this machine sees them
// (kernelc's executable and the host compiler by identity, without
// running them; Clang's version and where the Clang inside kernelc finds
// its headers and libraries): the first part of the cache key, and the
// name of the directory of the precompiled preludes that only they use.
// A hex SHA-256; empty when one cannot be identified. Computed once per
// build: it reads the files' metadata.
std::string ToolchainIdentity();

// The build cache's direct key: everything known before any compiler work,
// as this machine sees it: `toolchain` (ToolchainIdentity), absolute paths,
// each target's toolchain by identity, the working directory. `o` as
// resolved (ResolvePackageName). The headers the sources include are
// checked per cache entry. Empty when something cannot be read or
// identified (an empty `toolchain` too): then the build goes without the
// cache, and reports the problem itself. The units remember the toolchains
// they named.
std::string CacheKey(const Options& o, const std::string& toolchain,
                     TargetUnits& units);

// What the content hash reads of a build once its kernels are compiled.
struct BuiltModule {
  // The model, naming its files as the output does.
  const model::Module* module = nullptr;
  // Where each of module->sources is read.
  const std::vector<std::string>* source_paths = nullptr;
  const OutputNames* names = nullptr;
  const model::BuildInfo* info = nullptr;  // with the targets' binaries
  // The other files the frontend read (the headers the sources include,
  // system headers aside); null for JSON specs.
  const std::vector<std::string>* headers = nullptr;
};

// The content hash (hex SHA-256), which names the package's library and
// symbols: everything that shapes the package's bytes, and nothing of the
// machine (sources named relative to their common directory, kernelc by
// the digest of the files compiled into it, the model's canonical JSON,
// the headers' text, the CUDA images), so the same sources give the same
// package wherever they are built.
std::string ContentHash(const Options& o, const BuiltModule& built,
                        const TargetUnits& units);

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_IDENTITY_H_
