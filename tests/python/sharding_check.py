"""Run by test_sharding.py in its own process, with 4 CPU devices:
python sharding_check.py PACKAGE_DIR PACKAGE_NAME. Asserts; prints OK.

Every check runs twice: on meshes of AxisType.Auto and of AxisType.Explicit
(jax.make_mesh's default from jax 0.12, with jax.set_mesh). Under Explicit
the results' types must say how they are sharded."""

import contextlib
import importlib
import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

sys.path.insert(0, sys.argv[1])
sh = importlib.import_module(sys.argv[2])

assert len(jax.devices()) == 4, jax.devices()
# jax before 0.9 runs vmap's rule for a batch sharded along an Explicit axis
# with that axis held by vmap, so there the rule applies at XLA's
# partitioning, which gathers (README, "Sharding").
OLD_VMAP = jax.__version_info__ < (0, 9)


def put(x, mesh, *spec):
    return jax.device_put(x, NamedSharding(mesh, P(*spec)))


def hlo(f, *args):
    return f.lower(*args).compile().as_text()


def gathers(text):
    return "all-gather" in text or "all-to-all" in text or "collective-permute" in text


def same(got, want, rtol=1e-6):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-6)


def typed(x, *spec):
    """Under Explicit axes, x's type names its sharding: spec."""
    if EXPLICIT:
        want = P(*spec)
        got = jax.typeof(x).sharding.spec
        assert tuple(got) + (None,) * (len(want) - len(got)) == tuple(want), (
            jax.typeof(x), want)


def on(mesh):
    return jax.set_mesh(mesh) if EXPLICIT else contextlib.nullcontext()


def check(mesh, mesh2):
    rng = np.random.default_rng(0)

    # Sharded along the parallel dimension: no collective, shards stay sharded.
    x = rng.uniform(1, 2, (16, 8)).astype(np.float32)
    want = sh.rownorm(x, 0.5)
    f = jax.jit(lambda x: sh.rownorm(x, 0.5))
    xs = put(x, mesh, "d", None)
    got = f(xs)
    same(got, want)
    assert not gathers(hlo(f, xs)), hlo(f, xs)
    assert got[0].sharding.spec[0] == "d" and got[1].sharding.spec[0] == "d", got
    typed(got[0], "d", None)
    typed(got[1], "d")
    # Eager calls keep the sharding too.
    got = sh.rownorm(xs, 0.5)
    same(got, want)
    assert got[0].sharding.spec[0] == "d", got[0].sharding
    typed(got[0], "d", None)

    # Sharded along a dimension that is not parallel: gathered, still right.
    xc = put(x, mesh, None, "d")
    same(f(xc), want)
    assert "all-gather" in hlo(f, xc) or "all-to-all" in hlo(f, xc)

    # vmap of a sharded op: the batch is one more parallel dimension.
    xb = np.stack([x, 2 * x, x + 1, 3 * x])
    fb = jax.jit(jax.vmap(lambda x: sh.rownorm(x, 0.5)))
    wb = [np.stack(w) for w in zip(*(sh.rownorm(e, 0.5) for e in xb))]
    for m, spec in ((mesh, (None, "d", None)), (mesh2, ("a", "b", None)),
                    (mesh, ("d", None, None))):
        with on(m):
            arg = put(xb, m, *spec)
            got = fb(arg)
            same(got, wb)
            if OLD_VMAP and EXPLICIT and spec[0] is not None:
                continue
            assert not gathers(hlo(fb, arg)), hlo(fb, arg)
            typed(got[0], *spec)
            typed(got[1], *spec[:2])

    # Inside shard_map: the op runs on the local shards.
    g = jax.jit(jax.shard_map(lambda x: sh.rownorm(x, 0.5), mesh=mesh,
                              in_specs=P("d", None), out_specs=(P("d", None), P("d"))))
    got = g(xs)
    same(got, want)
    assert not gathers(hlo(g, xs)), hlo(g, xs)
    typed(got[0], "d", None)

    # A replicated operand beside a sharded one: b stays whole, a's rows split.
    a, b = rng.standard_normal((32, 5)).astype(np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    fm = jax.jit(sh.matmul)
    args = (put(a, mesh, "d", None), put(b, mesh, None, None))
    got = fm(*args)
    same(got, a @ b, rtol=1e-5)
    assert not gathers(hlo(fm, *args)), hlo(fm, *args)
    typed(got, "d", None)

    # Gradients: the forward and backward kernels are both parallel.
    u, v = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    loss = lambda u, v: jnp.sum(sh.square_add(u, v, 1.5) * v)
    grad = jax.jit(jax.grad(loss, argnums=(0, 1)))
    args = (put(u, mesh, "d"), put(v, mesh, "d"))
    got = grad(*args)
    same(got, (3.0 * u * v, 1.5 * u * u + 2 * v), rtol=1e-5)
    text = hlo(grad, *args)
    assert "all-gather" not in text, text
    typed(got[0], "d")

    # An in-place kernel: the shards are updated where they are.
    t, d = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    fa = jax.jit(lambda t, d: sh.accumulate(t, d, 2.0))
    for args in ((put(t, mesh, "d"), put(d, mesh, "d")), (put(t, mesh, "d"), put(d, mesh))):
        got = fa(*args)
        same(got, t + 2 * d)
        assert not gathers(hlo(fa, *args)), hlo(fa, *args)
        assert got.sharding.spec[0] == "d", got.sharding
        typed(got, "d")

    # vmap with an unbatched operand: it is not broadcast to the batch (the
    # kernel's call sees it once), whether the batch, the parallel dimension or
    # both are sharded; nested vmaps batch different operands.
    xs = rng.standard_normal((8, 64)).astype(np.float32)
    fv = jax.jit(jax.vmap(lambda x, y: sh.square_add(x, y, 1.5), in_axes=(0, None)))
    for m, xspec, vspec in ((None, None, None), (mesh, (None, "d"), ("d",)),
                            (mesh, ("d", None), ()), (mesh2, ("a", "b"), ("b",))):
        with on(m) if m else contextlib.nullcontext():
            args = (xs, v) if m is None else (put(xs, m, *xspec), put(v, m, *vspec))
            got = fv(*args)
            same(got, 1.5 * xs * xs + v, rtol=1e-5)
            if OLD_VMAP and EXPLICIT and xspec and xspec[0] is not None:
                continue
            text = hlo(fv, *args)
            assert not gathers(text), text
            assert text.count("custom-call(") == 1 and "broadcast" not in text, text
            if m is not None:
                typed(got, *xspec)
    ab = rng.standard_normal((16, 8, 5)).astype(np.float32)
    fmv = jax.jit(jax.vmap(sh.matmul, in_axes=(0, None)))
    for args in ((ab, b), (put(ab, mesh, "d", None, None), put(b, mesh))):
        got = fmv(*args)
        same(got, ab @ b, rtol=1e-4)
        if OLD_VMAP and EXPLICIT and args[0] is not ab:
            continue
        text = hlo(fmv, *args)
        assert not gathers(text) and "broadcast" not in text, text
        assert text.count("custom-call(") == 1, text
    ys = rng.standard_normal((3, 64)).astype(np.float32)
    fn = jax.jit(jax.vmap(jax.vmap(lambda x, y: sh.square_add(x, y, 1.5), in_axes=(0, None)),
                          in_axes=(None, 0)))
    same(fn(xs, ys), 1.5 * xs[None] ** 2 + ys[:, None], rtol=1e-5)
    text = hlo(fn, xs, ys)
    assert text.count("custom-call(") == 1 and "broadcast" not in text, text


for kind in (AxisType.Auto, AxisType.Explicit):
    EXPLICIT = kind == AxisType.Explicit
    mesh = jax.make_mesh((4,), ("d",), axis_types=(kind,))
    mesh2 = jax.make_mesh((2, 2), ("a", "b"), axis_types=(kind, kind))
    with on(mesh):
        check(mesh, mesh2)
print("OK")
