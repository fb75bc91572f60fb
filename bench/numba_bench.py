#!/usr/bin/env python3
"""kernelc.numba against the same kernel written in C++ (examples/saxpy.cu),
on the CPU under jax.jit: the per-call cost of a tiny call (8 floats) and
the time of a large one (4M floats). Both are kernelc packages with the same
handler; the Numba kernel's body is a call per thread into Numba's code,
where the C++ kernel's is inlined into kernelc's thread loop. Prints the
fastest run of each, and the ratio (above 1: the Numba kernel is slower).
A benchmark, not a test: it never fails on a slow figure.

    KERNELC_COMPILER=bazel-bin/tools/kernelc PYTHONPATH=python \\
        .venv/bin/python bench/numba_bench.py [--reps N]
"""

import jax
import numpy as np
from common import ROOT, parser, run_times
from numba import cuda

import kernelc


@kernelc.numba(grid="out.size")
def saxpy(x: kernelc.In(np.float32, ("n",)), y: kernelc.In(np.float32, "x"),
          a: kernelc.Scalar(np.float32), out: kernelc.Out(np.float32, "x")):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + y[i]


def fastest(fn, *args, reps, calls):
    """The fastest run's wall time per call, over `reps` runs of `calls`
    calls in a row."""
    return min(run_times(fn, *args, reps=reps, calls=calls, eager=True)[0])


def main():
    args = parser(__doc__, reps=20).parse_args()
    cpp = kernelc.load(ROOT / "examples" / "saxpy.cu", name="saxpy_cpp")
    rng = np.random.default_rng(0)
    print(f"{'':<24}{'C++':>12}{'Numba':>12}{'ratio':>8}")
    for label, n, calls in (("tiny call (8 floats)", 8, 1000),
                            ("4M floats", 1 << 22, 5)):
        x = rng.standard_normal(n, dtype=np.float32)
        y = rng.standard_normal(n, dtype=np.float32)
        f_cpp = jax.jit(lambda x, y: cpp.saxpy(x, y, 2.0))
        f_numba = jax.jit(lambda x, y: saxpy(x, y, 2.0))
        np.testing.assert_allclose(np.asarray(f_numba(x, y)),
                                   np.asarray(f_cpp(x, y)), rtol=1e-6)
        t_cpp = fastest(f_cpp, x, y, reps=args.reps, calls=calls)
        t_numba = fastest(f_numba, x, y, reps=args.reps, calls=calls)
        print(f"{label:<24}{t_cpp * 1e6:>10.1f}us{t_numba * 1e6:>10.1f}us"
              f"{t_numba / t_cpp:>8.2f}")


if __name__ == "__main__":
    main()
