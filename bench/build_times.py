#!/usr/bin/env python3
"""Cold and warm `kernelc build` times per example, against nvcc compiling
the same kernel source in the same run.

    .venv/bin/python bench/build_times.py [--runs N]

Each example is built for --target cpu, and .cu examples also for cuda and
cpu,cuda (with --cuda-arch sm_80, like the nvcc -cubin baseline); a .cc
example's host kernels run on the CPU only, so it gets cpu,cuda instead of
cuda. cold: a build with an empty build cache, its precompiled preludes
made (frontend, Clang compile of the kernels and the shim, NVRTC for cuda,
link). warm: the same build again with the cache filled (no compiler runs,
NVRTC not loaded).
Baselines: `nvcc -c -O3` of the source (host and device code, the usual
object a hand-written op starts from) and, for .cu files, `nvcc -cubin
-arch=sm_80 -O3` (device code only). Each figure is the median of N runs;
ratios are against `nvcc -c` measured in this run. A benchmark, not a
test: it never fails on a slow figure.
"""

import pathlib
import re
import shutil
import subprocess
import tempfile

from common import ROOT, keep_only_preludes, kernelc, median_ms, parser, timed

NVCC = pathlib.Path("/usr/local/cuda/bin/nvcc")


def nvcc_release(nvcc):
    r = subprocess.run([str(nvcc), "--version"], capture_output=True, text=True)
    m = re.search(r"release (\S+),", r.stdout)
    return m.group(1) if m else "?"


def find_nvcc():
    """The CUDA toolkit's nvcc, else the one on PATH; None without."""
    return NVCC if NVCC.exists() else shutil.which("nvcc")


def nvcc_samples(nvcc, example, runs, tmp, flags=("-c", "-O3")):
    """`runs` wall times (s) of nvcc compiling `example` with `flags`."""
    inc = ["-I", str(ROOT / "runtime" / "include")]
    return [timed([str(nvcc), *flags, *inc, str(example), "-o",
                   str(tmp / "x.o")]) for _ in range(runs)]


def build_samples(example, target, runs, tmp):
    """(cold, warm): `runs` wall times (s) each of `kernelc build` of
    `example` for `target`, with an empty build cache (the preludes made)
    and with the same build's cache filled."""
    build = [str(kernelc()), "build", str(example), "-o", str(tmp / "out"),
             "--target", target]
    if "cuda" in target:
        build += ["--cuda-arch", "sm_80"]
    tag = f"{example.stem}-{target.replace(',', '-')}"
    # Cold builds share one cache directory, emptied of all but its
    # precompiled preludes (made by the first build, not timed).
    cold_cache = tmp / f"cold-{tag}"
    timed(build + ["--cache-dir", str(cold_cache)])
    cold = []
    for _ in range(runs):
        keep_only_preludes(cold_cache)
        cold.append(timed(build + ["--cache-dir", str(cold_cache)]))
    warm_cache = tmp / f"warm-{tag}"
    timed(build + ["--cache-dir", str(warm_cache)])
    warm = [timed(build + ["--cache-dir", str(warm_cache)]) for _ in range(runs)]
    return cold, warm


def targets_of(example):
    if example.suffix == ".cu":
        return ["cpu", "cuda", "cpu,cuda"]
    return ["cpu", "cpu,cuda"]


def main():
    args = parser(__doc__, runs=5).parse_args()
    kernelc()
    nvcc = find_nvcc()
    examples = sorted(p for p in (ROOT / "examples").iterdir()
                      if p.suffix in (".cu", ".cc"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="kernelc-bench-") as tmp:
        tmp = pathlib.Path(tmp)
        for ex in examples:
            nvcc_c = nvcc_cubin = None
            if nvcc:
                nvcc_c = median_ms(nvcc_samples(nvcc, ex, args.runs, tmp))
                if ex.suffix == ".cu":
                    nvcc_cubin = median_ms(nvcc_samples(
                        nvcc, ex, args.runs, tmp,
                        ("-cubin", "-arch=sm_80", "-O3")))
            for target in targets_of(ex):
                cold, warm = build_samples(ex, target, args.runs, tmp)
                rows.append({"example": ex.name, "target": target,
                             "cold": median_ms(cold), "warm": median_ms(warm),
                             "nvcc_c": nvcc_c, "nvcc_cubin": nvcc_cubin})

    def fmt(v):
        return "-" if v is None else f"{v:.0f}"

    def ratio(a, b):
        return "-" if b is None else f"{a / b:.2f}"

    release = nvcc_release(nvcc) if nvcc else None
    print(f"median of {args.runs} runs, milliseconds; nvcc: "
          f"{f'{nvcc} (release {release})' if nvcc else 'not found'}")
    print("| example | target | kernelc cold | kernelc warm | nvcc -c "
          "| nvcc -cubin sm_80 | cold / nvcc -c | warm / nvcc -c |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['example']} | {r['target']} | {fmt(r['cold'])} | "
              f"{r['warm']:.1f} | "
              f"{fmt(r['nvcc_c'])} | {fmt(r['nvcc_cubin'])} | "
              f"{ratio(r['cold'], r['nvcc_c'])} | {ratio(r['warm'], r['nvcc_c'])} |")


if __name__ == "__main__":
    main()
