"""vmap of a generated op over a batch of 64, against lax.map of the same op
and against a Python loop of calls, all under jax.jit. Prints times and the
ratios to vmap's, measured in this run.

    bazel-bin/tools/kernelc build examples/saxpy.cu examples/polar.cu \
        examples/matmul.cu examples/histogram.cc -o out/bench --name bench_ops
    .venv/bin/python bench/vmap_bench.py out/bench

On a GPU machine, with the packages of tools/prebuild_gpu.sh:

    python3 bench/vmap_bench.py out/gpu_packages --package gpu_examples

Runs on JAX's default device (the CPU, or the GPU where there is one). How
a batch runs there: saxpy is elementwise, so its batch folds into one run
on either; polar and matmul run once per element on the CPU (spread over
the intra-op threads) and as one launch along the grid's z axis on a GPU;
histogram is a host kernel (CPU only).
"""

import importlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
from common import parser, run_times


def best_of(fn, *args, reps=30):
    """The fastest of `reps` runs' wall times of `fn(*args)`."""
    return min(run_times(fn, *args, reps=reps)[0])


def variants(op, args, batch=64):
    """The arguments on the device (so that no variant pays a host-to-device
    copy), and the jitted vmap, lax.map and Python loop of `op` over them,
    after checking that vmap and lax.map agree."""
    args = tuple(jax.device_put(a) for a in args)
    vm = jax.jit(jax.vmap(op))
    lm = jax.jit(lambda *a: jax.lax.map(lambda t: op(*t), a))
    loop = jax.jit(lambda *a: jax.tree_util.tree_map(
        lambda *o: jnp.stack(o), *[op(*(x[i] for x in a)) for i in range(batch)]))
    for got, want in zip(jax.tree_util.tree_leaves(vm(*args)),
                         jax.tree_util.tree_leaves(lm(*args))):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5,
                                   atol=1e-5)
    return args, vm, lm, loop


def compare(name, op, args, batch=64):
    args, vm, lm, loop = variants(op, args, batch)
    t_vm, t_lm, t_loop = best_of(vm, *args), best_of(lm, *args), best_of(loop, *args)
    print(f"{name:34s} vmap {t_vm * 1e6:9.1f} us   lax.map {t_lm * 1e6:9.1f} us "
          f"({t_lm / t_vm:5.2f}x)   loop {t_loop * 1e6:9.1f} us ({t_loop / t_vm:5.2f}x)")


def main():
    ap = parser(__doc__)
    ap.add_argument("packages", nargs="?", default="out/bench")
    ap.add_argument("--package", default="bench_ops")
    args = ap.parse_args()
    sys.path.insert(0, args.packages)
    ops = importlib.import_module(args.package)
    rng = np.random.default_rng(0)
    B = 64
    device = jax.devices()[0]
    print(f"jax {jax.__version__}, device {device}, batch {B}")
    for n in (256, 4096, 65536):
        x = rng.standard_normal((B, n)).astype(np.float32)
        y = rng.standard_normal((B, n)).astype(np.float32)
        compare(f"saxpy n={n} (elementwise)",
                lambda a, b: ops.saxpy(a, b, 2.0), (x, y), B)
    for n in (256, 4096, 65536):
        x = rng.standard_normal((B, n)).astype(np.float32)
        y = rng.standard_normal((B, n)).astype(np.float32)
        compare(f"polar n={n}", ops.polar, (x, y), B)
    for m in (8, 32, 64):
        a = rng.standard_normal((B, m, m)).astype(np.float32)
        b = rng.standard_normal((B, m, m)).astype(np.float32)
        compare(f"matmul {m}x{m}", ops.matmul, (a, b), B)
    if device.platform == "cpu":
        v = rng.uniform(0, 1, (B, 16, 256)).astype(np.float32)
        compare("histogram 16x256 (host kernel)",
                lambda t: ops.histogram(t, 0.0, 1.0, 16), (v,), B)


if __name__ == "__main__":
    main()
