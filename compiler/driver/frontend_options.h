// How the frontend reads the sources of a build.
#ifndef KERNELC_COMPILER_DRIVER_FRONTEND_OPTIONS_H_
#define KERNELC_COMPILER_DRIVER_FRONTEND_OPTIONS_H_

#include "compiler/driver/options.h"
#include "compiler/frontend/frontend.h"

namespace kernelc::driver {

// The frontend's options for a build with options `o`: its -I and -D, and
// the CUDA toolkit of the NVRTC that the cuda target would use. Sources are
// read as the CPU sees them, unless the build is for the cuda target alone,
// which reads them as CUDA device code against the toolkit's headers (those
// NVRTC compiles with), so that any CUDA header works. Where no toolkit
// headers are found, NVRTC has none either, and the CPU's view serves.
frontend::Options FrontendOptions(const Options& o);

}  // namespace kernelc::driver

#endif  // KERNELC_COMPILER_DRIVER_FRONTEND_OPTIONS_H_
