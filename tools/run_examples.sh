#!/usr/bin/env bash
# The main job: sets up (tools/setup.sh), builds every kernel in examples/
# with kernelc, and runs examples/demo.py, which calls them under jax.jit and
# prints their results beside NumPy's; then examples/numba_demo.py, the
# same for Python kernels (kernelc.numba), where Numba is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
out=out/examples
for src in examples/*.cu examples/*.cc; do
  echo "kernelc build $src"
  bazel-bin/tools/kernelc build "$src" -o "$out"
done
.venv/bin/python examples/demo.py "$out"
if .venv/bin/python -c "import numba" 2>/dev/null; then
  KERNELC_COMPILER=bazel-bin/tools/kernelc PYTHONPATH=python \
    .venv/bin/python examples/numba_demo.py
else
  echo "examples/numba_demo.py skipped: Numba is not installed in .venv"
fi
