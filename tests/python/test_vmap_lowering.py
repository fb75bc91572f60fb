"""Under jax.vmap a generated op stays one custom call: no scan, no while
loop, for grid kernels, view kernels, host kernels, two-output kernels and
in-place (InMut) kernels, nested vmaps included; and the batched call gives
NumPy's numbers, for batched arguments mixed with unbatched ones."""

import re

import jax
import numpy as np
import pytest

from conftest import EXAMPLES


@pytest.fixture(scope="module")
def ex(build_package):
    return {name: build_package(f"vm_{name}", sources=[EXAMPLES / src])
            for name, src in [("saxpy", "saxpy.cu"), ("matmul", "matmul.cu"),
                              ("histogram", "histogram.cc"), ("polar", "polar.cu")]}


def f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def lowered_ops(fn, *args):
    """The compiled HLO text of fn(*args): (custom calls, while loops)."""
    text = jax.jit(fn).lower(*args).compile().as_text()
    return len(re.findall(r"custom-call\(", text)), len(re.findall(r"\bwhile\(", text))


def test_vmap_is_one_call(ex):
    saxpy, matmul = ex["saxpy"].saxpy, ex["matmul"].matmul
    xs, y = f32(64, 100, seed=1), f32(100, seed=2)
    f = jax.vmap(lambda a, b: saxpy(a, b, 2.0), in_axes=(0, None))
    assert lowered_ops(f, xs, y) == (1, 0)
    np.testing.assert_allclose(np.asarray(jax.jit(f)(xs, y)), 2 * xs + y, rtol=1e-6)

    nested = jax.vmap(jax.vmap(lambda a, b: saxpy(a, b, 2.0)), in_axes=(1, None))
    x3, y2 = f32(4, 3, 100, seed=3), f32(4, 100, seed=4)
    assert lowered_ops(nested, x3, y2) == (1, 0)
    np.testing.assert_allclose(np.asarray(nested(x3, y2)),
                               2 * np.moveaxis(x3, 1, 0) + y2[None], rtol=1e-6)

    a, b = f32(8, 5, 6, seed=5), f32(6, 7, seed=6)
    g = jax.vmap(matmul, in_axes=(0, None))
    assert lowered_ops(g, a, b) == (1, 0)
    np.testing.assert_allclose(np.asarray(g(a, b)), a @ b, rtol=1e-5, atol=1e-5)


def test_vmap_host_kernel_is_one_call(ex):
    hist = ex["histogram"].histogram
    v = np.random.default_rng(0).uniform(0, 1, (6, 3, 50)).astype(np.float32)
    f = jax.vmap(lambda x: hist(x, 0.0, 1.0, 4))
    assert lowered_ops(f, v) == (1, 0)
    got = np.asarray(f(v))
    want = np.stack([[np.histogram(r, bins=4, range=(0, 1))[0] for r in m] for m in v])
    np.testing.assert_array_equal(got, want.astype(np.int32))


def test_vmap_two_outputs_and_inmut(ex):
    polar = ex["polar"]
    x, y = f32(5, 33, seed=7), f32(33, seed=8)
    f = jax.vmap(polar.polar, in_axes=(0, None))
    assert lowered_ops(f, x, y) == (1, 0)
    r, a = f(x, y)
    np.testing.assert_allclose(np.asarray(r), np.hypot(x, y), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(a), np.arctan2(y, x), rtol=1e-6, atol=1e-6)

    # In place: the unbatched total is broadcast to the batch, then updated.
    total, deltas = f32(33, seed=9), f32(5, 33, seed=10)
    g = jax.vmap(polar.accumulate, in_axes=(None, 0))
    assert lowered_ops(g, total, deltas) == (1, 0)
    np.testing.assert_allclose(np.asarray(jax.jit(g)(total, deltas)), total + deltas,
                               rtol=1e-6)
    h = jax.vmap(polar.accumulate, in_axes=(1, None), out_axes=1)
    totals = f32(33, 4, seed=11)
    np.testing.assert_allclose(np.asarray(h(totals, total)), totals + total[:, None],
                               rtol=1e-6)


ELEMENTWISE = r"""
#include <kernelc.h>
// Elementwise: under vmap the batch folds into one run.
KC_GRID("n")
KC_ELEMENTWISE
__global__ void axpb(KC_IN("n") const float* x, KC_IN("n") const float* y, float a,
                     KC_DERIVED("x.size") int64_t n, KC_OUT("n") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}
// Reports the extent the kernel ran over (not elementwise in spirit: it
// shows that one run covered the whole batch).
KC_GRID("n")
KC_ELEMENTWISE
__global__ void extent(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n,
                       KC_OUT("n") int64_t* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = n;
}
// The same without KC_ELEMENTWISE: one run per batch element.
KC_GRID("n")
__global__ void extent_each(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n,
                            KC_OUT("n") int64_t* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = n;
}
"""


def test_elementwise_folds_the_batch(build_package):
    m = build_package("vm_elementwise", ELEMENTWISE)
    xs, y = f32(4, 3, 5, seed=1), f32(5, seed=2)
    np.testing.assert_array_equal(np.asarray(jax.vmap(jax.vmap(m.extent))(xs)),
                                  np.full((4, 3, 5), 60))
    np.testing.assert_array_equal(np.asarray(jax.vmap(m.extent_each)(xs[0])),
                                  np.full((3, 5), 5))
    np.testing.assert_array_equal(np.asarray(m.extent(y)), np.full(5, 5))
    # Batched and unbatched arguments, other in_axes, nested: folded, right.
    f = jax.vmap(jax.vmap(lambda a, b: m.axpb(a, b, 2.0), in_axes=(0, None)),
                 in_axes=(1, None))
    assert lowered_ops(f, xs, y) == (1, 0)
    np.testing.assert_allclose(np.asarray(f(xs, y)), 2 * np.moveaxis(xs, 1, 0) + y,
                               rtol=1e-6)
    g = jax.vmap(lambda b: m.axpb(y, b, -1.0), in_axes=1, out_axes=1)
    np.testing.assert_allclose(np.asarray(jax.jit(g)(xs[0].T)), (-y[:, None] + xs[0].T),
                               rtol=1e-6)


def test_large_batches_match(ex):
    # Over 256 KiB per call: the batch is spread over XLA's thread pool.
    matmul, hist = ex["matmul"].matmul, ex["histogram"].histogram
    a, b = f32(96, 32, 24, seed=12), f32(96, 24, 16, seed=13)
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(matmul))(a, b)), a @ b,
                                   rtol=1e-4, atol=1e-4)
    v = np.random.default_rng(1).uniform(0, 1, (80, 4, 400)).astype(np.float32)
    got = np.asarray(jax.jit(jax.vmap(lambda x: hist(x, 0.0, 1.0, 7)))(v))
    want = np.stack([[np.histogram(r, bins=7, range=(0, 1))[0] for r in m] for m in v])
    np.testing.assert_array_equal(got, want.astype(np.int32))
    x, y = f32(64, 5000, seed=14), f32(5000, seed=15)
    saxpy = ex["saxpy"].saxpy
    # On a CPU with FMA the AVX2 clone rounds 3 * x + y once and NumPy twice:
    # a difference in the last bit, which near zero is a large relative one.
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda t: saxpy(t, y, 3.0))(x)), 3 * x + y,
                               rtol=1e-6, atol=1e-6)
