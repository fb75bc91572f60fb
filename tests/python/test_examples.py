"""The programs in examples/, built with kernelc and checked against NumPy
eagerly, under jax.jit and under jax.vmap (other in_axes, nested vmap,
batched arguments mixed with unbatched ones), with zero-size arrays too."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import EXAMPLES


@pytest.fixture(scope="module")
def saxpy(build_package):
    return build_package("ex_saxpy", sources=[EXAMPLES / "saxpy.cu"])


@pytest.fixture(scope="module")
def matmul(build_package):
    return build_package("ex_matmul", sources=[EXAMPLES / "matmul.cu"])


@pytest.fixture(scope="module")
def histogram(build_package):
    return build_package("ex_histogram", sources=[EXAMPLES / "histogram.cc"])


@pytest.fixture(scope="module")
def polar(build_package):
    return build_package("ex_polar", sources=[EXAMPLES / "polar.cu"])


@pytest.fixture(scope="module")
def softmax(build_package):
    return build_package("ex_softmax", sources=[EXAMPLES / "softmax.cu"])


def rng(seed=0):
    return np.random.default_rng(seed)


def f32(*shape, seed=0):
    return rng(seed).standard_normal(shape).astype(np.float32)


def close(got, want, **kw):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    kw.setdefault("rtol", 1e-6)
    kw.setdefault("atol", 1e-6)
    np.testing.assert_allclose(got, want, **kw)


# --- saxpy -------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 255, 256, 257, 1000, 4099])
def test_saxpy_eager_and_jit(saxpy, n):
    x, y = f32(n, seed=1), f32(n, seed=2)
    want = np.float32(2.5) * x + y
    close(saxpy.saxpy(x, y, 2.5), want)
    close(saxpy.saxpy(jnp.asarray(x), jnp.asarray(y), np.float32(2.5)), want)
    close(jax.jit(lambda x, y: saxpy.saxpy(x, y, 2.5))(x, y), want)
    # The scalar is static: a new value retraces and gives the new result.
    g = jax.jit(saxpy.saxpy, static_argnums=2)
    close(g(x, y, 2.5), want)
    close(g(x, y, -1.0), -x + y)


def test_saxpy_vmap(saxpy):
    n = 300
    xs, ys = f32(4, n, seed=3), f32(4, n, seed=4)
    y = ys[0]
    # Both batched on axis 0.
    close(jax.vmap(lambda a, b: saxpy.saxpy(a, b, 0.5))(xs, ys), 0.5 * xs + ys)
    # A batched argument mixed with an unbatched one.
    close(jax.vmap(lambda a: saxpy.saxpy(a, y, 0.5))(xs), 0.5 * xs + y)
    close(jax.vmap(lambda a, b: saxpy.saxpy(a, b, 0.5), in_axes=(None, 0))(y, xs),
          0.5 * y + xs)
    # in_axes other than 0, and out_axes.
    close(jax.vmap(lambda a, b: saxpy.saxpy(a, b, 3.0), in_axes=(1, 0))(xs.T, ys),
          3.0 * xs + ys)
    close(jax.vmap(lambda a, b: saxpy.saxpy(a, b, 3.0), in_axes=(1, None), out_axes=1)(xs.T, y),
          (3.0 * xs + y).T)
    # Under jit.
    close(jax.jit(jax.vmap(lambda a, b: saxpy.saxpy(a, b, -2.0), in_axes=(0, 1)))(xs, ys.T),
          -2.0 * xs + ys)


def test_saxpy_nested_vmap(saxpy):
    n = 70
    xs = f32(3, 5, n, seed=5)   # batch dims (3, 5)
    ys = f32(5, n, seed=6)      # batched over the inner dim only
    inner = jax.vmap(lambda a, b: saxpy.saxpy(a, b, 1.5))                # over 5
    outer = jax.vmap(inner, in_axes=(0, None))                          # over 3
    close(outer(xs, ys), 1.5 * xs + ys[None])
    close(jax.jit(outer)(xs, ys), 1.5 * xs + ys[None])
    # Batch axes in the middle and at the end.
    xt = np.moveaxis(xs, 2, 0)  # (n, 3, 5)
    f = jax.vmap(jax.vmap(lambda a, b: saxpy.saxpy(a, b, 1.5), in_axes=(1, 0)),
                 in_axes=(1, None))
    close(f(xt, ys), 1.5 * xs + ys[None])


def test_saxpy_zero_size(saxpy):
    e = np.zeros((0,), np.float32)
    for f in (lambda x, y: saxpy.saxpy(x, y, 2.0), jax.jit(lambda x, y: saxpy.saxpy(x, y, 2.0))):
        got = f(e, e)
        assert got.shape == (0,) and got.dtype == np.float32
    got = jax.vmap(lambda x, y: saxpy.saxpy(x, y, 2.0))(np.zeros((3, 0), np.float32),
                                                         np.zeros((3, 0), np.float32))
    assert got.shape == (3, 0)
    got = jax.vmap(lambda x: saxpy.saxpy(x, x, 2.0))(np.zeros((0, 5), np.float32))
    assert got.shape == (0, 5)


def test_saxpy_accepts_array_likes(saxpy):
    # Lists and Python numbers become float32 arrays.
    got = saxpy.saxpy([1.0, 2.0, 3.0], np.array([1, 1, 1], np.float32), 2)
    close(got, np.array([3.0, 5.0, 7.0], np.float32))


# --- matmul -------------------------------------------------------------------

@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (33, 17, 21), (16, 16, 16), (5, 64, 3), (40, 3, 1)])
def test_matmul(matmul, m, k, n):
    a, b = f32(m, k, seed=m), f32(k, n, seed=n + 100)
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    close(matmul.matmul(a, b), want, rtol=1e-5, atol=1e-5)
    close(jax.jit(matmul.matmul)(a, b), want, rtol=1e-5, atol=1e-5)


def test_matmul_vmap(matmul):
    a, b = f32(3, 9, 7, seed=1), f32(3, 7, 5, seed=2)
    want = np.einsum("bmk,bkn->bmn", a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    close(jax.vmap(matmul.matmul)(a, b), want, rtol=1e-5, atol=1e-5)
    # Shared right-hand side; left batched along its last axis.
    at = np.moveaxis(a, 0, 2)  # (9, 7, 3)
    want = np.einsum("mkb,kn->bmn", at.astype(np.float64), b[0].astype(np.float64)).astype(np.float32)
    close(jax.vmap(matmul.matmul, in_axes=(2, None))(at, b[0]), want, rtol=1e-5, atol=1e-5)
    close(jax.jit(jax.vmap(matmul.matmul, in_axes=(2, None)))(at, b[0]), want, rtol=1e-5, atol=1e-5)
    # Nested: an outer batch of left operands over an inner batch of right ones.
    a2, b2 = f32(2, 4, 6, seed=7), f32(3, 6, 5, seed=8)
    f = jax.vmap(jax.vmap(matmul.matmul, in_axes=(None, 0)), in_axes=(0, None))
    want = np.einsum("imk,jkn->ijmn", a2.astype(np.float64), b2.astype(np.float64)).astype(np.float32)
    close(f(a2, b2), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m, k, n", [(0, 3, 4), (2, 0, 4), (0, 0, 0), (3, 5, 0), (0, 0, 7)])
def test_matmul_zero_size(matmul, m, k, n):
    a = np.ones((m, k), np.float32)
    b = np.ones((k, n), np.float32)
    want = np.zeros((m, n), np.float32) + (a @ b)   # k == 0: zeros(m, n)
    close(matmul.matmul(a, b), want)
    close(jax.jit(matmul.matmul)(a, b), want)


def test_matmul_zero_k_after_other_calls(matmul):
    # The output is written by the kernel even when k == 0 (no stale memory).
    for _ in range(3):
        matmul.matmul(f32(8, 8, seed=1) * 1e3, f32(8, 8, seed=2))
        close(matmul.matmul(np.ones((8, 0), np.float32), np.ones((0, 8), np.float32)),
              np.zeros((8, 8), np.float32))


# --- histogram (host kernel, KC_INIT) -------------------------------------------

def np_histogram(v, lo, hi, bins):
    return np.stack([np.histogram(r, bins=bins, range=(lo, hi))[0] for r in v]).astype(np.int32)


def test_histogram(histogram):
    v = rng(1).uniform(-1.2, 1.2, (4, 500)).astype(np.float32)
    v[0, :3] = [np.nan, -1.0, 0.999]
    for bins in (1, 8, 13):
        want = np_histogram(np.nan_to_num(v, nan=5.0), -1.0, 1.0, bins)
        close(histogram.histogram(v, -1.0, 1.0, bins), want)
        close(jax.jit(lambda v: histogram.histogram(v, -1.0, 1.0, bins))(v), want)


def test_histogram_init_zero_fills(histogram):
    # No value in range: every count comes from KC_INIT(0) alone. Repeat so
    # that buffers freed by earlier calls are reused.
    for i in range(4):
        histogram.histogram(rng(i).uniform(0, 1, (6, 50)).astype(np.float32), 0.0, 1.0, 10)
        v = np.full((6, 50), 7.0, np.float32)
        close(histogram.histogram(v, 0.0, 1.0, 10), np.zeros((6, 10), np.int32))
        close(jax.jit(lambda v: histogram.histogram(v, 0.0, 1.0, 10))(v), np.zeros((6, 10), np.int32))
    # Zero columns: counts exist and are zero.
    close(histogram.histogram(np.zeros((3, 0), np.float32), 0.0, 1.0, 4), np.zeros((3, 4), np.int32))
    close(histogram.histogram(np.zeros((0, 5), np.float32), 0.0, 1.0, 4), np.zeros((0, 4), np.int32))


def test_histogram_vmap(histogram):
    v = rng(2).uniform(0, 10, (3, 4, 100)).astype(np.float32)
    want = np.stack([np_histogram(b, 0.0, 10.0, 5) for b in v])
    close(jax.vmap(lambda b: histogram.histogram(b, 0.0, 10.0, 5))(v), want)
    close(jax.vmap(lambda b: histogram.histogram(b, 0.0, 10.0, 5), in_axes=2)(np.moveaxis(v, 0, 2)), want)
    close(jax.jit(jax.vmap(jax.vmap(lambda b: histogram.histogram(b, 0.0, 10.0, 5))))(v[:, :, None]),
          want[:, :, None])


# --- polar (two outputs) and accumulate (InMut) -----------------------------------

def test_polar_returns_tuple_in_declaration_order(polar):
    x, y = f32(1000, seed=1), f32(1000, seed=2)
    x[:4] = [0.0, -1.0, 0.0, 3.0]
    y[:4] = [0.0, 0.0, -2.0, 4.0]
    for f in (polar.polar, jax.jit(polar.polar)):
        out = f(x, y)
        assert isinstance(out, tuple) and len(out) == 2
        r, t = out
        close(r, np.hypot(x, y), rtol=1e-6)
        close(t, np.arctan2(y, x), rtol=1e-6)
    assert np.asarray(r)[3] == 5.0


def test_polar_vmap(polar):
    xs, ys = f32(3, 40, seed=3), f32(40, 3, seed=4)
    r, t = jax.vmap(polar.polar, in_axes=(0, 1))(xs, ys)
    close(r, np.hypot(xs, ys.T), rtol=1e-6)
    close(t, np.arctan2(ys.T, xs), rtol=1e-6)
    r, t = jax.vmap(polar.polar, in_axes=(None, 0), out_axes=(0, 1))(xs[0], ys.T)
    close(r, np.hypot(xs[0], ys.T), rtol=1e-6)
    close(t, np.arctan2(ys.T, xs[0]).T, rtol=1e-6)


def test_polar_zero_size(polar):
    r, t = polar.polar(np.zeros(0, np.float32), np.zeros(0, np.float32))
    assert r.shape == (0,) and t.shape == (0,)


def test_accumulate_returns_updated_array(polar):
    total = f32(1000, seed=5)
    delta = f32(1000, seed=6)
    want = total + delta
    close(polar.accumulate(total, delta), want)
    # The argument (a NumPy array here) is not changed.
    np.testing.assert_array_equal(total, f32(1000, seed=5))
    t = jnp.asarray(total)
    close(polar.accumulate(t, delta), want)
    close(t, total)   # the caller's jax array keeps its value
    close(jax.jit(polar.accumulate)(t, delta), want)
    close(t, total)


def test_accumulate_with_donation(polar):
    delta = f32(1000, seed=6)
    f = jax.jit(polar.accumulate, donate_argnums=0)
    t = jnp.ones(1000, jnp.float32)
    want = np.ones(1000, np.float32)
    for _ in range(3):
        t = f(t, delta)
        want = want + delta
        close(t, want)


def test_accumulate_repeated_with_donation(polar):
    delta = np.full(257, 0.5, np.float32)
    f = jax.jit(polar.accumulate, donate_argnums=0)
    t = jnp.zeros(257, jnp.float32)
    for _ in range(4):
        t = f(t, delta)
    close(t, np.full(257, 2.0, np.float32))


def test_accumulate_twice_in_one_jit(polar):
    def g(t, d):
        t = polar.accumulate(t, d)
        return polar.accumulate(t, 2 * d), t
    d = f32(64, seed=9)
    t0 = f32(64, seed=10)
    final, middle = jax.jit(g)(t0, d)
    close(middle, t0 + d)
    close(final, t0 + d + 2 * d, rtol=1e-6)


def test_accumulate_aliasing(polar):
    t = jnp.arange(6, dtype=jnp.float32)
    want = 2 * np.arange(6, dtype=np.float32)
    # The same array as the in-place operand and as the other input.
    close(polar.accumulate(t, t), want)
    close(jax.jit(lambda v: polar.accumulate(v, v))(t), want)
    close(t, np.arange(6, dtype=np.float32))
    close(jax.jit(lambda v: polar.accumulate(v, v), donate_argnums=0)(jnp.asarray(t) + 0), want)

    # The original value is still read after the in-place update inside jit.
    def g(v, d):
        return polar.accumulate(v, d), v * 2, polar.accumulate(v, -d)
    d = np.ones(6, np.float32)
    up, doubled, down = jax.jit(g)(t, d)
    base = np.arange(6, dtype=np.float32)
    close(up, base + 1)
    close(doubled, 2 * base)
    close(down, base - 1)


def test_accumulate_vmap(polar):
    totals, deltas = f32(3, 50, seed=1), f32(3, 50, seed=2)
    close(jax.vmap(polar.accumulate)(totals, deltas), totals + deltas)
    # Unbatched in-place operand with a batched delta, and the reverse.
    close(jax.vmap(polar.accumulate, in_axes=(None, 0))(totals[0], deltas), totals[0] + deltas)
    close(jax.vmap(polar.accumulate, in_axes=(0, None))(totals, deltas[0]), totals + deltas[0])
    # Batched along axis 1 of the in-place operand.
    close(jax.vmap(polar.accumulate, in_axes=(1, 0))(totals.T, deltas), totals + deltas)
    close(jax.jit(jax.vmap(polar.accumulate, in_axes=(1, 0)))(totals.T, deltas), totals + deltas)
    nested = jax.vmap(jax.vmap(polar.accumulate, in_axes=(0, None)), in_axes=(None, 0))
    got = nested(totals, deltas)   # [delta batch, total batch, n]
    close(got, totals[None] + deltas[:, None])


def test_accumulate_zero_size(polar):
    got = polar.accumulate(np.zeros(0, np.float32), np.zeros(0, np.float32))
    assert got.shape == (0,)
    got = jax.jit(polar.accumulate, donate_argnums=0)(jnp.zeros(0, jnp.float32), np.zeros(0, np.float32))
    assert got.shape == (0,)


def test_histogram_without_bins_counts_nothing(histogram):
    v = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    got = np.asarray(histogram.histogram(v, -1.0, 1.0, 0))
    assert got.shape == (3, 0)
    # An empty range counts nothing either.
    np.testing.assert_array_equal(np.asarray(histogram.histogram(v, 1.0, -1.0, 4)),
                                  np.zeros((3, 4), np.int32))


# --- softmax (a kernel under the block executor) -----------------------------------

def softmax_of(x):
    e = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize("rows, cols", [(1, 1), (3, 255), (5, 256), (40, 1000)])
def test_softmax(softmax, rows, cols):
    x = 3 * f32(rows, cols, seed=cols)
    close(softmax.softmax(x), softmax_of(x), rtol=2e-6, atol=1e-7)
    close(jax.jit(softmax.softmax)(x), softmax_of(x), rtol=2e-6, atol=1e-7)


def test_softmax_vmap_and_zero_rows(softmax):
    x = f32(4, 6, 300, seed=5)
    close(jax.vmap(softmax.softmax)(x), softmax_of(x), rtol=2e-6, atol=1e-7)
    close(jax.vmap(jax.vmap(softmax.softmax))(x.reshape(2, 2, 6, 300)),
          softmax_of(x).reshape(2, 2, 6, 300), rtol=2e-6, atol=1e-7)
    close(softmax.softmax(np.zeros((0, 8), np.float32)), np.zeros((0, 8), np.float32))
