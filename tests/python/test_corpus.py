"""A corpus of real public kernels (tests/corpus; each file names its
origin and keeps its licence), annotated for kernelc and otherwise as
published: each builds for the cuda target (ptxas accepts the PTX) and,
unless it uses block-level features, runs on the CPU against NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import ROOT
from test_cuda_build import toolkit_include
from test_real_cuda import check_cuda_build

CORPUS = ROOT / "tests" / "corpus"
# Kernels with __shared__, barriers or warp collectives: the cuda target
# only, until the CPU target runs them.
CUDA_ONLY = {"cuda_samples_matrix_mul.cu", "llmc_layernorm.cu"}
SOURCES = sorted(CORPUS.glob("*.cu"))


def test_corpus_is_there():
    assert [p.name for p in SOURCES] == [
        "cuda_samples_matrix_mul.cu", "cuda_samples_vector_add.cu",
        "llmc_adamw.cu", "llmc_gelu.cu", "llmc_layernorm.cu",
        "llmc_residual_encoder.cu"]
    for p in SOURCES:
        assert p.read_text().startswith("// Origin: ")


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_corpus_kernel_builds_for_cuda(source, tmp_path):
    check_cuda_build(source, tmp_path,
                     "cuda" if source.name in CUDA_ONLY else "cpu,cuda")


@pytest.fixture(scope="module")
def corpus(build_package):
    toolkit_include()
    return lambda stem: build_package(
        "corpus_" + stem, sources=[CORPUS / f"{stem}.cu"],
        extra=("--target", "cpu,cuda", "--cuda-arch", "sm_80"))


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def test_llmc_gelu_forward_and_backward(corpus):
    m = corpus("llmc_gelu")
    x = np.linspace(-5, 5, 2001).astype(np.float32)
    np.testing.assert_allclose(np.asarray(m.gelu_forward_kernel(x)), gelu(x),
                               rtol=1e-5, atol=1e-6)
    dout = np.cos(x).astype(np.float32)
    expected = np.asarray(jax.grad(
        lambda v: jnp.sum(jax.nn.gelu(v, approximate=True) * dout))(x))
    np.testing.assert_allclose(
        np.asarray(m.gelu_backward_kernel(x, dout)), expected, rtol=1e-4,
        atol=1e-5)


def test_llmc_residual_and_encoder(corpus):
    m = corpus("llmc_residual_encoder")
    rng = np.random.default_rng(0)
    a = rng.standard_normal(777, np.float32)
    b = rng.standard_normal(777, np.float32)
    np.testing.assert_array_equal(np.asarray(m.residual_forward_kernel(a, b)),
                                  a + b)
    B, T, C, V = 2, 5, 8, 11
    tokens = rng.integers(0, V, (B, T)).astype(np.int32)
    wte = rng.standard_normal((V, C), np.float32)
    wpe = rng.standard_normal((T + 3, C), np.float32)
    np.testing.assert_allclose(
        np.asarray(m.encoder_forward_kernel2(tokens, wte, wpe)),
        wte[tokens] + wpe[:T][None], rtol=1e-6)


def test_llmc_adamw_traced_step_values(corpus):
    m = corpus("llmc_adamw")
    rng = np.random.default_rng(2)
    n = 1000
    p = rng.standard_normal(n, np.float32)
    g = rng.standard_normal(n, np.float32)
    mm = np.zeros(n, np.float32)
    vv = np.zeros(n, np.float32)
    beta1, beta2, eps, wd = 0.9, 0.999, 1e-8, 0.01
    step = jax.jit(lambda p, g, mm, vv, lr, c1, c2: m.adamw_kernel2(
        p, g, mm, vv, lr, beta1, beta2, c1, c2, eps, wd))
    ref = [p.astype(np.float64), mm.astype(np.float64), vv.astype(np.float64)]
    state = (jnp.asarray(p), jnp.asarray(mm), jnp.asarray(vv))
    for t in range(1, 4):
        lr = 1e-3 * t
        c1, c2 = 1 - beta1**t, 1 - beta2**t
        state = step(state[0], g, state[1], state[2], jnp.float32(lr),
                     jnp.float32(c1), jnp.float32(c2))
        rp, rm, rv = ref
        rm = beta1 * rm + (1 - beta1) * g
        rv = beta2 * rv + (1 - beta2) * g * g
        rp = rp - lr * ((rm / c1) / (np.sqrt(rv / c2) + eps) + wd * rp)
        ref = [rp, rm, rv]
    for got, want in zip(state, ref):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4,
                                   atol=1e-6)
    # Learning rate and bias corrections change every step: one entry.
    assert step._cache_size() == 1


def test_cuda_samples_vector_add(corpus):
    m = corpus("cuda_samples_vector_add")
    a = np.arange(50000, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(m.vectorAdd(a, 2 * a)), 3 * a)
