#!/usr/bin/env bash
# Runs the GPU tests and then the GPU benchmark on a machine with a CUDA GPU,
# jax with its CUDA plugin, and the packages prebuilt by
# tools/prebuild_gpu.sh (out/gpu_packages, or $KERNELC_GPU_PACKAGES). Needs
# no Bazel, libclang or package registry: see DEVELOPERS.md.
# Exit status: the tests'.
set -uo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
pkgs=${KERNELC_GPU_PACKAGES:-out/gpu_packages}
echo "== $($py -c 'import sys, jax; print("python", sys.version.split()[0], "jax", jax.__version__, jax.devices())')"
if [ ! -d "$pkgs" ]; then
  echo "gpu_check: no prebuilt packages in $pkgs: run tools/prebuild_gpu.sh first" >&2
  exit 1
fi
echo "== GPU tests (pytest tests/gpu)"
(cd tests/gpu && $py -m pytest -q -rs -p no:cacheprovider .)
rc=$?
echo "== GPU benchmark (bench/gpu_bench.py)"
timeout 240 $py bench/gpu_bench.py || echo "gpu_check: benchmark failed ($?)"
echo "== vmap benchmark on the GPU (bench/vmap_bench.py)"
timeout 240 $py bench/vmap_bench.py "$pkgs" --package gpu_examples ||
  echo "gpu_check: vmap benchmark failed ($?)"
exit $rc
