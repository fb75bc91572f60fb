"""A corpus of real public kernels (tests/corpus; each file names its
origin and keeps its licence), annotated for kernelc and otherwise as
published: each builds for the cuda target (ptxas accepts the PTX) and runs
on the CPU against NumPy, those with block-level features (shared memory,
barriers, warp collectives, cooperative groups) under the block executor,
eagerly, under jax.jit and under jax.vmap."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import ROOT
from numeric_checks import (SUM_TOLERANCE, block_sums, close, layernorm, random, rng,
                            softmax, three_ways)
from cuda_tools import check_cuda_build, toolkit_include

CORPUS = ROOT / "tests" / "corpus"
SOURCES = sorted(CORPUS.glob("*.cu"))


def test_corpus_is_there():
    assert [p.name for p in SOURCES] == [
        "cuda_samples_histogram256.cu", "cuda_samples_matrix_mul.cu",
        "cuda_samples_reduction.cu", "cuda_samples_shfl_scan.cu",
        "cuda_samples_transpose.cu", "cuda_samples_vector_add.cu",
        "llmc_adamw.cu", "llmc_gelu.cu", "llmc_layernorm.cu",
        "llmc_residual_encoder.cu", "llmc_softmax.cu"]
    for p in SOURCES:
        assert p.read_text().startswith("// Origin: ")


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_corpus_kernel_builds_for_cuda(source, tmp_path):
    check_cuda_build(source, tmp_path, "cpu,cuda")


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


# --- block-level kernels, under the block executor ----------------------------------


def test_cuda_samples_histogram256(corpus):
    # Per-block histograms with per-warp shared subhistograms (shared-memory
    # atomics), merged by the second kernel.
    m = corpus("cuda_samples_histogram256")

    def histogram(words):
        return m.mergeHistogram256Kernel(m.histogram256Kernel(words))

    inputs = [(rng(s).integers(0, 2**32, 12345, dtype=np.uint32),) for s in range(3)]
    three_ways(histogram, lambda w: np.bincount(w.view(np.uint8), minlength=256), inputs,
               "i32")
    # A block per 192 words, at most 240 (the sample's count).
    assert m.histogram256Kernel(inputs[0][0]).shape == (65, 256)
    assert m.histogram256Kernel(np.zeros(192 * 300, np.uint32)).shape == (240, 256)


def test_cuda_samples_shfl_scan(corpus):
    # The sample's three launches: a scan of each block of 256 and its total,
    # a scan of the totals, and their sums added to the blocks after the
    # first (the sample passes the data from its second block on): all of
    # x's prefix sums.
    m = corpus("cuda_samples_shfl_scan")

    def scan(x):
        data, totals = m.shfl_scan_test(x, 32)
        totals, _ = m.shfl_scan_test(totals, 32)
        rest = m.uniform_add(data[256:], totals[:-1])
        return jnp.concatenate([data[:256], rest])

    inputs = [(rng(s).integers(-100, 100, 256 * 256).astype(np.int32),) for s in range(2)]
    three_ways(scan, lambda x: np.cumsum(x), inputs, "i32")


def test_cuda_samples_transpose(corpus):
    m = corpus("cuda_samples_transpose")
    inputs = [(random((64, 96), "f32", s),) for s in range(3)]
    three_ways(m.transposeNoBankConflicts, lambda x: x.T, inputs, "f32")


def test_cuda_samples_matrix_mul(corpus):
    m = corpus("cuda_samples_matrix_mul")
    inputs = [(random((64, 96), "f32", s), random((96, 32), "f32", s + 5))
              for s in range(3)]
    three_ways(m.MatrixMulCUDA, lambda a, b: a.astype(np.float64) @ b, inputs, "f32")


@pytest.mark.parametrize("kind", ["f32", "f64"])
def test_cuda_samples_reduce4(corpus, kind):
    # Two elements per thread: block b sums elements [256 b, 256 b + 256).
    m = corpus("cuda_samples_reduction")
    inputs = [(random(5000, kind, s),) for s in range(3)]
    three_ways(m.reduce4, lambda x: block_sums(x, -(-x.size // 256), 256), inputs, kind,
               tol=SUM_TOLERANCE[kind])
    x = random(300, kind, 1)   # a block's second half past the end
    close(m.reduce4(x), block_sums(x, 2, 256), kind, SUM_TOLERANCE[kind])


@pytest.mark.parametrize("kind", ["f32", "f64"])
def test_cuda_samples_cg_reduce(corpus, kind):
    # A grid-stride sum per thread over 24 blocks of 256, then cg::reduce.
    m = corpus("cuda_samples_reduction")
    inputs = [(random(100003, kind, seed),) for seed in range(3)]
    three_ways(m.cg_reduce, lambda x: block_sums(x, 24, 256), inputs, kind,
               tol=SUM_TOLERANCE[kind])


@pytest.mark.parametrize("cols", [64, 300, 1000])
def test_llmc_softmax(corpus, cols):
    # Kernel 7: with 64 columns, half the block returns before its barriers.
    m = corpus("llmc_softmax")
    inputs = [(random((17, cols), "f32", s, -4, 4),) for s in range(3)]
    three_ways(m.softmax_forward_kernel7, softmax, inputs, "f32")


def test_llmc_layernorm(corpus):
    # A warp per row, cg::reduce over a tile of 32, __stcs stores.
    m = corpus("llmc_layernorm")
    inputs = [(random((19, 200), "f32", s, -3, 3), random(200, "f32", s + 5),
               random(200, "f32", s + 9)) for s in range(3)]
    three_ways(m.layernorm_forward_kernel3, lambda x, w, b: layernorm(x, w, b, 1e-5),
               inputs, "f32")
