#!/usr/bin/env python3
"""Cold and warm `kernelc build` times per example, against nvcc compiling
the same kernel source in the same run.

    .venv/bin/python bench/build_times.py [--runs N]

cold: a build with an empty cache directory (frontend, Clang compile of the
kernels and the shim, link). warm: the same build again with the cache
filled (no compiler runs). Baselines: `nvcc -c -O3` of the source (host and
device code, the usual object a hand-written op starts from) and, for .cu
files, `nvcc -cubin -arch=sm_80 -O3` (device code only). Each figure is the
median of N runs; ratios are against `nvcc -c` measured in this run.
A benchmark, not a test: it never fails on a slow figure.
"""

import argparse
import pathlib
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
KERNELC = ROOT / "bazel-bin" / "tools" / "kernelc"
NVCC = pathlib.Path("/usr/local/cuda/bin/nvcc")


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def median_ms(samples):
    return 1000.0 * statistics.median(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    if not KERNELC.exists():
        raise SystemExit(f"{KERNELC} is missing: run tools/setup.sh first")
    nvcc = NVCC if NVCC.exists() else shutil.which("nvcc")
    examples = sorted(p for p in (ROOT / "examples").iterdir()
                      if p.suffix in (".cu", ".cc"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="kernelc-bench-") as tmp:
        tmp = pathlib.Path(tmp)
        for ex in examples:
            build = [str(KERNELC), "build", str(ex), "-o", str(tmp / "out")]
            cold = []
            for i in range(args.runs):
                cache = tmp / f"cold-{ex.stem}-{i}"
                cold.append(timed(build + ["--cache-dir", str(cache)]))
            warm_cache = tmp / f"warm-{ex.stem}"
            timed(build + ["--cache-dir", str(warm_cache)])
            warm = [timed(build + ["--cache-dir", str(warm_cache)])
                    for _ in range(args.runs)]
            row = {"example": ex.name, "cold": median_ms(cold),
                   "warm": median_ms(warm), "nvcc_c": None, "nvcc_cubin": None}
            if nvcc:
                inc = ["-I", str(ROOT / "runtime" / "include")]
                row["nvcc_c"] = median_ms([
                    timed([str(nvcc), "-c", "-O3", *inc, str(ex), "-o",
                           str(tmp / "x.o")]) for _ in range(args.runs)])
                if ex.suffix == ".cu":
                    row["nvcc_cubin"] = median_ms([
                        timed([str(nvcc), "-cubin", "-arch=sm_80", "-O3", *inc,
                               str(ex), "-o", str(tmp / "x.cubin")])
                        for _ in range(args.runs)])
            rows.append(row)

    def fmt(v):
        return "-" if v is None else f"{v:.0f}"

    def ratio(a, b):
        return "-" if b is None else f"{a / b:.2f}"

    print(f"median of {args.runs} runs, milliseconds; nvcc: {nvcc or 'not found'}")
    print("| example | kernelc cold | kernelc warm | nvcc -c | nvcc -cubin sm_80 "
          "| cold / nvcc -c | warm / nvcc -c |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['example']} | {fmt(r['cold'])} | {r['warm']:.1f} | "
              f"{fmt(r['nvcc_c'])} | {fmt(r['nvcc_cubin'])} | "
              f"{ratio(r['cold'], r['nvcc_c'])} | {ratio(r['warm'], r['nvcc_c'])} |")


if __name__ == "__main__":
    main()
