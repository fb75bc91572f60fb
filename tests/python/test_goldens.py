"""Generated files and diagnostics against the goldens in tests/golden/."""

import difflib
import subprocess

import pytest

import golden_runner


@pytest.mark.parametrize("name", golden_runner.cases())
def test_golden(name):
    want = golden_runner.expected(name)
    got = golden_runner.run_case(name)
    problems = []
    for rel in sorted(set(want) | set(got)):
        if rel not in got:
            problems.append(f"{rel}: no longer produced")
        elif rel not in want:
            problems.append(f"{rel}: produced but not in the golden")
        elif got[rel] != want[rel]:
            diff = difflib.unified_diff(
                want[rel].decode(errors="replace").splitlines(),
                got[rel].decode(errors="replace").splitlines(),
                f"expected/{rel}", f"now/{rel}", lineterm="", n=2)
            problems.append("\n".join(list(diff)[:60]))
    if problems:
        pytest.fail(f"golden case '{name}' drifted; if the change is intended, "
                    f"run `{golden_runner.UPDATE_COMMAND} {name}` and review "
                    f"the diff:\n" + "\n".join(problems))


def test_there_are_golden_cases():
    assert len(golden_runner.cases()) >= 8


def test_the_python_runtime_is_shipped_verbatim(tmp_path):
    r = subprocess.run([str(golden_runner.KERNELC), "emit", "saxpy.cu", "-o",
                        str(tmp_path)], cwd=golden_runner.GOLDEN / "emit_saxpy")
    assert r.returncode == 0
    assert (tmp_path / "package" / "_kernelc.py").read_bytes() == \
        golden_runner.PYTHON_RUNTIME.read_bytes()
