"""Gradients from declared backward kernels (KC_VJP): checked against finite
differences, under jit, vmap and value_and_grad, for a kernel with a static
scalar, a two-output kernel, a kernel with an integer input, and view
kernels with a host-kernel backward."""

import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def ad(build_package):
    return build_package("ad_kernels", sources=[HERE / "autodiff_kernels.cu"])


def rng(seed):
    return np.random.default_rng(seed)


def test_square_add_grads(ad):
    x, y = rng(0).standard_normal(37), rng(1).standard_normal(37)
    f = lambda x, y: ad.square_add(x, y, 1.5)
    check_grads(f, (x, y), order=1, modes=["rev"])
    check_grads(jax.jit(f), (x, y), order=1, modes=["rev"])
    gx, gy = jax.jit(jax.grad(lambda x, y: jnp.sum(f(x, y) * y), argnums=(0, 1)))(x, y)
    np.testing.assert_allclose(np.asarray(gx), 3.0 * x * y, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gy), 1.5 * x * x + 2 * y, rtol=1e-12)
    # The scalar stays static and is passed to the backward kernel.
    gx = jax.grad(lambda x: jnp.sum(ad.square_add(x, y, -2.0)))(x)
    np.testing.assert_allclose(np.asarray(gx), -4.0 * x, rtol=1e-12)


def test_vjp_and_value_and_grad(ad):
    x, y = rng(2).standard_normal(9), rng(3).standard_normal(9)
    out, pullback = jax.vjp(lambda x, y: ad.square_add(x, y, 0.5), x, y)
    np.testing.assert_allclose(np.asarray(out), 0.5 * x * x + y, rtol=1e-12)
    ct = rng(4).standard_normal(9)
    gx, gy = pullback(ct)
    np.testing.assert_allclose(np.asarray(gx), x * ct, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gy), ct, rtol=1e-12)
    v, g = jax.jit(jax.value_and_grad(lambda x: jnp.sum(ad.square_add(x, y, 0.5) ** 2)))(x)
    np.testing.assert_allclose(float(v), np.sum((0.5 * x * x + y) ** 2), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g), 2 * (0.5 * x * x + y) * x, rtol=1e-12)


def test_grad_under_vmap_is_one_call_per_kernel(ad):
    xs, y = rng(5).standard_normal((6, 11)), rng(6).standard_normal(11)
    g = jax.vmap(jax.grad(lambda x, y: jnp.sum(ad.square_add(x, y, 2.0))), in_axes=(0, None))
    np.testing.assert_allclose(np.asarray(jax.jit(g)(xs, y)), 4.0 * xs, rtol=1e-12)
    hlo = jax.jit(g).lower(xs, y).compile().as_text()
    assert hlo.count("custom-call(") == 1 and "while(" not in hlo, hlo
    # Gradients of a vmapped function, and a nested vmap.
    gg = jax.grad(lambda xs: jnp.sum(jax.vmap(lambda x: ad.square_add(x, y, 2.0))(xs)))
    np.testing.assert_allclose(np.asarray(gg(xs)), 4.0 * xs, rtol=1e-12)
    x3 = rng(7).standard_normal((2, 3, 11))
    gn = jax.vmap(jax.vmap(jax.grad(lambda x: jnp.sum(ad.square_add(x, y, 2.0)))))
    np.testing.assert_allclose(np.asarray(gn(x3)), 4.0 * x3, rtol=1e-12)


def test_two_outputs(ad):
    x, y = rng(8).uniform(0.5, 2, 23), rng(9).uniform(-2, 2, 23)
    r, a = ad.polar(x, y)
    np.testing.assert_allclose(np.asarray(r), np.hypot(x, y), rtol=1e-12)
    check_grads(ad.polar, (x, y), order=1, modes=["rev"])
    # Only one output used: the other's cotangent is zero.
    g = jax.grad(lambda x: jnp.sum(ad.polar(x, y)[1]))(x)
    np.testing.assert_allclose(np.asarray(g), -y / (x * x + y * y), rtol=1e-12)
    check_grads(jax.vmap(ad.polar), (np.stack([x, x + 1]), np.stack([y, y])),
                order=1, modes=["rev"])


def test_integer_input_gets_no_gradient(ad):
    table = rng(10).standard_normal(8)
    index = np.array([0, 3, 3, 7, 1, 3], np.int32)
    out = ad.gather(table, index)
    np.testing.assert_allclose(np.asarray(out), table[index])
    check_grads(lambda t: ad.gather(t, index), (table,), order=1, modes=["rev"])
    g = jax.grad(lambda t: jnp.sum(ad.gather(t, index)))(table)
    np.testing.assert_allclose(np.asarray(g), np.bincount(index, minlength=8))
    # Batched tables and batched indices.
    tables, indices = rng(13).standard_normal((3, 8)), np.stack([index, index[::-1], 7 - index])
    gs = jax.jit(jax.vmap(jax.grad(lambda t, i: jnp.sum(ad.gather(t, i) ** 2))))(tables, indices)
    for t, i, g in zip(tables, indices, np.asarray(gs)):
        np.testing.assert_allclose(g, np.bincount(i, weights=2 * t[i], minlength=8), rtol=1e-12)
    # Asking for the integer input's gradient is JAX's usual error.
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        jax.grad(lambda t, i: jnp.sum(ad.gather(t, i)), argnums=1)(table, index)


def test_views_and_host_backward(ad):
    a, b = rng(11).standard_normal((5, 4)), rng(12).standard_normal((4, 3))
    np.testing.assert_allclose(np.asarray(ad.matmul(a, b)), a @ b, rtol=1e-12)
    check_grads(ad.matmul, (a, b), order=1, modes=["rev"])
    check_grads(jax.jit(jax.vmap(ad.matmul, in_axes=(0, None))),
                (np.stack([a, 2 * a]), b), order=1, modes=["rev"])


def test_forward_mode_needs_a_tangent_kernel(ad):
    # The backward kernel takes x: the Jacobian depends on it, and only a
    # tangent kernel gives its product with a vector.
    x = np.ones(3)
    message = exactly(
        "square_add: cannot differentiate in forward mode (jax.jvp, jax.jacfwd, "
        "jax.hessian): the kernel declares a backward kernel ('square_add_bwd', "
        "KC_VJP), which gives reverse mode; since 'square_add_bwd' takes forward "
        "values, the Jacobian-vector product needs a tangent kernel: name one with "
        "KC_JVP(\"...\") beside KC_VJP, or give 'square_add_bwd' a backward kernel "
        "with KC_VJP(\"...\")")
    for forward in (lambda x: jax.jvp(lambda x: ad.square_add(x, x, 1.0), (x,), (x,)),
                    jax.jacfwd(lambda x: ad.square_add(x, x, 1.0))):
        with pytest.raises(TypeError, match=message):
            forward(x)


# --- traced scalars: 0-d tensors ---------------------------------------------------

TRACED = r"""
#include <kernelc.h>
// A 0-d tensor is a traced operand: it can vary under jit, vmap and grad.
KC_GRID("n")
KC_VJP("axpy0_bwd")
__global__ void axpy0(KC_IN("") const float* a, KC_IN("n") const float* x,
                      KC_DERIVED("x.size") int64_t n, KC_OUT("n") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[0] * x[i];
}
KC_KERNEL void axpy0_bwd(kc::In<float, 0> a, KC_SHAPE("n") kc::In<float, 1> x,
                         KC_SHAPE("n") kc::In<float, 1> d_out,
                         KC_SHAPE("") KC_INIT(0) kc::Out<float, 0> d_a,
                         KC_SHAPE("n") kc::Out<float, 1> d_x) {
  for (int64_t i = 0; i < x.shape[0]; ++i) {
    d_a() += d_out(i) * x(i);
    d_x(i) = a() * d_out(i);
  }
}
"""


def test_traced_scalar_as_0d_tensor(build_package):
    m = build_package("ad_traced", TRACED)
    x = np.arange(5, dtype=np.float32)
    f = jax.jit(lambda a, x: m.axpy0(a, x))
    np.testing.assert_array_equal(np.asarray(f(np.float32(3), x)), 3 * x)
    np.testing.assert_array_equal(np.asarray(f(np.float32(-1), x)), -x)
    got = jax.vmap(lambda a: m.axpy0(a, x))(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(got), np.arange(3)[:, None] * x)
    ga, gx = jax.grad(lambda a, x: jnp.sum(m.axpy0(a, x) ** 2), argnums=(0, 1))(
        np.float32(2), x)
    np.testing.assert_allclose(float(ga), 2 * 2 * np.sum(x * x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gx), 2 * 4 * x, rtol=1e-6)
    # The gradient of a traced scalar under vmap: one per batch element.
    gs = jax.vmap(jax.grad(lambda a: jnp.sum(m.axpy0(a, x))))(np.arange(4, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(gs), np.full(4, x.sum()), rtol=1e-6)


def test_kernel_without_vjp_says_so(build_package):
    from conftest import EXAMPLES
    m = build_package("ad_matmul_plain", sources=[EXAMPLES / "matmul.cu"])
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    with pytest.raises(TypeError, match=exactly(
            "matmul: cannot differentiate: the kernel declares no backward kernel; name "
            "one with KC_VJP(\"...\") (or a tangent kernel with KC_JVP(\"...\") for "
            "forward mode)")):
        jax.grad(lambda a: jnp.sum(m.matmul(a, b)))(a)
    # Not differentiated, it runs as before: constants, stop_gradient, vmap.
    w = np.float32(2.0)
    g = jax.grad(lambda w: w * jnp.sum(m.matmul(a, jax.lax.stop_gradient(b * w))))(w)
    np.testing.assert_allclose(float(g), 2.0 * 24, rtol=1e-6)


# --- forward mode: KC_JVP ---------------------------------------------------------

FORWARD = r"""
#include <kernelc.h>
#include <math.h>
// Two outputs (one integer), a scalar and an integer input; forward mode.
KC_GRID("n")
KC_JVP("sincos_jvp")
__global__ void sincos(KC_IN("n") const double* x, KC_IN("n") const int32_t* k,
                       double a, KC_DERIVED("x.size") int64_t n,
                       KC_OUT("n") double* s, KC_OUT("n") int32_t* sign) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  s[i] = sin(a * x[i]) * k[i];
  sign[i] = s[i] < 0 ? -1 : 1;
}
KC_GRID("n")
__global__ void sincos_jvp(KC_IN("n") const double* x, KC_IN("n") const int32_t* k,
                           KC_IN("n") const double* d_x, double a,
                           KC_DERIVED("x.size") int64_t n, KC_OUT("n") double* d_s) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) d_s[i] = a * cos(a * x[i]) * k[i] * d_x[i];
}
"""


def test_forward_mode_from_a_tangent_kernel(build_package):
    m = build_package("ad_forward", FORWARD)
    x, k = rng(20).standard_normal(13), np.arange(13, dtype=np.int32) % 3 - 1
    f = lambda x: m.sincos(x, k, 0.7)[0]
    check_grads(f, (x,), order=1, modes=["fwd"])
    t = rng(21).standard_normal(13)
    (s, sign), (ds, dsign) = jax.jvp(lambda x: m.sincos(x, k, 0.7), (x,), (t,))
    np.testing.assert_allclose(np.asarray(ds), 0.7 * np.cos(0.7 * x) * k * t, rtol=1e-12)
    assert dsign.dtype == jax.dtypes.float0
    # Jacobians by forward mode, under jit and vmap.
    J = jax.jit(jax.jacfwd(f))(x)
    np.testing.assert_allclose(np.asarray(J), np.diag(0.7 * np.cos(0.7 * x) * k), rtol=1e-12)
    xs = np.stack([x, 2 * x])
    _, dss = jax.vmap(lambda x, t: jax.jvp(f, (x,), (t,)))(xs, np.stack([t, t]))
    np.testing.assert_allclose(np.asarray(dss), 0.7 * np.cos(0.7 * xs) * k * t, rtol=1e-12)


# --- what each mode checks and says ----------------------------------------------

CHECKED = r"""
#include <kernelc.h>
// Gradients and tangents of the wrong extent for odd n: the build cannot
// tell (n / 2 * 2 is n only for even n), the trace can.
KC_GRID("n")
KC_VJP("halve_bwd")
__global__ void halve(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n,
                      KC_OUT("n") float* y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i];
}
KC_GRID("m")
__global__ void halve_bwd(KC_IN("n") const float* d_y,
                          KC_DERIVED("d_y.size / 2 * 2") int64_t m,
                          KC_OUT("m") float* d_x) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < m) d_x[i] = 0.5f * d_y[i];
}
// The backward kernel never sees b: its gradient's extent follows from
// d_y, right only when b has x's extent.
KC_GRID("n")
KC_VJP("shift_bwd")
__global__ void shift(KC_IN("n") const float* x, KC_IN("_") const float* b,
                      KC_DERIVED("x.size") int64_t n, KC_OUT("n") float* y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + b[0];
}
KC_GRID("n")
__global__ void shift_bwd(KC_IN("n") const float* d_y,
                          KC_DERIVED("d_y.size") int64_t n,
                          KC_OUT("n") float* d_x, KC_OUT("n") float* d_b) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) d_x[i] = d_b[i] = d_y[i];
}
// Forward mode only.
KC_GRID("n")
KC_JVP("twice_jvp")
__global__ void twice(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n,
                      KC_OUT("n") float* y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
KC_GRID("m")
__global__ void twice_jvp(KC_IN("n") const float* x, KC_IN("n") const float* d_x,
                          KC_DERIVED("x.size / 2 * 2") int64_t m,
                          KC_OUT("m") float* d_y) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < m) d_y[i] = 2.0f * d_x[i];
}
// Updated in place.
KC_GRID("n")
__global__ void bump(KC_INMUT("n") float* t, KC_DERIVED("t.size") int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) t[i] += 1.0f;
}
"""


@pytest.fixture(scope="module")
def checked(build_package):
    return build_package("ad_checked", CHECKED)


def exactly(message):
    return "^" + re.escape(message) + r"(\n|$)"


def test_gradient_shapes_are_checked_at_trace_time(checked):
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(
        np.asarray(jax.grad(lambda x: jnp.sum(checked.halve(x)))(x)), np.full(4, 0.5))
    with pytest.raises(ValueError, match=exactly(
            "halve: backward kernel 'halve_bwd' returns 'd_x' with shape (4,) and "
            "dtype float32, but it is the gradient of input 'x', which has shape "
            "(5,) and dtype float32")):
        jax.jit(jax.grad(lambda x: jnp.sum(checked.halve(x))))(np.ones(5, np.float32))
    with pytest.raises(ValueError, match="returns 'd_x' with shape \\(2,\\)"):
        jax.vmap(jax.grad(lambda x: jnp.sum(checked.halve(x))))(np.ones((2, 3), np.float32))


def test_gradient_shapes_are_checked_for_every_input_shape(checked):
    # The check runs again when an input the backward kernel does not
    # receive changes shape, though what it receives does not.
    loss = lambda x, b: jnp.sum(checked.shift(x, b))
    x = np.ones(4, np.float32)
    gx, gb = jax.grad(loss, argnums=(0, 1))(x, np.ones(4, np.float32))
    np.testing.assert_array_equal(np.asarray(gx), np.ones(4))
    with pytest.raises(ValueError, match=exactly(
            "shift: backward kernel 'shift_bwd' returns 'd_b' with shape (4,) and "
            "dtype float32, but it is the gradient of input 'b', which has shape "
            "(3,) and dtype float32")):
        jax.grad(loss, argnums=(0, 1))(x, np.ones(3, np.float32))


def test_tangent_shapes_are_checked_at_trace_time(checked):
    x = np.arange(4, dtype=np.float32)
    _, t = jax.jvp(checked.twice, (x,), (np.ones(4, np.float32),))
    np.testing.assert_array_equal(np.asarray(t), np.full(4, 2.0))
    with pytest.raises(ValueError, match=exactly(
            "twice: tangent kernel 'twice_jvp' returns 'd_y' with shape (4,) and "
            "dtype float32, but it is the tangent of output 'y', which has shape "
            "(5,) and dtype float32")):
        jax.jvp(checked.twice, (np.ones(5, np.float32),), (np.ones(5, np.float32),))


def test_reverse_mode_of_a_forward_mode_kernel_says_what_it_needs(checked):
    x = np.arange(4, dtype=np.float32)
    message = exactly(
        "twice: cannot differentiate in reverse mode (jax.grad, jax.vjp, jax.jacrev): "
        "the kernel declares a tangent kernel ('twice_jvp', KC_JVP), which gives "
        "forward mode (jax.jvp, jax.jacfwd), and a kernel cannot be transposed; "
        "reverse mode needs a backward kernel: name one with KC_VJP(\"...\") instead")
    loss = lambda x: jnp.sum(checked.twice(x))
    for reverse, arg in ((jax.grad(loss), x), (jax.jit(jax.grad(loss)), x),
                         (jax.jacrev(checked.twice), x),
                         (jax.vmap(jax.grad(loss)), np.stack([x, x]))):
        with pytest.raises(TypeError, match=message):
            reverse(arg)
    # Forward mode, jax.linearize and jacfwd under vmap and jit still work.
    y, linear = jax.linearize(checked.twice, x)
    np.testing.assert_array_equal(np.asarray(linear(np.ones(4, np.float32))), np.full(4, 2.0))
    J = jax.jit(jax.vmap(jax.jacfwd(checked.twice)))(np.stack([x, x]))
    np.testing.assert_array_equal(np.asarray(J), np.stack([2 * np.eye(4)] * 2))


def test_an_in_place_kernel_cannot_be_differentiated(checked):
    t = np.zeros(3, np.float32)
    np.testing.assert_array_equal(np.asarray(checked.bump(t)), np.ones(3))
    message = exactly(
        "bump: cannot differentiate: the kernel updates 't' in place (KC_INMUT), and "
        "an in-place update has no derivative (KC_VJP and KC_JVP take kernels whose "
        "tensors are inputs and outputs); to differentiate it, return the result as "
        "an output (KC_OUT) and name a backward kernel with KC_VJP(\"...\")")
    with pytest.raises(TypeError, match=message):
        jax.grad(lambda t: jnp.sum(checked.bump(t)))(t)
    with pytest.raises(TypeError, match=message):
        jax.jvp(checked.bump, (t,), (t,))
