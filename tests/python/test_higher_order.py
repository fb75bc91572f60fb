"""Derivatives of any order where the declared kernels allow it
(higher_order_kernels.cu): jax.hessian, grad of grad, jacrev(jacrev(...))
and mixed-mode jacobians against jnp references of the same functions and
against finite differences, and the errors that name the kernel and the
annotation it needs where they do not."""

import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def ho(build_package):
    return build_package("higher_order", sources=[HERE / "higher_order_kernels.cu"])


RNG = np.random.default_rng(7)
X, Y = RNG.standard_normal(6), RNG.standard_normal(6)


def close(got, want, rtol=1e-10):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-12)


def finite_difference_hessian(loss, x, eps=1e-5):
    """Central differences of jax.grad (first order only): column i is
    (grad(x + eps e_i) - grad(x - eps e_i)) / 2 eps."""
    grad = jax.grad(loss)
    cols = [(np.asarray(grad(x + eps * e)) - np.asarray(grad(x - eps * e))) / (2 * eps)
            for e in np.eye(len(x))]
    return np.stack(cols, axis=1)


def exactly(message):
    return "^" + re.escape(message) + r"(\n|$)"


def test_linear_kernel_any_order_without_more_annotations(ho):
    # saxpy's backward kernel takes no forward value: its derivative with
    # respect to the cotangents is itself, and the kernel is affine.
    loss = lambda x: jnp.sum(jnp.sin(ho.saxpy(x, Y, 1.5)))
    ref = lambda x: jnp.sum(jnp.sin(1.5 * x + Y))
    close(jax.hessian(loss)(X), jax.hessian(ref)(X))
    close(jax.jit(jax.hessian(loss))(X), jax.hessian(ref)(X))
    close(jax.jacrev(jax.jacrev(loss))(X), jax.hessian(ref)(X))
    close(jax.jacfwd(jax.jacrev(loss))(X), jax.hessian(ref)(X))
    np.testing.assert_allclose(jax.hessian(loss)(X), finite_difference_hessian(loss, X),
                               rtol=1e-6, atol=1e-8)
    gg = lambda f: jax.grad(lambda x: jnp.sum(jax.grad(f)(x) ** 2))
    close(gg(loss)(X), gg(ref)(X))
    close(jax.jit(jax.vmap(gg(loss)))(np.stack([X, X + 1])),
          jax.vmap(gg(ref))(np.stack([X, X + 1])))
    # Third order, both ways, and in both inputs.
    close(jax.jacfwd(jax.hessian(loss))(X), jax.jacfwd(jax.hessian(ref))(X))
    close(jax.jacrev(jax.jacrev(jax.jacrev(loss)))(X), jax.jacfwd(jax.hessian(ref))(X))
    both = lambda x, y: jnp.sum(jnp.sin(ho.saxpy(x, y, 1.5)) * y)
    close(jax.hessian(both, argnums=(0, 1))(X, Y),
          jax.hessian(lambda x, y: jnp.sum(jnp.sin(1.5 * x + y) * y), argnums=(0, 1))(X, Y))
    check_grads(lambda x, y: ho.saxpy(x, y, 1.5), (X, Y), order=2, modes=["fwd", "rev"])


def test_linear_kernel_with_two_outputs(ho):
    c, s = np.cos(0.3), np.sin(0.3)
    loss = lambda x, y: jnp.sum(ho.rotate(x, y, 0.3)[0] ** 2 * ho.rotate(x, y, 0.3)[1])
    ref = lambda x, y: jnp.sum((c * x - s * y) ** 2 * (s * x + c * y))
    close(jax.hessian(loss, argnums=(0, 1))(X, Y), jax.hessian(ref, argnums=(0, 1))(X, Y))
    close(jax.jacrev(jax.jacrev(loss))(X, Y), jax.hessian(ref)(X, Y))
    check_grads(lambda x, y: ho.rotate(x, y, 0.3), (X, Y), order=2, modes=["fwd", "rev"])


def test_hessian_from_tangent_kernels(ho):
    # cube_add: KC_VJP and KC_JVP; its backward kernel takes x and gives
    # its own forward mode with KC_JVP.
    loss = lambda x: jnp.sum(jnp.sin(ho.cube_add(x, Y, 0.7)))
    ref = lambda x: jnp.sum(jnp.sin(0.7 * x ** 3 + Y))
    close(jax.hessian(loss)(X), jax.hessian(ref)(X))
    close(jax.jit(jax.hessian(loss))(X), jax.hessian(ref)(X))
    np.testing.assert_allclose(jax.hessian(loss)(X), finite_difference_hessian(loss, X),
                               rtol=1e-6, atol=1e-8)
    xs = np.stack([X, 2 * X])
    close(jax.vmap(jax.hessian(loss))(xs), jax.vmap(jax.hessian(ref))(xs))
    # Mixed mode: forward over reverse of the op itself, in both inputs.
    f = lambda x, y: ho.cube_add(x, y, 0.7)
    close(jax.jacfwd(jax.jacrev(f, argnums=(0, 1)), argnums=(0, 1))(X, Y),
          jax.jacfwd(jax.jacrev(lambda x, y: 0.7 * x ** 3 + y, argnums=(0, 1)),
                     argnums=(0, 1))(X, Y))
    check_grads(f, (X, Y), order=1, modes=["fwd", "rev"])


def test_hessian_of_a_two_output_kernel(ho):
    loss = lambda x: jnp.sum(ho.sincos(x)[0] * ho.sincos(x)[1] ** 2)
    ref = lambda x: jnp.sum(jnp.sin(x) * jnp.cos(x) ** 2)
    close(jax.hessian(loss)(X), jax.hessian(ref)(X))
    np.testing.assert_allclose(jax.hessian(loss)(X), finite_difference_hessian(loss, X),
                               rtol=1e-6, atol=1e-8)
    close(jax.jacfwd(jax.jacrev(ho.sincos))(X),
          jax.jacfwd(jax.jacrev(lambda x: (jnp.sin(x), jnp.cos(x))))(X))
    close(jax.jit(jax.vmap(jax.hessian(loss)))(np.stack([X, X + 1])),
          jax.vmap(jax.hessian(ref))(np.stack([X, X + 1])))


def test_forward_over_forward_with_a_linear_tangent_kernel(ho):
    loss = lambda x: jnp.sum(ho.double_it(x) ** 2)
    close(jax.jacfwd(jax.jacfwd(loss))(X), 8 * np.eye(len(X)))
    check_grads(ho.double_it, (X,), order=2, modes=["fwd"])


def test_forward_mode_from_a_differentiable_backward_kernel(ho):
    # mul's backward kernel declares KC_VJP: its gradient with respect to
    # the cotangent is mul's Jacobian-vector product.
    close(jax.jacfwd(lambda x: ho.mul(x, Y))(X), np.diag(Y))
    loss = lambda x: jnp.sum(jnp.sin(ho.mul(x, Y)))
    ref = lambda x: jnp.sum(jnp.sin(x * Y))
    gg = lambda f: jax.grad(lambda x: jnp.sum(jax.grad(f)(x) ** 2))
    close(gg(loss)(X), gg(ref)(X))
    close(jax.jacrev(jax.jacrev(loss))(X), jax.hessian(ref)(X))
    check_grads(lambda x, y: ho.mul(x, y), (X, Y), order=2, modes=["rev"])


def test_unsupported_orders_name_the_kernel_and_the_annotation(ho):
    # Reverse over reverse needs the backward kernel's reverse mode: cube_add's
    # has a tangent kernel only.
    loss = lambda x: jnp.sum(jnp.sin(ho.cube_add(x, Y, 0.7)))
    with pytest.raises(TypeError, match=exactly(
            "cube_add_bwd: cannot differentiate in reverse mode (jax.grad, jax.vjp, "
            "jax.jacrev): the kernel declares a tangent kernel ('cube_add_bwd_jvp', "
            "KC_JVP), which gives forward mode (jax.jvp, jax.jacfwd), and a kernel "
            "cannot be transposed; reverse mode needs a backward kernel: name one with "
            "KC_VJP(\"...\") instead")):
        jax.jacrev(jax.jacrev(loss))(X)
    # jax.hessian needs mul_bwd's forward mode, which its backward kernel
    # (taking forward values) cannot give.
    with pytest.raises(TypeError, match=exactly(
            "mul_bwd: cannot differentiate in forward mode (jax.jvp, jax.jacfwd, "
            "jax.hessian): the kernel declares a backward kernel ('mul_bwd_bwd', "
            "KC_VJP), which gives reverse mode; since 'mul_bwd_bwd' takes forward "
            "values, the Jacobian-vector product needs a tangent kernel: name one with "
            "KC_JVP(\"...\") beside KC_VJP, or give 'mul_bwd_bwd' a backward kernel "
            "with KC_VJP(\"...\")")):
        jax.hessian(lambda x: jnp.sum(jnp.sin(ho.mul(x, Y))))(X)
    # A third order needs derivatives of the tangent kernel, which declares
    # none.
    with pytest.raises(TypeError, match=exactly(
            "cube_add_jvp: cannot differentiate: the kernel declares no backward "
            "kernel; name one with KC_VJP(\"...\") (or a tangent kernel with "
            "KC_JVP(\"...\") for forward mode)")):
        jax.jacfwd(jax.jacfwd(jax.jacrev(loss)))(X)
