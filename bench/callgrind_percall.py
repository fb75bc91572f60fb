#!/usr/bin/env python3
"""The per-call cost of a generated CPU op against its floor: saxpy
(examples/saxpy.cu, as kernelc builds it) against the same loop behind a
minimal hand-written XLA FFI handler (bench/floor/floor_cpu.cc, clang
-O3 -march=x86-64-v3, the instruction set kernelc's clone picks on this
machine). For each size it reports:

  - instructions per call of each handler, counted by valgrind's callgrind
    (--toggle-collect on the handler's symbol: the handler and all it
    calls, not XLA's custom-call dispatch around it, which both share), and
    their ratio;
  - the CPU time per call (of all the process's threads, the mean of
    --reps runs) of 1000 calls in a jitted fori_loop, without valgrind,
    and its ratio, which includes XLA's dispatch.

A benchmark, not a test: it never fails on a slow figure:

    .venv/bin/python bench/callgrind_percall.py [--sizes 16,1024] [--reps N]
        [--kernelc PATH] [--no-callgrind] [--json]

It builds into a temporary directory with bazel-bin/tools/kernelc (or
--kernelc), the floor as cpu_bench.compile_floor does; --json prints the figures as one JSON
object for a suite runner.
"""

import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import cpu_bench
from common import ROOT, kernelc, parser, run_times

LOOP_CALLS = 1000


def build(work, binary):
    """Builds kernelc's package with the kernelc `binary` and the floor's
    library into `work`; returns (the kernelc handler's symbol, the floor
    library's path)."""
    r = subprocess.run([str(binary), "build", ROOT / "examples" / "saxpy.cu",
                        "-o", work, "--name", "percall_ops", "--no-cache"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"kernelc build failed:\n{r.stderr}")
    manifest = pathlib.Path(work) / "percall_ops" / "kernelc.json"
    # The manifest names each kernel's handler symbol per platform.
    kernels = json.loads(manifest.read_text())["kernels"]
    symbol = next(k["handlers"]["cpu"] for k in kernels if k["name"] == "saxpy")
    floor = cpu_bench.compile_floor(work)
    return symbol, floor


def child(work, floor, n, reps):
    """Runs both ops' jitted loops at size n; prints CPU time per call."""
    import ctypes

    import jax
    import jax.numpy as jnp
    import numpy as np
    sys.path.insert(0, work)
    import percall_ops as ops
    lib = ctypes.cdll.LoadLibrary(str(floor))
    jax.ffi.register_ffi_target("percall_floor_saxpy",
                                jax.ffi.pycapsule(lib.FloorSaxpyCpu), platform="cpu")

    def floor_saxpy(x, y):
        return jax.ffi.ffi_call("percall_floor_saxpy",
                                jax.ShapeDtypeStruct(x.shape, x.dtype))(x, y, a=np.float32(2))

    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal(n, np.float32))
    y = jnp.asarray(rng.standard_normal(n, np.float32))
    loops = {
        "kernelc": jax.jit(lambda v: jax.lax.fori_loop(
            0, LOOP_CALLS, lambda i, u: ops.saxpy(u, y, np.float32(2)), v)),
        "floor": jax.jit(lambda v: jax.lax.fori_loop(
            0, LOOP_CALLS, lambda i, u: floor_saxpy(u, y), v)),
    }
    # Same results: the op is the floor's.
    a, b = (np.asarray(loops[k](x)) for k in ("kernelc", "floor"))
    if not np.array_equal(a, b):
        sys.exit("kernelc's saxpy and the floor's disagree")
    cpu = {name: run_times(loop, x, reps=reps, calls=LOOP_CALLS)[1]
           for name, loop in loops.items()}
    print(json.dumps(cpu))


def callgrind(work, floor, symbol, n):
    """Instructions per call of each handler at size n."""
    out = pathlib.Path(work) / f"callgrind.{n}.out"
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
           "--collect-atstart=no", f"--toggle-collect={symbol}",
           "--toggle-collect=FloorSaxpyCpu", sys.executable, __file__, "--child", work,
           str(floor), str(n), "--reps", "1"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"callgrind failed:\n{r.stderr[-3000:]}")
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(out)],
                          capture_output=True, text=True, check=True).stdout
    counts = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s.*?(\S+)\s*$", line)
        if not m:
            continue
        value = int(m.group(1).replace(",", ""))
        for name, sym in (("kernelc", symbol), ("floor", "FloorSaxpyCpu")):
            if re.search(rf"\b{sym}\b", line) and name not in counts:
                counts[name] = value
    # Calls under callgrind: the results check, then the timed loop's two
    # runs (run_times' warm-up and its one run, --reps 1).
    calls = LOOP_CALLS * 3
    return {name: c / calls for name, c in counts.items()}


def main():
    p = parser(__doc__, reps=20)
    p.add_argument("--sizes", default="16,1024")
    p.add_argument("--kernelc", help="default bazel-bin/tools/kernelc")
    p.add_argument("--no-callgrind", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        work, floor, n = args.child
        child(work, floor, int(n), args.reps)
        return
    binary = kernelc(args.kernelc)
    results = {}
    with tempfile.TemporaryDirectory() as work:
        symbol, floor = build(work, binary)
        for n in (int(s) for s in args.sizes.split(",")):
            r = subprocess.run([sys.executable, __file__, "--child", work, str(floor),
                                str(n), "--reps", str(args.reps)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"the timed run failed:\n{r.stderr[-3000:]}")
            entry = {"cpu_us_per_call": {k: v * 1e6 for k, v in
                                         json.loads(r.stdout.splitlines()[-1]).items()}}
            if not args.no_callgrind:
                entry["instructions_per_call"] = callgrind(work, floor, symbol, n)
            results[n] = entry
    if args.json:
        print(json.dumps(results, sort_keys=True))
        return
    for n, entry in results.items():
        t = entry["cpu_us_per_call"]
        print(f"saxpy n={n}: CPU time per call in a jitted loop {t['kernelc']:.3f} us, "
              f"floor {t['floor']:.3f} us, ratio {t['kernelc'] / t['floor']:.2f}")
        ins = entry.get("instructions_per_call")
        if ins:
            print(f"saxpy n={n}: instructions per call {ins['kernelc']:.0f}, "
                  f"floor {ins['floor']:.0f}, ratio {ins['kernelc'] / ins['floor']:.2f}")


if __name__ == "__main__":
    main()
