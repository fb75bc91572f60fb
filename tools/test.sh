#!/usr/bin/env bash
# Sets up (tools/setup.sh) and runs every test: the linter, the C++ unit tests
# with Bazel, then the Python runtime's unit tests and the end-to-end tests
# with pytest, on the newest jax (.venv) and on the oldest supported one
# (.venv-floor). Exits non-zero on any failure, and when pytest finds no test
# to run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh

echo "== lint (ruff check: ruff.toml)"
.venv/bin/ruff check --no-cache

echo "== C++ unit tests and golden tests (bazel test //...)"
# VIRTUAL_ENV: where kernelc finds NVIDIA's NVRTC wheels on a machine
# without a CUDA toolkit (tools/setup.sh), as it does for pytest. `//...`
# also builds the fake-CUDA tier (tests/fake_cuda) that pytest uses.
bazel test //... --test_env=VIRTUAL_ENV="$PWD/.venv"
# A golden case skipped for want of NVRTC says so only in the test's log.
grep -a "^golden case .* skipped" \
  bazel-testlogs/tests/golden/golden_test/test.log >&2 || true

# pytest VENV ARGS...: the runtime's unit tests and the end-to-end tests
# with VENV's Python (tests/python/conftest.py makes DeprecationWarning an
# error). Fails when pytest collects no test.
run_pytest() {
  local venv=$1; shift
  echo "== Python runtime unit tests and end-to-end tests (pytest, $venv:" \
       "$("$venv/bin/python" -c 'import sys, jax
print("Python %d.%d," % sys.version_info[:2], "jax", jax.__version__)'))"
  set +e
  "$venv/bin/python" -m pytest runtime/python tests/python -q -rs \
    -p no:cacheprovider "$@"
  local rc=$?
  set -e
  if [ $rc -eq 5 ]; then
    echo "test.sh: pytest collected no tests" >&2
    exit 1
  fi
  [ $rc -eq 0 ] || exit $rc
}
# The newest jax, then the oldest that generated packages support
# (tools/setup.sh made both environments). On the oldest, the tests that run
# generated packages through jax; the tests of kernelc's build, cache, CLI,
# progress output, precompiled preludes, Bazel rule, wheels, pip install
# and CUDA runtime do not depend on the jax installed.
run_pytest .venv "$@"
run_pytest .venv-floor "$@" \
  --ignore=tests/python/test_bazel_rule.py \
  --ignore=tests/python/test_build_cache.py \
  --ignore=tests/python/test_cli.py \
  --ignore=tests/python/test_cuda_build.py \
  --ignore=tests/python/test_cuda_handlers.py \
  --ignore=tests/python/test_cuda_runtime.py \
  --ignore=tests/python/test_pip_install.py \
  --ignore=tests/python/test_precompiled_prelude.py \
  --ignore=tests/python/test_progress.py \
  --ignore=tests/python/test_wheel.py

# kernelc built with ASan and UBSan over the golden and bad-input tests,
# and each fuzz target for a short fixed time (tools/fuzz.sh SECONDS runs
# them longer).
echo "== golden and bad-input tests, kernelc with ASan and UBSan"
bazel test --config=asan //tests/golden:golden_test \
  //tests/bad_inputs:bad_inputs_test
echo "== fuzz targets, 20 s each (tools/fuzz.sh)"
bash tools/fuzz.sh 20

# The GPU tests: they skip, each with the reason, where jax sees no CUDA GPU
# (the packages come from tools/prebuild_gpu.sh).
echo "== GPU tests (pytest tests/gpu)"
bash tools/prebuild_gpu.sh >/dev/null
(cd tests/gpu && ../../.venv/bin/python -m pytest -q -rs -p no:cacheprovider .)
