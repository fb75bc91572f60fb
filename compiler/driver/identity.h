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

// The build cache's direct key: everything known before any compiler work,
// as this machine sees it (absolute paths; kernelc's executable, the host
// compiler and each target's toolchain by identity; the working
// directory). `o` as resolved (ResolvePackageName). The headers the
// sources include are checked per cache entry. Empty when something cannot
// be read or identified: then the build goes without the cache, and
// reports the problem itself. The units remember the toolchains they
// named.
std::string CacheKey(const Options& o, TargetUnits& units);

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
