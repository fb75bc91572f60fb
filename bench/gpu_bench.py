"""GPU benchmark of kernelc's generated CUDA ops (not a test).

Reports, in one run on one GPU:
  - per-call time of a generated tiny op (x + 1 on 256 floats) inside a
    jitted loop, against the same kernel behind a hand-written XLA FFI
    handler (the floor) and against XLA's own fused x + 1;
  - bandwidth of a generated copy kernel against a device-to-device copy
    (cudaMemcpyAsync behind a hand-written handler).
Ratios are against the floor measured in the same run.

Needs the prebuilt package gpu_bench (tools/prebuild_gpu.sh, then
out/gpu_packages or $KERNELC_GPU_PACKAGES) and nvcc for the floor handler.
    python3 bench/gpu_bench.py [--calls 1000] [--mib 256]
"""

import ctypes
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

import jax
import numpy as np
from common import ROOT, parser, run_times

PACKAGES = pathlib.Path(
    os.environ.get("KERNELC_GPU_PACKAGES", ROOT / "out" / "gpu_packages"))


def build_floor(work):
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    lib = pathlib.Path(work) / "libfloor.so"
    cmd = [nvcc, "-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC",
           f"-I{jax.ffi.include_dir()}", str(ROOT / "bench/floor/floor_ops.cu"),
           "-o", str(lib)]
    subprocess.run(cmd, check=True)
    return ctypes.CDLL(str(lib))


def timed(fn, *args, reps=7):
    """The median of `reps` runs' wall times of `fn(*args)`."""
    return statistics.median(run_times(fn, *args, reps=reps)[0])


def main():
    a = parser(__doc__, calls=1000, mib=256).parse_args()
    gpu = jax.devices("cuda")[0]
    sys.path.insert(0, str(PACKAGES))
    import gpu_bench as kc

    with tempfile.TemporaryDirectory() as work:
        floor = build_floor(work)
    for name, sym in (("kernelc_bench.floor_tiny", floor.FloorTiny),
                      ("kernelc_bench.floor_copy", floor.FloorCopy)):
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(sym),
                                    platform="CUDA")

    def floor_call(name, x):
        return jax.ffi.ffi_call(name, jax.ShapeDtypeStruct(x.shape, x.dtype),
                                vmap_method="sequential")(x)

    def loop(op):
        return jax.jit(lambda x: jax.lax.fori_loop(
            0, a.calls, lambda i, x: op(x), x))

    x = jax.device_put(np.zeros(256, np.float32), gpu)
    results = {
        "kernelc op": timed(loop(kc.tiny), x),
        "hand-written FFI op (floor)": timed(
            loop(lambda v: floor_call("kernelc_bench.floor_tiny", v)), x),
        "XLA fused x + 1": timed(loop(lambda v: v + 1.0), x),
    }
    for v in (loop(kc.tiny)(x), loop(
            lambda v: floor_call("kernelc_bench.floor_tiny", v))(x)):
        assert float(v[0]) == a.calls, float(v[0])
    base = results["hand-written FFI op (floor)"]
    print(f"{jax.devices('cuda')[0].device_kind}, jax {jax.__version__}, "
          f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}")
    print(f"per-call time of a tiny op in a jitted loop of {a.calls} calls:")
    for k, t in results.items():
        us = t / a.calls * 1e6
        print(f"  {k:32s} {us:8.2f} us/call   {t / base:6.2f}x floor")

    n = a.mib * 1024 * 1024 // 4
    big = jax.device_put(np.arange(n, dtype=np.float32), gpu)
    copies = {
        "kernelc copy kernel": jax.jit(kc.copy),
        "device-to-device copy (floor)": jax.jit(
            lambda v: floor_call("kernelc_bench.floor_copy", v)),
    }
    np.testing.assert_array_equal(np.asarray(copies["kernelc copy kernel"](big)[-5:]),
                                  np.asarray(big[-5:]))
    print(f"copy of {a.mib} MiB (read + write):")
    bw = {k: 2 * n * 4 / timed(f, big, reps=20) / 1e9 for k, f in copies.items()}
    floor_bw = bw["device-to-device copy (floor)"]
    for k, gbs in bw.items():
        print(f"  {k:32s} {gbs:8.1f} GB/s   {gbs / floor_bw:6.2f}x floor")


if __name__ == "__main__":
    main()
