#!/usr/bin/env bash
# Builds every package the GPU tests (tests/gpu) and the GPU benchmark
# (bench/gpu_bench.py) import, into one directory (default out/gpu_packages),
# on a development machine with kernelc built. A GPU machine without Bazel,
# libclang or a package registry then runs them from a copy of the working
# tree that includes this directory: see DEVELOPERS.md.
#
#   bash tools/prebuild_gpu.sh [OUTDIR] [--cuda-arch sm_80,sm_90]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/gpu_packages}
arch=${KERNELC_CUDA_ARCH:-sm_80,sm_90}
kc=bazel-bin/tools/kernelc
[ -x "$kc" ] || bazel build //tools:kernelc
mkdir -p "$out"
build() {  # NAME TARGETS SOURCES...
  local name=$1 targets=$2
  shift 2
  echo "prebuild: $name ($targets, $arch)"
  "$kc" build "$@" -o "$out" --name "$name" --target "$targets" \
    --cuda-arch "$arch"
}
build gpu_examples cpu,cuda examples/saxpy.cu examples/polar.cu \
  examples/matmul.cu examples/histogram.cc
build gpu_dtypes cpu,cuda tests/gpu/kernels/dtypes.cu
build gpu_features cuda tests/gpu/kernels/gpu_features.cu
build gpu_intrinsics cpu,cuda tests/gpu/kernels/intrinsics.cu
build gpu_bench cuda bench/kernels/bench_ops.cu
# PTX kernels: written by hand, and numba-cuda's (where Numba is installed).
build gpu_ptx cuda tests/golden/emit_ptx_spec/spec.json
py=${PYTHON:-.venv/bin/python}
if "$py" -c 'import numba.cuda' >/dev/null 2>&1; then
  PYTHONPATH=python "$py" tests/gpu/kernels/numba_kernels.py "$out/numba_spec"
  build gpu_numba cuda "$out/numba_spec/spec.json"
else
  echo "prebuild: no numba-cuda in $py: gpu_numba is not built"
fi
echo "prebuild: packages in $out"
