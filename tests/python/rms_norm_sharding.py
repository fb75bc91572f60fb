"""Run by test_rms_norm.py in its own process, with 4 CPU devices:
python rms_norm_sharding.py PACKAGE_DIR PACKAGE_NAME. Asserts; prints OK.

x sharded along its rows (KC_PARALLEL("n1")), gamma replicated, on meshes
of AxisType.Auto and of AxisType.Explicit: the forward op runs on each
device's rows with no gather, its results stay sharded, and they equal the
unsharded ones; the gradient runs on each device's rows too, its d_gamma
(KC_SUM("n1")) the psum of the devices' partial sums: one all-reduce and no
gather; it equals the unsharded one, and under Explicit axes each gradient
has its primal's type, sharding included."""

import contextlib
import importlib
import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.insert(0, sys.argv[1])
rms = importlib.import_module(sys.argv[2])

assert len(jax.devices()) == 4, jax.devices()
EPS = 1e-5
rng = np.random.default_rng(0)
x = rng.uniform(-3, 3, (32, 200)).astype(np.float32)
gamma = rng.uniform(0.5, 1.5, 200).astype(np.float32)


def loss(x, g):
    out, invvar = rms.cuApplyRMSNorm(x, EPS, g)
    return jnp.sum(jnp.sin(out)) + jnp.sum(invvar ** 2)


forward = jax.jit(lambda x, g: rms.cuApplyRMSNorm(x, EPS, g))
grad = jax.jit(jax.grad(loss, argnums=(0, 1)))
want_out, want_invvar = forward(x, gamma)
want_dx, want_dgamma = grad(x, gamma)

for kind in (AxisType.Auto, AxisType.Explicit):
    mesh = jax.make_mesh((4,), ("d",), axis_types=(kind,))
    explicit = kind == AxisType.Explicit

    def typed(value, *spec):
        if explicit:
            got = tuple(jax.typeof(value).sharding.spec)
            assert got + (None,) * (len(spec) - len(got)) == spec, (jax.typeof(value), spec)

    with jax.set_mesh(mesh) if explicit else contextlib.nullcontext():
        xs = jax.device_put(x, NamedSharding(mesh, P("d", None)))
        gs = jax.device_put(gamma, NamedSharding(mesh, P()))
        text = forward.lower(xs, gs).compile().as_text()
        assert "all-gather" not in text and "all-to-all" not in text, text
        out, invvar = forward(xs, gs)
        assert out.sharding.spec[0] == "d" and invvar.sharding.spec[0] == "d", (
            out.sharding, invvar.sharding)
        typed(out, "d", None)
        typed(invvar, "d")
        text = grad.lower(xs, gs).compile().as_text()
        assert "all-reduce" in text, text
        assert "all-gather" not in text and "all-to-all" not in text, text
        dx, dgamma = grad(xs, gs)
        assert dx.sharding.spec[0] == "d", dx.sharding
        typed(dx, "d", None)
        typed(dgamma, None)
    np.testing.assert_allclose(np.asarray(out), np.asarray(want_out), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(invvar), np.asarray(want_invvar), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(dx), np.asarray(want_dx), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(dgamma), np.asarray(want_dgamma), rtol=1e-5,
                               atol=1e-5)
print("OK")
