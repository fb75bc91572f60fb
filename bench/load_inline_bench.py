#!/usr/bin/env python3
"""`kernelc.load_inline` of examples/saxpy.cu, three ways: cold (an empty
build cache: the frontend, the compiles, the link and the import), again in
the same process (a cache hit with the module already loaded), and in a new
process (a cache hit, with the import of jax, kernelc and the package).
Prints the median wall time of each over the runs and its ratio to cold,
measured in this run. A benchmark, not a test: it never fails on a slow
figure.

    .venv/bin/python bench/load_inline_bench.py [--runs N]

It uses bazel-bin/tools/kernelc (KERNELC_COMPILER) and the kernelc package
of python/. "Cold" starts from an empty cache directory that holds only the
precompiled preludes, which a kernelc makes once (made here by a build of
another source before the runs), as bench/build_times.py does.
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
KERNELC = ROOT / "bazel-bin" / "tools" / "kernelc"
SOURCE = (ROOT / "examples" / "saxpy.cu").read_text()

# Run in a child process: argv[1] is "cold" (time two load_inline calls,
# jax already imported) or "hit" (time the imports and one call).
CHILD = r"""
import json, sys, time
mode, source = sys.argv[1], open(sys.argv[2]).read()
if mode == "cold":
    import jax, kernelc
    start = time.perf_counter()
    kernelc.load_inline(source, name="saxpy_inline", verbose=False)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    kernelc.load_inline(source, name="saxpy_inline", verbose=False)
    print(json.dumps({"cold": cold, "again": time.perf_counter() - start}))
else:
    start = time.perf_counter()
    import jax, kernelc
    kernelc.load_inline(source, name="saxpy_inline", verbose=False)
    print(json.dumps({"new process": time.perf_counter() - start}))
"""


def child(mode, cache, source_file):
    env = dict(os.environ, KERNELC_COMPILER=str(KERNELC),
               KERNELC_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join(
                   [str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(source_file)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    if not KERNELC.exists():
        raise SystemExit(f"{KERNELC} is missing: run tools/setup.sh first")
    samples = {"cold": [], "again": [], "new process": []}
    with tempfile.TemporaryDirectory(prefix="kernelc-bench-") as tmp:
        tmp = pathlib.Path(tmp)
        source, other = tmp / "saxpy.cu", tmp / "other.cu"
        source.write_text(SOURCE)
        other.write_text(SOURCE + "\n// another source, the same preludes\n")
        seeded = tmp / "seeded"
        child("cold", seeded, other)
        for i in range(args.runs):
            cache = tmp / f"cache-{i}"
            if (seeded / "prelude").is_dir():
                shutil.copytree(seeded / "prelude", cache / "prelude")
            for key, value in child("cold", cache, source).items():
                samples[key].append(value)
            samples["new process"].append(
                child("hit", cache, source)["new process"])
    cold = statistics.median(samples["cold"])
    print("| | median | spread | ratio to cold |")
    print("|---|---:|---:|---:|")
    for key, values in samples.items():
        median = statistics.median(values)
        spread = f"{min(values) * 1e3:.0f}-{max(values) * 1e3:.0f} ms"
        print(f"| {key} | {median * 1e3:.0f} ms | {spread} | "
              f"{median / cold:.3f} |")


if __name__ == "__main__":
    main()
