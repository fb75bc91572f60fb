"""Checks the end-to-end tests share: results against NumPy (in float64,
within a tolerance per dtype) eagerly, under jax.jit and under jax.vmap,
and the NumPy references of the block-level kernels that more than one
test file runs."""

import jax
import ml_dtypes
import numpy as np

DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
          "bf16": ml_dtypes.bfloat16, "i32": np.int32}
# Relative and absolute tolerances against NumPy in float64; sums of
# thousands of float32 values, in another order than NumPy's, get
# SUM_TOLERANCE.
TOLERANCE = {"f32": (2e-5, 2e-5), "f64": (1e-12, 1e-12), "f16": (5e-3, 1e-3),
             "bf16": (3e-2, 5e-3), "i32": (0, 0)}
SUM_TOLERANCE = {"f32": (1e-4, 1e-3), "f64": (1e-12, 1e-11)}


def rng(seed=0):
    return np.random.default_rng(seed)


def close(got, want, kind, tol=None):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    rtol, atol = tol or TOLERANCE[kind]
    np.testing.assert_allclose(got.astype(np.float64),
                               np.asarray(want, np.float64), rtol=rtol, atol=atol)


def three_ways(op, reference, inputs, kind, static=(), tol=None):
    """Checks op(*inputs[0], *static) eagerly and under jax.jit, and op over
    all of `inputs` stacked under jax.vmap, against reference(*inputs[i])
    (one result or a tuple), within `tol` (rtol, atol; else the kind's)."""
    def check(got, want):
        if isinstance(want, tuple):
            assert len(got) == len(want)
            for g, w in zip(got, want):
                close(g, w, kind, tol)
        else:
            close(got, want, kind, tol)

    first = inputs[0]
    check(op(*first, *static), reference(*first))
    check(jax.jit(lambda *a: op(*a, *static))(*first), reference(*first))
    batch = [np.stack(parts) for parts in zip(*inputs)]
    got = jax.vmap(lambda *a: op(*a, *static))(*batch)
    wants = [reference(*one) for one in inputs]
    for i, want in enumerate(wants):
        if isinstance(want, tuple):
            check(tuple(g[i] for g in got), want)
        else:
            check(got[i], want)


def random(shape, kind, seed, lo=-1.0, hi=1.0):
    return rng(seed).uniform(lo, hi, shape).astype(DTYPES[kind])


def block_sums(x, blocks, chunk):
    """Each block's sum of its grid-stride slice: chunks of `chunk`
    elements, dealt round-robin to the blocks."""
    x = np.asarray(x, np.float64)
    owner = (np.arange(x.size) // chunk) % blocks
    return np.bincount(owner, weights=x, minlength=blocks)


def softmax(x):
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x, weight, bias, eps):
    x = np.asarray(x, np.float64)
    mean = x.mean(axis=-1)
    rstd = 1 / np.sqrt(x.var(axis=-1) + eps)
    return (x - mean[:, None]) * rstd[:, None] * weight + bias, mean, rstd
