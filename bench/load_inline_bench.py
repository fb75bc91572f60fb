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
of python/. "Cold" starts from a cache directory emptied of all but its
precompiled preludes, which a kernelc makes once (made here by a first
build, not timed), as bench/build_times.py does.
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

from common import ROOT, keep_only_preludes, kernelc, median_ms, parser

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
    env = dict(os.environ, KERNELC_COMPILER=str(kernelc()),
               KERNELC_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join(
                   [str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(source_file)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def main():
    args = parser(__doc__, runs=5).parse_args()
    kernelc()
    samples = {"cold": [], "again": [], "new process": []}
    with tempfile.TemporaryDirectory(prefix="kernelc-bench-") as tmp:
        tmp = pathlib.Path(tmp)
        source, cache = tmp / "saxpy.cu", tmp / "cache"
        source.write_text(SOURCE)
        child("cold", cache, source)  # makes the preludes
        for _ in range(args.runs):
            keep_only_preludes(cache)
            for key, value in child("cold", cache, source).items():
                samples[key].append(value)
            samples["new process"].append(
                child("hit", cache, source)["new process"])
    cold = median_ms(samples["cold"])
    print("| | median | spread | ratio to cold |")
    print("|---|---:|---:|---:|")
    for key, values in samples.items():
        median = median_ms(values)
        spread = f"{min(values) * 1e3:.0f}-{max(values) * 1e3:.0f} ms"
        print(f"| {key} | {median:.0f} ms | {spread} | {median / cold:.3f} |")


if __name__ == "__main__":
    main()
