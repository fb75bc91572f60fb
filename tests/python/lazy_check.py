"""Run by test_lazy_wrappers.py in its own process, with 2 CPU devices:
python lazy_check.py PACKAGE_DIR PACKAGE_NAME SCENARIO. Imports the package
(examples/saxpy.cu: KC_PARALLEL and KC_VJP), checks that importing built
none of its wrappers, then uses an op for the first time as SCENARIO says
and checks the numbers against NumPy. Asserts; prints OK."""

import importlib
import os
import sys
import threading

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P

sys.path.insert(0, sys.argv[1])
pkg = importlib.import_module(sys.argv[2])
scenario = sys.argv[3]


def lazies():
    return {name: value for name, value in vars(pkg).items()
            if isinstance(value, pkg._kc.Lazy)}


def built():
    return sorted(name for name, value in lazies().items()
                  if value.function is not None)


# Every wrapper of every op (jit of eager calls, sharding, autodiff) is lazy,
# and importing built none of them: nor imported jax's custom_partitioning.
assert {"_saxpy_eager", "_saxpy_sharded", "_saxpy_vjp", "_saxpy_bwd_eager",
        "_saxpy_bwd_sharded", "_saxpy_bwd_nodiff"} <= set(lazies()), lazies()
assert built() == [], built()
assert "jax.experimental.custom_partitioning" not in sys.modules

rng = np.random.default_rng(0)
x = rng.standard_normal(8).astype(np.float32)
y = rng.standard_normal(8).astype(np.float32)
expected = 2 * x + y

if scenario == "eager":
    got = pkg.saxpy(jnp.asarray(x), jnp.asarray(y), 2.0)
    assert built() == ["_saxpy_eager", "_saxpy_sharded"], built()
elif scenario == "jit":
    got = jax.jit(lambda a, b: pkg.saxpy(a, b, 2.0))(x, y)
    assert "_saxpy_vjp" in built() and "_saxpy_eager" not in built(), built()
elif scenario == "vmap":
    got = jax.vmap(lambda a, b: pkg.saxpy(a, b, 2.0))(
        np.stack([x, y]), np.stack([y, x]))
    np.testing.assert_allclose(got[1], 2 * y + x, rtol=1e-6)
    got = got[0]
elif scenario == "grad":
    # d/dx sum(2x + y) = 2 through the backward kernel, itself lazy.
    gx, gy = jax.grad(lambda a, b: pkg.saxpy(a, b, 2.0).sum(), (0, 1))(x, y)
    np.testing.assert_allclose(gx, np.full(8, 2, np.float32))
    np.testing.assert_allclose(gy, np.ones(8, np.float32))
    assert "_saxpy_bwd_nodiff" in built(), built()
    got = pkg.saxpy(x, y, 2.0)
elif scenario == "sharded":
    mesh = jax.make_mesh((2,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    spec = NamedSharding(mesh, P("d"))
    f = jax.jit(lambda a, b: pkg.saxpy(a, b, 2.0))
    xs, ys = jax.device_put(x, spec), jax.device_put(y, spec)
    text = f.lower(xs, ys).compile().as_text()
    assert "all-gather" not in text, text
    got = f(xs, ys)
    assert got.sharding.spec == P("d"), got.sharding
elif scenario == "export":
    exported = jax.export.export(
        jax.jit(lambda a, b: pkg.saxpy(a, b, 2.0)),
        disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(t)
                         for t in pkg.CUSTOM_CALL_TARGETS])(x, y)
    got = jax.export.deserialize(exported.serialize()).call(x, y)
elif scenario == "threads":
    # Two threads that use the op for the first time together share one
    # wrapper: each of its builders runs once.
    counts = {}
    start = threading.Barrier(2)
    for name in ("jit", "sharded"):
        real = getattr(pkg._kc, name)

        def counted(*args, name=name, real=real):
            counts[name] = counts.get(name, 0) + 1
            return real(*args)

        setattr(pkg._kc, name, counted)
    results = [None, None]

    def use(i):
        start.wait()
        results[i] = pkg.saxpy(jnp.asarray(x), jnp.asarray(y), 2.0)

    threads = [threading.Thread(target=use, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counts == {"jit": 1, "sharded": 1}, counts
    np.testing.assert_allclose(results[1], expected, rtol=1e-6)
    got = results[0]
else:
    raise SystemExit(f"unknown scenario {scenario}")

np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)
print("OK")
