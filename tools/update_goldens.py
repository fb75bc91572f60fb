"""Regenerates the expected outputs of every golden case in tests/golden/.

Usage: .venv/bin/python tools/update_goldens.py [CASE...]
Builds kernelc (and the printer of its diagnostics' catalogue) with Bazel
first, so the goldens come from the binaries that `bazel test
//tests/golden:golden_test` checks them with. Run it after an intended
change to generated code or diagnostics, and review the diff before
committing.
"""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "golden"))

import golden_runner  # noqa: E402  (found through the path above)


def main(argv):
    subprocess.run(["bazel", "build", "//tools:kernelc",
                    "//compiler/diag:print_catalogue"], cwd=ROOT, check=True)
    tree = golden_runner.Tree(ROOT)
    for name in argv or tree.cases():
        tree.write_expected(name, tree.run_case(name))
        print(f"updated {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
