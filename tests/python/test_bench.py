"""The benchmark suite keeps working: bench/run.py in its quick mode (one
run, small sizes, no nvcc) writes its table and its plot, and
bench/load_inline_bench.py prints its rows. It checks that
the figures exist, never how fast they are. Marked `bench` (about 15 s on
an idle machine, a minute on a busy one): `-m "not bench"` leaves it out.
Needs matplotlib (tools/requirements.txt), which .venv-floor lacks."""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.bench


def test_the_suite_writes_its_table_and_plot(tmp_path):
    pytest.importorskip("matplotlib", reason="the suite's plot needs matplotlib")
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--quick",
                        "--out", str(tmp_path)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    table = (tmp_path / "results.md").read_text()
    for title in ("Per call", "Throughput", "vmap", "Build", "Import"):
        assert f"### {title}" in table, table
    for row in ("| tiny n=16, eager | ", "| saxpy n=1024, jitted fori_loop of 100 | ",
                "| --target cpu | "):
        assert row in table, table
    # Every measured column of the per-call rows has a figure and a ratio.
    eager = next(line for line in table.splitlines()
                 if line.startswith("| saxpy n=16, eager |"))
    kernelc, floor = eager.split(" | ")[1:3]
    assert kernelc.endswith("x)") and "[" in floor, eager
    png = (tmp_path / "results.png").read_bytes()
    assert png.startswith(b"\x89PNG"), png[:8]


def test_load_inline_bench_prints_its_three_rows():
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "load_inline_bench.py"),
                        "--runs", "1"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    for row in ("| cold | ", "| again | ", "| new process | "):
        line = next(line for line in r.stdout.splitlines() if line.startswith(row))
        assert line.endswith(" |") and " ms | " in line, r.stdout
