"""Numba-CUDA-style Python kernels as kernelc ops (kernelc.numba), run
under jax.jit and printed beside NumPy.

Usage: KERNELC_COMPILER=bazel-bin/tools/kernelc python examples/numba_demo.py
(KERNELC_COMPILER is needed only where the kernelc distribution is not
installed.)

Four kernels: two written the way pytorch-numba-extension-jit annotates
them (a 2-D multiply-add, and one that interleaves an input into an output
of another shape), and the two of the Numba-in-XLA discussion (`x + 1`, and
a pairwise distance with nested loops). Each builds on its first call
into a package in kernelc's build cache; importing that package needs no
Numba.
"""

import sys

import jax
import numpy as np
from numba import cuda

import kernelc

jax.config.update("jax_enable_x64", True)


# pytorch-numba-extension-jit's mymuladd_2d, with its shapes in kernelc's
# expressions ("a.size(0)" is "a.shape[0]", "result.numel()" is
# "result.size").
@kernelc.numba(grid="result.size")
def muladd_2d(a: kernelc.In("f32", ("m", "n")),
              b: kernelc.In("f32", "a"),
              c: kernelc.Scalar(np.float32),
              result: kernelc.Out("f32", "a")):
    idx = cuda.grid(1)
    y, x = divmod(idx, result.shape[1])
    if y < result.shape[0]:
        result[y, x] = a[y, x] * b[y, x] + c


# Its mixed-order example: an output of a shape computed from the input's.
@kernelc.numba(grid="inp.size")
def interleave(inp: kernelc.In("f32", (None, 3)),
               out: kernelc.Out("f32", ("inp.shape[0]", "inp.shape[1]", 2)),
               scalar: kernelc.Scalar(np.float32)):
    idx = cuda.grid(1)
    x, y = divmod(idx, out.shape[1])
    if x < out.shape[0] and y < out.shape[1]:
        out[x, y, 0] = inp[x, y]
        out[x, y, 1] = inp[x, y] * 4 + scalar


# The Numba-in-XLA discussion's kernels: x + 1, and a pairwise distance
# whose threads loop over the points' coordinates.
@kernelc.numba(grid="x.size", elementwise=True)
def add_one(x: kernelc.In(np.float64, ("n",)),
            out: kernelc.Out(np.float64, "x")):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i] + 1


@kernelc.numba(grid=("m", "m"), block=(16, 16))
def pairwise_distance(points: kernelc.In(np.float64, ("m", "d")),
                      out: kernelc.Out(np.float64, ("m", "m"))):
    i, j = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        total = 0.0
        for k in range(points.shape[1]):
            diff = points[i, k] - points[j, k]
            total += diff * diff
        out[i, j] = np.sqrt(total)


def show(name, got, want):
    got = np.asarray(got)
    ok = np.allclose(got, want, rtol=1e-5, atol=1e-5)
    print(f"{name:<28} {'OK ' if ok else 'BAD'} kernelc "
          f"{np.array2string(got.ravel()[:4], precision=4)}  numpy "
          f"{np.array2string(np.asarray(want).ravel()[:4], precision=4)}")
    return ok


def main():
    rng = np.random.default_rng(0)
    ok = True
    a = rng.standard_normal((4, 5), dtype=np.float32)
    b = rng.standard_normal((4, 5), dtype=np.float32)
    ok &= show("numba muladd_2d",
               jax.jit(lambda a, b: muladd_2d(a, b, 0.5))(a, b), a * b + 0.5)
    inp = np.arange(12, dtype=np.float32).reshape(4, 3)
    ok &= show("numba interleave", jax.jit(lambda i: interleave(i, 2.0))(inp),
               np.stack([inp, inp * 4 + 2], axis=-1))
    x = rng.standard_normal(1000)
    ok &= show("numba add_one", jax.jit(add_one)(x), x + 1)
    ok &= show("numba add_one under vmap",
               jax.vmap(add_one)(x.reshape(10, 100)), x.reshape(10, 100) + 1)
    p = rng.standard_normal((64, 3))
    ok &= show("numba pairwise_distance", jax.jit(pairwise_distance)(p),
               np.sqrt(((p[:, None] - p[None]) ** 2).sum(-1)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
