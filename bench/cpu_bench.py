#!/usr/bin/env python3
"""The CPU target against XLA's own code for the same work, on the same
data, under jax.jit: the per-call cost of a tiny op, saxpy over 16M floats
with XLA's thread pool and on one core, and block-level kernels (a row
softmax, layernorm, a block reduction, the tiled matrix multiply) against
the equivalent jnp programs. Prints, for each, kernelc's time and jnp's
and their ratio (above 1: kernelc is slower), measured in this run: the
fastest run's wall time, and the mean CPU time of all the process's
threads per run, which a machine busy with other work distorts less. A
benchmark, not a test: it never fails on a slow figure.

    .venv/bin/python bench/cpu_bench.py [--reps N] [--before KERNELC]

It builds its packages with bazel-bin/tools/kernelc into a temporary
directory: examples/saxpy.cu and examples/softmax.cu, the tiny op of
bench/kernels/bench_ops.cu, and the runtime's block kernels behind
tests/python/block_kernels.cu. "One core" runs the saxpy in a process
pinned to one CPU, where XLA's pool has one thread: kernelc's launch then
stays on the calling thread, and XLA's fused loop too. --before names
another kernelc binary (say, an earlier version's) that builds the tiny op
and the saxpy too, for their times beside this one's.
"""

import argparse
import importlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from common import ROOT, kernelc, parser, run_times

SOURCES = [ROOT / "examples" / "saxpy.cu", ROOT / "examples" / "softmax.cu",
           ROOT / "bench" / "kernels" / "bench_ops.cu",
           ROOT / "tests" / "python" / "block_kernels.cu"]


def measure(fn, *args, reps, calls=1):
    """(the fastest run's wall time, the mean CPU time of the runs, of all
    the process's threads), per call of `fn` that does `calls` calls."""
    walls, cpu = run_times(fn, *args, reps=reps, calls=calls)
    return min(walls), cpu


def build_package(sources, out, name, binary=None):
    """Builds `sources` into package `name` under `out` with the kernelc
    `binary` (default: the development build's) and imports it."""
    subprocess.run([str(kernelc(binary)), "build", *map(str, sources), "-o", str(out),
                    "--name", name], check=True)
    if str(out) not in sys.path:
        sys.path.insert(0, str(out))
    return importlib.import_module(name)


def compile_floor(work):
    """Compiles the hand-written floor handlers (bench/floor/floor_cpu.cc)
    against the running jaxlib's FFI headers into `work`; returns the
    library's path. Where the CPU has AVX2, for x86-64-v3: the instruction
    set kernelc's clone of a kernel picks there, so that both loops are
    compiled alike."""
    import jax

    lib = pathlib.Path(work) / "libfloor_cpu.so"
    cxx = os.environ.get("CXX") or next(
        filter(shutil.which, ("clang++-19", "clang++", "c++")), "c++")
    flags = ["-std=c++17", "-O3", "-fPIC", "-shared", "-w"]
    if " avx2 " in pathlib.Path("/proc/cpuinfo").read_text().replace("\n", " "):
        flags.append("-march=x86-64-v3")
    subprocess.run([cxx, *flags, "-isystem", jax.ffi.include_dir(),
                    str(ROOT / "bench" / "floor" / "floor_cpu.cc"), "-o", str(lib)],
                   check=True)
    return lib


def row(name, kc, xla, unit=1e3, suffix="ms"):
    """kc and xla: (wall, cpu) of kernelc's op and of the jnp program."""
    print(f"{name:36s} wall {kc[0] * unit:8.3f} / {xla[0] * unit:8.3f} {suffix} "
          f"= {kc[0] / xla[0]:7.2f}   cpu {kc[1] * unit:8.3f} / {xla[1] * unit:8.3f} "
          f"{suffix} = {kc[1] / xla[1]:7.2f}")


def saxpy_times(ops, reps):
    import jax
    import numpy as np
    rng = np.random.default_rng(0)
    n = 16 << 20
    x = jax.device_put(rng.standard_normal(n, np.float32))
    y = jax.device_put(rng.standard_normal(n, np.float32))
    kc = jax.jit(lambda a, b: ops.saxpy(a, b, 2.0))
    jnp_ = jax.jit(lambda a, b: 2.0 * a + b)
    return measure(kc, x, y, reps=reps), measure(jnp_, x, y, reps=reps)


def main_saxpy_only(package_dir, reps):
    """The child process of the one-core run: prints its saxpy times."""
    sys.path.insert(0, package_dir)
    import cpu_bench_ops as ops
    print(json.dumps(saxpy_times(ops, reps)))


def main():
    ap = parser(__doc__, reps=10)
    ap.add_argument("--before", metavar="KERNELC",
                    help="another kernelc, whose ops are timed too")
    ap.add_argument("--saxpy-only", metavar="PACKAGES", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.saxpy_only:
        main_saxpy_only(args.saxpy_only, args.reps)
        return

    out = tempfile.mkdtemp(prefix="kernelc-cpu-bench-")
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    jax.config.update("jax_enable_x64", True)
    ops = build_package(SOURCES, out, "cpu_bench_ops")
    before = (build_package(SOURCES, out, "cpu_bench_before", args.before)
              if args.before else None)

    print(f"jax {jax.__version__}, {os.cpu_count()} CPUs, {args.reps} runs; kernelc / jnp "
          f"(wall: the fastest run; cpu: the mean CPU time of all threads)")
    rng = np.random.default_rng(0)

    print("\n== a tiny op (x + 1), 1000 calls in a jitted fori_loop: time per call")
    for n in (16, 1024):
        x = jnp.zeros(n, jnp.float32)
        kc = jax.jit(lambda v: lax.fori_loop(0, 1000, lambda i, u: ops.tiny(u), v))
        xla = jax.jit(lambda v: lax.fori_loop(0, 1000, lambda i, u: u + 1.0, v))
        row(f"tiny n={n}", measure(kc, x, reps=args.reps, calls=1000),
            measure(xla, x, reps=args.reps, calls=1000), unit=1e6, suffix="us")
        if before:
            old = jax.jit(lambda v: lax.fori_loop(0, 1000, lambda i, u: before.tiny(u), v))
            row(f"tiny n={n}, --before", measure(old, x, reps=args.reps, calls=1000),
                measure(xla, x, reps=args.reps, calls=1000), unit=1e6, suffix="us")

    print("\n== saxpy, 16M float32 (the plain grid loop, blocks spread over the pool)")
    row("saxpy, XLA's pool", *saxpy_times(ops, args.reps))
    one = subprocess.run(
        ["taskset", "-c", "0", sys.executable, __file__, "--saxpy-only", out, "--reps",
         str(args.reps)], capture_output=True, text=True, check=True)
    row("saxpy, one core", *json.loads(one.stdout.splitlines()[-1]))
    if before:
        row("saxpy, XLA's pool, --before", *saxpy_times(before, args.reps))
    print(f"(load average while this ran: {os.getloadavg()[0]:.1f})")

    print("\n== block-level kernels (the block executor) against jnp")
    f32 = np.float32
    x = rng.standard_normal((1024, 1024)).astype(f32)
    w, b = rng.standard_normal(1024).astype(f32), rng.standard_normal(1024).astype(f32)

    def layernorm(v, w, b):
        mean = v.mean(axis=-1, keepdims=True)
        var = ((v - mean) ** 2).mean(axis=-1, keepdims=True)
        rstd = lax.rsqrt(var + 1e-5)
        return (v - mean) * rstd * w + b, mean[:, 0], rstd[:, 0]

    v = jax.device_put(rng.standard_normal(16 << 20).astype(f32))
    a = rng.standard_normal((512, 512)).astype(f32)
    c = rng.standard_normal((512, 512)).astype(f32)
    # (name, kernelc's op of a package, the jnp program, its arguments)
    kernels = [
        ("softmax 1024 x 1024 (256 threads/row)", lambda p: p.softmax,
         lambda v: jax.nn.softmax(v, axis=-1), (x,)),
        ("layernorm 1024 x 1024 (a warp/row)",
         lambda p: lambda v, w, b: p.layernorm_f32(v, w, b, 1e-5), layernorm,
         (x, w, b)),
        ("sum of 16M (shuffles, 256 blocks)",
         lambda p: lambda t: p.reduce_shuffle_f32(t, 256).sum(), jnp.sum, (v,)),
        ("matmul 512^3 (16 x 16 shared tiles)", lambda p: p.matmul_f32, jnp.matmul,
         (a, c)),
    ]
    for name, op, program, inputs in kernels:
        xla = measure(jax.jit(program), *inputs, reps=args.reps)
        row(name, measure(jax.jit(op(ops)), *inputs, reps=args.reps), xla)
        if before:
            old = measure(jax.jit(op(before)), *inputs, reps=args.reps)
            row(f"{name}, --before", old, xla)


if __name__ == "__main__":
    main()
