#!/usr/bin/env bash
# Sets up a fresh machine for kernelc: Debian packages, the Python
# environment in .venv, the XLA FFI headers of the floor jaxlib, and the
# Bazel build of the kernelc compiler. Safe to run again: each step only does
# what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# The oldest jaxlib whose registry accepts handlers built against older FFI
# API versions (0.8.1, FFI API 0.2). Generated libraries build against its
# headers, so they register on every jaxlib from this one to the newest.
FFI_FLOOR_JAXLIB=0.8.1

# libboost-context-dev: the fibers of the CPU block executor, linked
# statically into generated libraries.
apt_packages=(bazel-bootstrap clang-19 llvm-19-dev libclang-19-dev libclang-rt-19-dev
              liblld-19-dev libfmt-dev libcli11-dev nlohmann-json3-dev catch2
              libzip-dev libboost-context-dev)
# `python3 -m venv` needs ensurepip, which Debian's python3 leaves to the
# python3-venv package; other Pythons (pyenv's, for one) bring their own.
if [ ! -x .venv/bin/python ] && ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
  apt_packages+=(python3-venv)
fi
missing=()
for p in "${apt_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
if ! .venv/bin/python -c 'import jax, numpy, pytest' >/dev/null 2>&1 ||
   [ ! -x .venv/bin/ruff ] ||
   [ tools/requirements.txt -nt .venv/.requirements-stamp ]; then
  echo "setup: installing Python requirements"
  .venv/bin/pip install -q --disable-pip-version-check -r tools/requirements.txt
  touch .venv/.requirements-stamp
fi

ffi_dir=.cache/xla_ffi
if [ "$(cat "$ffi_dir/VERSION" 2>/dev/null)" != "$FFI_FLOOR_JAXLIB" ]; then
  echo "setup: fetching XLA FFI headers from jaxlib $FFI_FLOOR_JAXLIB"
  rm -rf .cache/wheels "$ffi_dir"
  .venv/bin/pip download -q --disable-pip-version-check --no-deps \
    --only-binary=:all: -d .cache/wheels "jaxlib==$FFI_FLOOR_JAXLIB"
  .venv/bin/python - "$ffi_dir" .cache/wheels/jaxlib-*.whl <<'PY'
import os, sys, zipfile
out, wheel = sys.argv[1], sys.argv[2]
prefix = "jaxlib/include/"
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist()
             if n.startswith(prefix + "xla/ffi/api/") and n.endswith(".h")]
    if not names:
        sys.exit(f"setup: no XLA FFI headers in {wheel}")
    for n in names:
        dest = os.path.join(out, n[len(prefix):])
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(z.read(n))
PY
  echo "$FFI_FLOOR_JAXLIB" > "$ffi_dir/VERSION"
  rm -rf .cache/wheels
fi

# The cuda target compiles with NVRTC (and the tests run ptxas on its PTX).
# Without a CUDA toolkit, NVIDIA's wheels provide both inside .venv, where
# kernelc looks for them ($VIRTUAL_ENV/lib/python*/site-packages/nvidia).
if [ ! -e "${CUDA_HOME:-/usr/local/cuda}/lib64/libnvrtc.so" ] &&
   ! .venv/bin/python -c 'import nvidia.cu13' >/dev/null 2>&1; then
  echo "setup: no CUDA toolkit: installing NVIDIA's NVRTC and nvcc wheels"
  .venv/bin/pip install -q --disable-pip-version-check \
    "nvidia-cuda-nvrtc==13.0.*" "nvidia-cuda-runtime==13.0.*" \
    "nvidia-cuda-nvcc==13.0.*"
fi

echo "setup: building kernelc"
# expr_eval: the compiler's expression evaluator, which the Python tests
# hold the generated Python to.
bazel build //tools:kernelc //compiler/expr:expr_eval
