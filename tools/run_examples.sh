#!/usr/bin/env bash
# The main job: sets up (tools/setup.sh), builds every kernel in examples/
# with kernelc, and runs examples/demo.py, which calls them under jax.jit and
# prints their results beside NumPy's.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
out=out/examples
for src in examples/*.cu examples/*.cc; do
  echo "kernelc build $src"
  bazel-bin/tools/kernelc build "$src" -o "$out"
done
.venv/bin/python examples/demo.py "$out"
