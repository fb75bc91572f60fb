"""examples/rms_norm.cu, the RMS norm of JAX's GPU tutorial (NVIDIA Apex's
kernels) as kernelc template kernels: forward (out, invvar) against NumPy
in float32, float64, float16 and bfloat16, eagerly, under jax.jit and under
jax.vmap; its gradient (the one backward kernel, KC_VJP) against jax.grad
of a pure jax.numpy RMS norm; sharded along rows on 4 CPU devices
(rms_norm_sharding.py, its own process) equal to unsharded; and the cuda
build, which ptxas accepts."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

from conftest import EXAMPLES, run_check
from cuda_tools import check_cuda_build

SOURCE = EXAMPLES / "rms_norm.cu"
EPS = 1e-5
DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
          "bf16": ml_dtypes.bfloat16}
# (rtol, atol) against float64 NumPy: 16-bit outputs round once at the end
# (the kernels accumulate in float).
TOLERANCE = {"f32": (2e-5, 2e-5), "f64": (1e-12, 1e-12), "f16": (4e-3, 4e-3),
             "bf16": (3e-2, 3e-2)}


@pytest.fixture(scope="module")
def rms(build_package):
    return build_package("ex_rms_norm", sources=[SOURCE])


def inputs(kind, rows, cols, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, (rows, cols)).astype(DTYPES[kind])
    gamma = rng.uniform(0.5, 1.5, cols).astype(DTYPES[kind])
    return x, gamma


def reference(x, gamma):
    """out and invvar in float64."""
    x = np.asarray(x, np.float64)
    invvar = 1 / np.sqrt((x * x).mean(axis=-1) + EPS)
    return x * invvar[..., None] * np.asarray(gamma, np.float64), invvar


def close(got, want, kind):
    rtol, atol = TOLERANCE[kind]
    np.testing.assert_allclose(np.asarray(got, np.float64),
                               np.asarray(want, np.float64), rtol=rtol, atol=atol)


@pytest.mark.parametrize("kind", list(DTYPES))
@pytest.mark.parametrize("rows, cols", [(13, 300), (5, 301), (1, 1), (3, 33)])
def test_forward_eager_and_jit(rms, kind, rows, cols):
    # An odd row length puts every other row of half floats off the 4-byte
    # alignment that the __half2 loads of the tutorial's float16 reduction
    # need: it takes the first element alone.
    x, gamma = inputs(kind, rows, cols)
    want_out, want_invvar = reference(x, gamma)
    for f in (rms.cuApplyRMSNorm, jax.jit(rms.cuApplyRMSNorm, static_argnums=1)):
        out, invvar = f(x, EPS, gamma)
        assert out.dtype == DTYPES[kind] and out.shape == x.shape
        # invvar is U: float, or double for double tensors.
        assert invvar.dtype == (np.float64 if kind == "f64" else np.float32)
        close(out, want_out, kind)
        close(invvar, want_invvar, "f64" if kind == "f64" else "f32")


@pytest.mark.parametrize("kind", list(DTYPES))
def test_forward_vmap(rms, kind):
    xs = np.stack([inputs(kind, 7, 130, seed=s)[0] for s in range(3)])
    gamma = inputs(kind, 7, 130, seed=9)[1]
    want_out, want_invvar = reference(xs, gamma)
    out, invvar = jax.vmap(lambda x: rms.cuApplyRMSNorm(x, EPS, gamma))(xs)
    close(out, want_out, kind)
    close(invvar, want_invvar, "f64" if kind == "f64" else "f32")
    gammas = np.stack([inputs(kind, 7, 130, seed=s + 20)[1] for s in range(3)])
    out, _ = jax.jit(jax.vmap(lambda x, g: rms.cuApplyRMSNorm(x, EPS, g)))(xs, gammas)
    close(out, reference(xs, gammas[:, None, :])[0], kind)


def rms_norm_jnp(x, gamma):
    invvar = jax.lax.rsqrt(jnp.mean(x * x, axis=-1) + EPS)
    return x * invvar[..., None] * gamma, invvar


def loss(f, x, gamma):
    # Reads both results, so both cotangents reach the backward kernel.
    out, invvar = f(x, gamma)
    return jnp.sum(jnp.sin(out.astype(jnp.float32))) + jnp.sum(invvar.astype(jnp.float32) ** 2)


@pytest.mark.parametrize("kind", list(DTYPES))
@pytest.mark.parametrize("rows, cols", [(13, 300), (40, 37), (2, 1)])
def test_grad_against_jax(rms, kind, rows, cols):
    x, gamma = inputs(kind, rows, cols, seed=3)
    kernel = lambda x, g: rms.cuApplyRMSNorm(x, EPS, g)  # noqa: E731
    dx, dgamma = jax.jit(jax.grad(lambda x, g: loss(kernel, x, g), argnums=(0, 1)))(x, gamma)
    assert dx.dtype == DTYPES[kind] and dgamma.dtype == DTYPES[kind]
    # The reference in float64, from the same (rounded) inputs.
    wx, wgamma = jax.grad(lambda x, g: loss(rms_norm_jnp, x, g), argnums=(0, 1))(
        np.asarray(x, np.float64), np.asarray(gamma, np.float64))
    tol = {"f32": (1e-4, 1e-4), "f64": (1e-10, 1e-10), "f16": (1e-2, 1e-2),
           "bf16": (6e-2, 6e-2)}[kind]
    scale = max(1.0, float(np.abs(wgamma).max()))
    for got, want in ((dx, wx), (dgamma, wgamma)):
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want),
                                   rtol=tol[0], atol=tol[1] * scale)


def test_grad_of_out_alone_and_under_vmap(rms):
    x, gamma = inputs("f32", 6, 100, seed=4)
    kernel = lambda x, g: rms.cuApplyRMSNorm(x, EPS, g)[0]  # noqa: E731
    plain = lambda x, g: rms_norm_jnp(x, g)[0]  # noqa: E731
    f = lambda op: lambda x, g: jnp.sum(op(x, g) ** 3)  # noqa: E731
    got = jax.grad(f(kernel), argnums=(0, 1))(x, gamma)
    want = jax.grad(f(plain), argnums=(0, 1))(x, gamma)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
    xs = np.stack([inputs("f32", 6, 100, seed=s)[0] for s in range(3)])
    got = jax.vmap(jax.grad(f(kernel), argnums=(0, 1)), in_axes=(0, None))(xs, gamma)
    want = jax.vmap(jax.grad(f(plain), argnums=(0, 1)), in_axes=(0, None))(xs, gamma)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_variants_and_their_errors(rms):
    x, gamma = inputs("f32", 2, 8)
    with pytest.raises(TypeError, match=r"cuApplyRMSNorm: no variant takes input "
                       r"element types \(float32, float16\)"):
        rms.cuApplyRMSNorm(x, EPS, gamma.astype(np.float16))


def test_sharded_along_rows_equals_unsharded(rms):
    run_check("rms_norm_sharding.py", rms)


def test_cuda_build_for_sm80_and_sm90(tmp_path):
    build = check_cuda_build(SOURCE, tmp_path, "cuda")
    cuda = build / "cuda"
    for arch in ("sm_80", "sm_90"):
        assert (cuda / f"0_rms_norm.{arch}.cubin").read_bytes()[:4] == b"\x7fELF"
    ptx = (cuda / "0_rms_norm.compute_90.ptx").read_text()
    entries = [line for line in ptx.splitlines() if ".entry " in line]
    # The four variants of each template, each an entry by its mangled name.
    for kernel in ("cuApplyRMSNorm", "rms_norm_backward"):
        assert len([e for e in entries if kernel in e]) == 4, entries
