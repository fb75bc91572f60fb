#!/usr/bin/env bash
# Shows that the kernelc distribution needs no compiler: on a minimal
# Debian 12 root (debootstrap --variant=minbase) with Python and nothing to
# compile C or C++ with, it installs the kernelc wheel into a fresh virtual
# environment (jax and numpy from PyPI), builds an example with the
# `kernelc` command, and loads kernels with kernelc.load_inline and
# kernelc.load, running them under jax.jit against NumPy.
#
#     sudo bash tools/clean_root_check.sh [WHEEL]
#
# WHEEL defaults to a wheel built here first (pip wheel .). Runs as root
# (debootstrap, chroot, mounts). The root is made once, in
# $KERNELC_CLEAN_ROOT (default /var/tmp/kernelc-clean-root), and kept for
# the next run; the virtual environment in it is made afresh each time.
# Needs debootstrap and the network (Debian's mirror and PyPI). Not part of
# tools/test.sh: it downloads some 300 MB the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOTDIR=${KERNELC_CLEAN_ROOT:-/var/tmp/kernelc-clean-root}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

if [ "$(id -u)" -ne 0 ]; then
  echo "clean_root_check: needs root (debootstrap, chroot)" >&2
  exit 2
fi
command -v debootstrap >/dev/null || {
  echo "clean_root_check: needs debootstrap (apt-get install debootstrap)" >&2
  exit 2
}

wheel=${1:-}
if [ -z "$wheel" ]; then
  echo "== building the wheel (pip wheel .)"
  rm -rf out/dist
  .venv/bin/pip wheel -q --no-deps -w out/dist .
  wheel=$(ls out/dist/kernelc-*.whl)
fi
wheel=$(realpath "$wheel")

# Commands in the root run with a clean environment (the proxy settings
# aside), as on a machine of its own.
in_root() {
  local keep=()
  for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
    [ -n "${!v:-}" ] && keep+=("$v=${!v}")
  done
  chroot "$ROOTDIR" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    "${keep[@]}" "$@"
}

if [ ! -e "$ROOTDIR/.kernelc-root-ready" ]; then
  echo "== making a minimal Debian 12 root in $ROOTDIR"
  rm -rf "$ROOTDIR"
  debootstrap --variant=minbase bookworm "$ROOTDIR" "$MIRROR" >/dev/null
  cp /etc/resolv.conf "$ROOTDIR/etc/resolv.conf"
  in_root apt-get install -y -qq --no-install-recommends \
    python3 python3-venv ca-certificates >/dev/null
  touch "$ROOTDIR/.kernelc-root-ready"
fi
cp /etc/resolv.conf "$ROOTDIR/etc/resolv.conf"
# Certificate authorities this machine adds (a network that inspects TLS
# needs them for PyPI), trusted in the root too.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$ROOTDIR/usr/local/share/ca-certificates/"
  in_root update-ca-certificates >/dev/null 2>&1
fi

mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[$i]}" || true
  done
}
trap cleanup EXIT
for fs in proc dev; do
  if [ "$fs" = proc ]; then
    mount -t proc proc "$ROOTDIR/proc"
  else
    mount --bind /dev "$ROOTDIR/dev"
  fi
  mounted+=("$ROOTDIR/$fs")
done

echo "== no compiler in the root"
for tool in cc c++ gcc g++ clang clang++ ld ld.lld; do
  if in_root sh -c "command -v $tool" >/dev/null; then
    echo "clean_root_check: $tool is installed in $ROOTDIR" >&2
    exit 1
  fi
done
[ -z "$(in_root sh -c 'ls /usr/lib/gcc* /usr/include/stdio.h' 2>/dev/null)" ] || {
  echo "clean_root_check: $ROOTDIR has C headers or GCC's files" >&2
  exit 1
}

echo "== installing $(basename "$wheel") into a fresh virtual environment"
work=/root/kernelc-check
rm -rf "$ROOTDIR$work"
mkdir -p "$ROOTDIR$work"
cp "$wheel" "$ROOTDIR$work/"
cp examples/saxpy.cu examples/histogram.cc "$ROOTDIR$work/"
in_root python3 -m venv "$work/venv"
in_root "$work/venv/bin/pip" install -q --disable-pip-version-check \
  "$work/$(basename "$wheel")"

echo "== kernelc build (the command), then load_inline and load under jax.jit"
cat > "$ROOTDIR$work/check.py" <<'PY'
import os, subprocess, sys
import jax, numpy as np
import kernelc

os.chdir(os.path.dirname(os.path.abspath(__file__)))
os.environ["KERNELC_CACHE_DIR"] = os.path.abspath("cache")
kernelc_cmd = os.path.join(os.path.dirname(sys.executable), "kernelc")
subprocess.run([kernelc_cmd, "build", "histogram.cc", "-o", "out", "-v"],
               check=True)
sys.path.insert(0, "out")
import histogram
v = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)
counts = np.asarray(histogram.histogram(v, 0.0, 1.0, 4))
assert counts.sum() == 11, counts  # 1.0 is past the last bin
print("kernelc build histogram.cc: ok")

x = np.arange(1024, dtype=np.float32)
source = open("saxpy.cu").read()
ops = kernelc.load_inline(source, name="ops", verbose=True)
np.testing.assert_allclose(jax.jit(lambda x: ops.saxpy(x, x, 2.0))(x), 3 * x)
again = kernelc.load_inline(source, name="ops")
assert again is ops and again.__kernelc_build__.cache_hit
edited = kernelc.load_inline(source.replace("a * x[i] + y[i]", "a * x[i] - y[i]"),
                             name="ops")
assert edited is not ops
np.testing.assert_allclose(jax.jit(lambda x: edited.saxpy(x, x, 2.0))(x), x)
np.testing.assert_allclose(ops.saxpy(x, x, 2.0), 3 * x)
print("kernelc.load_inline: ok (a cache hit the second time, a new module "
      "after an edit)")
saxpy = kernelc.load("saxpy.cu", verbose=True)
np.testing.assert_allclose(jax.jit(lambda x: saxpy.saxpy(x, x, 2.0))(x), 3 * x)
print("kernelc.load: ok")
PY
in_root "$work/venv/bin/python" "$work/check.py"
echo "clean_root_check: the wheel installs and builds for the CPU with no compiler installed"
