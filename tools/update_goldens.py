"""Regenerates the expected outputs of every golden case in tests/golden/.

Usage: .venv/bin/python tools/update_goldens.py [CASE...]
Run it after an intended change to generated code or diagnostics, and
review the diff before committing.
"""

import pathlib
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "python"))

import golden_runner  # noqa: E402


def main(argv):
    names = argv or golden_runner.cases()
    for name in names:
        out = golden_runner.GOLDEN / name / "expected"
        shutil.rmtree(out, ignore_errors=True)
        for rel, data in golden_runner.run_case(name).items():
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        print(f"updated {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
