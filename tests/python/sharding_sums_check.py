"""Run by test_sharding_sums.py in its own process, with 4 CPU devices:
python sharding_sums_check.py PACKAGE_DIR PACKAGE_NAME. Asserts; prints OK.

KC_SUM: x sharded along its rows (KC_PARALLEL("n")) on meshes of
AxisType.Auto and of AxisType.Explicit: each device sums its own rows, the
partial sums are added by one all-reduce with no gather, and the results
equal NumPy's; the row-parallel result stays sharded. Under jax.vmap the
sums are per batch element. Half-precision partial sums are added in
float32."""

import contextlib
import importlib
import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.insert(0, sys.argv[1])
sh = importlib.import_module(sys.argv[2])

assert len(jax.devices()) == 4, jax.devices()
rng = np.random.default_rng(0)
x = rng.uniform(-1, 1, (16, 5)).astype(np.float32)
want_sums = x.sum(axis=0)
want_positive = np.int32((x > 0).sum())

# Unsharded: the kernel's outputs as they are.
sums, positive, twice = sh.column_sum(x)
np.testing.assert_allclose(np.asarray(sums), want_sums, rtol=1e-5, atol=1e-6)
assert int(positive) == want_positive, (positive, want_positive)
np.testing.assert_array_equal(np.asarray(twice), 2 * x)

column_sum = jax.jit(sh.column_sum)
for kind in (AxisType.Auto, AxisType.Explicit):
    mesh = jax.make_mesh((4,), ("d",), axis_types=(kind,))
    explicit = kind == AxisType.Explicit
    with jax.set_mesh(mesh) if explicit else contextlib.nullcontext():
        xs = jax.device_put(x, NamedSharding(mesh, P("d", None)))
        text = column_sum.lower(xs).compile().as_text()
        assert "all-reduce" in text, text
        assert "all-gather" not in text and "all-to-all" not in text, text
        sums, positive, twice = column_sum(xs)
        assert twice.sharding.spec[0] == "d", twice.sharding
        if explicit:
            spec = tuple(jax.typeof(sums).sharding.spec)
            assert spec in ((), (None,)), jax.typeof(sums)
            assert tuple(jax.typeof(twice).sharding.spec)[0] == "d", jax.typeof(twice)
        # Under jax.vmap: a batch of two, each summed over its own rows.
        batch = np.stack([x, -x])
        bs = jax.device_put(batch, NamedSharding(mesh, P(None, "d", None)))
        bsums, bpositive, _ = jax.jit(jax.vmap(sh.column_sum))(bs)
    np.testing.assert_allclose(np.asarray(sums), want_sums, rtol=1e-5, atol=1e-6)
    assert int(positive) == want_positive, (kind, positive, want_positive)
    np.testing.assert_array_equal(np.asarray(twice), 2 * x)
    np.testing.assert_allclose(np.asarray(bsums), batch.sum(axis=1), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(np.asarray(bpositive), (batch > 0).sum(axis=(1, 2)))

# float16 partial sums 2048, 1, 1, 1 (one row per device): added in float16
# the ones are lost (2048 + 1 rounds to 2048); in float32, 2051 rounds once
# to float16's 2052.
h = np.array([2048, 1, 1, 1], np.float16)
want_half = np.float16(h.astype(np.float32).sum())
assert float(sh.half_sum(h)) == want_half, sh.half_sum(h)
mesh = jax.make_mesh((4,), ("d",), axis_types=(AxisType.Auto,))
hs = jax.device_put(h, NamedSharding(mesh, P("d")))
total = jax.jit(sh.half_sum)(hs)
assert total.dtype == np.float16 and float(total) == want_half, total
print("OK")
