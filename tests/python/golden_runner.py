"""Runs the golden cases in tests/golden/ and collects what kernelc produced.

A case is a directory holding its inputs and a file `cmd` with one kernelc
command line, run in the case directory:
  emit SRC... [options]     -> the generated files (package/, build/)
  build SRC... [options]    -> stderr and exit status (diagnostic cases)
  inspect SRC...            -> stdout, stderr and exit status
The expected results live in the case's `expected/` directory.
tools/update_goldens.py rewrites them; tests/python/test_goldens.py checks.
"""

import pathlib
import shlex
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
KERNELC = ROOT / "bazel-bin" / "tools" / "kernelc"
UPDATE_COMMAND = ".venv/bin/python tools/update_goldens.py"
# The packages' Python runtime, which kernelc copies verbatim into every
# package: the goldens hold it once, as this file.
PYTHON_RUNTIME = ROOT / "runtime" / "python" / "_kernelc.py"


def cases():
    return sorted(p.name for p in GOLDEN.iterdir() if (p / "cmd").exists())


def run_case(name):
    """Returns {relative path: bytes} of what the case produced now."""
    case = GOLDEN / name
    args = shlex.split((case / "cmd").read_text())
    produced = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args[0] in ("emit", "build"):
            args += ["-o", tmp]
        r = subprocess.run([str(KERNELC), *args], cwd=case, capture_output=True)
        status = f"exit status: {r.returncode}\n".encode()
        if args[0] == "emit" and r.returncode == 0:
            for f in sorted(pathlib.Path(tmp).rglob("*")):
                if f.is_file():
                    produced[str(f.relative_to(tmp))] = f.read_bytes()
            # Left in place when it differs, so that the diff shows it.
            if produced.get("package/_kernelc.py") == PYTHON_RUNTIME.read_bytes():
                del produced["package/_kernelc.py"]
        else:
            produced["stderr.txt"] = status + r.stderr
        if args[0] == "inspect":
            produced["stdout.txt"] = r.stdout
    return produced


def expected(name):
    exp = GOLDEN / name / "expected"
    if not exp.exists():
        return {}
    return {str(f.relative_to(exp)): f.read_bytes()
            for f in sorted(exp.rglob("*")) if f.is_file()}
