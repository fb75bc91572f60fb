"""Importing a generated package builds none of its ops' wrappers (the jit
of eager calls, sharding and autodiff rules): each is built at its first
use, once, also when two threads use it first together. Each first use runs
in a fresh process (lazy_check.py), since a package is imported once per
process. Also: the eager fast path reports what the full path reports."""

import jax.numpy as jnp
import numpy as np
import pytest

from conftest import EXAMPLES, run_check


@pytest.fixture(scope="module")
def saxpy(build_package):
    return build_package("lazy_saxpy", sources=[EXAMPLES / "saxpy.cu"])


@pytest.mark.parametrize(
    "scenario", ["eager", "jit", "vmap", "grad", "sharded", "export", "threads"])
def test_wrappers_are_built_at_first_use(saxpy, scenario):
    run_check("lazy_check.py", saxpy, scenario, timeout=300)


@pytest.mark.parametrize("bad, message", [
    (dict(x=np.zeros(4, np.int32)),
     "saxpy: parameter 'x' expects float32 elements, got int32"),
    (dict(y=np.zeros((4, 1), np.float32)),
     "saxpy: parameter 'y' expects rank 1, got rank 2 (shape (4, 1))"),
    (dict(y=np.zeros(5, np.float32)),
     "saxpy: parameter 'y' has shape (5,), but dimension 0 must be n = 4"),
])
def test_eager_arrays_report_what_numpy_arrays_report(saxpy, bad, message):
    # Concrete JAX arrays take the fast path to the jitted op, which checks
    # them as it traces; NumPy arrays are checked before: the same error.
    args = dict(x=np.zeros(4, np.float32), y=np.zeros(4, np.float32))
    args.update(bad)
    for convert in (np.asarray, jnp.asarray):
        with pytest.raises((TypeError, ValueError)) as e:
            saxpy.saxpy(convert(args["x"]), convert(args["y"]), 2.0)
        assert str(e.value) == message


def test_eager_scalars_are_checked_as_before(saxpy):
    x = jnp.ones(4, jnp.float32)
    with pytest.raises(ValueError,
                       match=r"saxpy: scalar 'a' = 1e\+300 does not fit float32"):
        saxpy.saxpy(x, x, 1e300)
    with pytest.raises(TypeError, match="saxpy: scalar 'a' expects a number"):
        saxpy.saxpy(x, x, True)
    np.testing.assert_allclose(saxpy.saxpy(x, x, np.float32(3)), np.full(4, 4.0))
    np.testing.assert_allclose(saxpy.saxpy(x, x, 3), np.full(4, 4.0))


@pytest.mark.parametrize("make", [float, np.float32], ids=["python", "numpy"])
def test_eager_static_floats_are_keyed_by_their_bits(saxpy, make):
    # jit compares static arguments with ==: -0.0 would reuse the
    # compilation of 0.0 (whose attribute has the other sign), and NaN
    # would compile on every call.
    x = jnp.ones(4, jnp.float32)
    y = jnp.full(4, -0.0, jnp.float32)
    for a in (0.0, -0.0, 0.0, -0.0):
        got = np.asarray(saxpy.saxpy(x, y, make(a)))
        want = np.float32(a) * np.float32(1) + np.float32(-0.0)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want), str(a))
    assert np.isnan(np.asarray(saxpy.saxpy(x, y, make("nan")))).all()
    jitted = saxpy._saxpy_eager.get()
    compiled = jitted._cache_size()
    for _ in range(2):
        assert np.isnan(np.asarray(saxpy.saxpy(x, y, make("nan")))).all()
    assert jitted._cache_size() == compiled
