"""Runs the kernels in examples/ through JAX and prints them beside NumPy.

Usage: python examples/demo.py OUTDIR   (OUTDIR holds the built packages)
"""

import os
import sys

# Four CPU devices, to show a sharded call (before JAX starts).
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec  # noqa: E402

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "out/examples")

import histogram  # noqa: E402
import matmul  # noqa: E402
import polar  # noqa: E402
import rms_norm  # noqa: E402
import saxpy  # noqa: E402
import softmax  # noqa: E402


def show(name, got, want):
    got = np.asarray(got)
    ok = np.allclose(got, want, rtol=1e-5, atol=1e-5)
    print(f"{name:<28} {'OK ' if ok else 'BAD'} kernelc {np.array2string(got.ravel()[:4], precision=4)}"
          f"  numpy {np.array2string(np.asarray(want).ravel()[:4], precision=4)}")
    return ok


def main():
    rng = np.random.default_rng(0)
    ok = True

    x = rng.standard_normal(1000, dtype=np.float32)
    y = rng.standard_normal(1000, dtype=np.float32)
    f = jax.jit(lambda x, y: saxpy.saxpy(x, y, 2.0))
    ok &= show("saxpy (jit)", f(x, y), 2.0 * x + y)
    xs = rng.standard_normal((4, 1000), dtype=np.float32)
    ok &= show("saxpy (vmap)", jax.vmap(lambda x: saxpy.saxpy(x, y, 0.5))(xs), 0.5 * xs + y)
    # The gradient comes from the backward kernel saxpy_bwd (KC_VJP).
    loss = lambda x, y: jnp.sum(saxpy.saxpy(x, y, 2.0) ** 2)
    gx, gy = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, y)
    ok &= show("saxpy grad x (jit)", gx, 4.0 * (2.0 * x + y))
    ok &= show("saxpy grad y (jit)", gy, 2.0 * (2.0 * x + y))
    # Sharded along n (KC_PARALLEL): each device runs its shard, no gathers.
    if len(jax.devices()) > 1:
        mesh = jax.make_mesh((len(jax.devices()),), ("d",))
        shard = NamedSharding(mesh, PartitionSpec("d"))
        fs = jax.jit(lambda x, y: saxpy.saxpy(x, y, 2.0))
        xd, yd = jax.device_put(x, shard), jax.device_put(y, shard)
        hlo = fs.lower(xd, yd).compile().as_text()
        got = fs(xd, yd)
        ok &= show(f"saxpy (sharded on {len(jax.devices())})", got, 2.0 * x + y)
        ok &= "all-gather" not in hlo and got.sharding.spec[0] == "d"

    a = rng.standard_normal((33, 17), dtype=np.float32)
    b = rng.standard_normal((17, 21), dtype=np.float32)
    ok &= show("matmul (jit)", jax.jit(matmul.matmul)(a, b), a @ b)

    v = rng.uniform(-1, 1, (3, 500)).astype(np.float32)
    want = np.stack([np.histogram(r, bins=8, range=(-1, 1))[0] for r in v])
    ok &= show("histogram (jit)", jax.jit(lambda v: histogram.histogram(v, -1.0, 1.0, 8))(v), want)

    r, t = jax.jit(polar.polar)(x, y)
    ok &= show("polar radius (jit)", r, np.hypot(x, y))
    ok &= show("polar angle (jit)", t, np.arctan2(y, x))
    total = jax.jit(polar.accumulate)(jnp.ones(1000, jnp.float32), x)
    ok &= show("accumulate in place (jit)", total, 1.0 + x)

    # A kernel that needs its block (shared memory, a barrier, warp
    # shuffles): on the CPU it runs under the block executor.
    rows = rng.standard_normal((64, 1000), dtype=np.float32)
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    ok &= show("softmax (jit)", jax.jit(softmax.softmax)(rows), want)
    ok &= show("softmax (vmap)", jax.vmap(softmax.softmax)(rows.reshape(4, 16, 1000)),
               want.reshape(4, 16, 1000))

    # JAX's GPU tutorial's RMS norm (NVIDIA Apex's kernels): forward with
    # each row's 1 / rms, and its gradient from the one backward kernel.
    gamma = rng.uniform(0.5, 1.5, 1000).astype(np.float32)
    inv = 1 / np.sqrt((rows * rows).mean(axis=1) + 1e-5)
    out, invvar = jax.jit(lambda x, g: rms_norm.cuApplyRMSNorm(x, 1e-5, g))(rows, gamma)
    ok &= show("rms_norm (jit)", out, rows * inv[:, None] * gamma)
    ok &= show("rms_norm invvar (jit)", invvar, inv)
    # d/dgamma of sum(out) is the column sum of x * invvar.
    dgamma = jax.jit(jax.grad(lambda g: jnp.sum(rms_norm.cuApplyRMSNorm(rows, 1e-5, g)[0])))(gamma)
    ok &= show("rms_norm grad gamma (jit)", dgamma, (rows * inv[:, None]).sum(axis=0))

    print("all results match NumPy" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
