#!/usr/bin/env bash
# Sets up a fresh machine for kernelc: Debian packages, the two Python
# environments, the XLA FFI headers of the floor jaxlib, and the Bazel build
# of the kernelc compiler. Safe to run again: each step only does what is
# missing, except that the newest jax is looked for on every run.
#
# The environments:
#   .venv        Python 3.12 with the newest jax and jaxlib on PyPI
#                (tools/requirements.txt): the whole test suite runs here.
#   .venv-floor  Python 3.11 with jax and jaxlib 0.8.1, the oldest that
#                generated packages support (tools/requirements-floor.txt):
#                the end-to-end tests run here too.
# Python 3.12 is found on PATH or in pyenv. Where there is none (a fresh
# Debian 12 has only its python3.11), .venv is made with Python 3.11, which
# gets the newest jax released for 3.11 (0.10.2), and set-up says so.
set -euo pipefail
cd "$(dirname "$0")/.."

# The oldest jaxlib whose registry accepts handlers built against older FFI
# API versions (0.8.1, FFI API 0.2). Generated libraries build against its
# headers, so they register on every jaxlib from this one to the newest.
FFI_FLOOR_JAXLIB=0.8.1

# find_python X.Y: the path of a working Python X.Y (PATH first, then
# pyenv's versions), or nothing.
find_python() {
  local want=$1 root candidates=()
  candidates+=("$(command -v "python$want" 2>/dev/null || true)")
  root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
  candidates+=("$root"/versions/"$want".*/bin/"python$want")
  candidates+=("/usr/bin/python$want")
  for py in "${candidates[@]}"; do
    if [ -n "$py" ] && [ -x "$py" ] &&
       [ "$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$want" ]; then
      echo "$py"
      return
    fi
  done
}

# venv_python VENV: the X.Y of an environment's Python, or nothing.
venv_python() {
  "$1/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true
}

python_newest=$(find_python 3.12)
python_floor=$(find_python 3.11)
if [ -z "$python_floor" ]; then
  python_floor=$(command -v python3)
  echo "setup: no Python 3.11 found: the floor environment uses $python_floor"
fi
if [ -z "$python_newest" ]; then
  python_newest=$python_floor
  echo "setup: no Python 3.12 found (on PATH or in pyenv): .venv and the full" \
       "suite use $python_newest, with the newest jax released for its" \
       "version (jax 0.12 and newer need Python 3.12)"
fi

# libboost-context-dev: the fibers of the CPU block executor, linked
# statically into generated libraries.
apt_packages=(bazel-bootstrap clang-19 llvm-19-dev libclang-19-dev libclang-rt-19-dev
              liblld-19-dev libfmt-dev libcli11-dev nlohmann-json3-dev catch2
              libzip-dev libboost-context-dev)
# `python -m venv` needs ensurepip, which Debian's Pythons leave to the
# python3-venv package; other Pythons (pyenv's, for one) bring their own.
for py in "$python_newest" "$python_floor"; do
  if ! "$py" -c 'import ensurepip' >/dev/null 2>&1; then
    apt_packages+=(python3-venv)
    break
  fi
done
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

# make_venv DIR PYTHON: (re)creates DIR with PYTHON unless it already has
# that Python's version. An environment that is a symbolic link belongs to
# someone else and is left alone.
make_venv() {
  local dir=$1 py=$2 want
  want=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  if [ -L "$dir" ]; then
    [ "$(venv_python "$dir")" = "$want" ] ||
      echo "setup: $dir is a link to another environment (Python" \
           "$(venv_python "$dir")): left as it is"
    return
  fi
  if [ -x "$dir/bin/python" ] && [ "$(venv_python "$dir")" = "$want" ]; then
    return
  fi
  echo "setup: creating $dir with Python $want ($py)"
  rm -rf "$dir"
  "$py" -m venv "$dir"
}

make_venv .venv "$python_newest"
make_venv .venv-floor "$python_floor"

pip_install() {
  local venv=$1; shift
  "$venv/bin/pip" install -q --disable-pip-version-check "$@"
}
if ! .venv/bin/python -c 'import jax, numpy, pytest' >/dev/null 2>&1 ||
   [ ! -x .venv/bin/ruff ] ||
   [ tools/requirements.txt -nt .venv/.requirements-stamp ]; then
  echo "setup: installing Python requirements in .venv"
  pip_install .venv -r tools/requirements.txt
  touch .venv/.requirements-stamp
fi
# The newest jax is the one tested: a release since the last run is
# installed now (a quick no-op otherwise). Without a package index the
# environment stays as it is.
if ! pip_install .venv --upgrade --upgrade-strategy only-if-needed jax jaxlib; then
  echo "setup: could not look for a newer jax; testing the one installed"
fi
if ! .venv-floor/bin/python -c 'import jax, numpy, pytest' >/dev/null 2>&1 ||
   [ tools/requirements-floor.txt -nt .venv-floor/.requirements-stamp ]; then
  echo "setup: installing Python requirements in .venv-floor"
  pip_install .venv-floor -r tools/requirements-floor.txt
  touch .venv-floor/.requirements-stamp
fi
for venv in .venv .venv-floor; do
  echo "setup: $venv: $("$venv/bin/python" -c 'import sys, jax, jaxlib
print("Python %d.%d.%d" % sys.version_info[:3], "jax", jax.__version__,
      "jaxlib", jaxlib.__version__)')"
done

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
  pip_install .venv "nvidia-cuda-nvrtc==13.0.*" "nvidia-cuda-runtime==13.0.*" \
    "nvidia-cuda-nvcc==13.0.*"
fi

echo "setup: building kernelc"
# expr_eval: the compiler's expression evaluator, which the Python tests
# hold the generated Python to.
bazel build //tools:kernelc //compiler/expr:expr_eval
