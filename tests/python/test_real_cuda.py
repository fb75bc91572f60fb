"""Real CUDA code as it is written: whole .cu files with their host code,
template kernels, traced scalars, optional inputs, shapes that start with
'...', grids counted in blocks, macros in annotation expressions, the math
macros on NVRTC. Each source runs on the CPU against NumPy, and builds for
the cuda target with NVRTC, its PTX accepted by ptxas."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import ROOT, run_kernelc
from cuda_tools import check_cuda_build, toolkit_include

SOURCES = ROOT / "tests" / "cuda_sources"
SAMPLE = SOURCES / "sample_vector_add.cu"


# --- Whole .cu files -------------------------------------------------------


def test_whole_sample_file_builds_for_cuda(tmp_path):
    check_cuda_build(SAMPLE, tmp_path)


def test_whole_sample_file_builds_for_both_targets_and_runs_on_cpu(
        build_package):
    toolkit_include()
    m = build_package("sample_vector_add", sources=[SAMPLE],
                      extra=("--target", "cpu,cuda", "--cuda-arch", "sm_80"))
    a = np.linspace(-1, 1, 1000).astype(np.float32)
    a[7] = np.inf
    b = np.arange(1000, dtype=np.float32)
    expected = np.where(np.isinf(a), 0, a) + b
    np.testing.assert_allclose(np.asarray(m.vectorAdd(a, b)), expected,
                               rtol=1e-6, atol=1e-6)


def test_whole_sample_file_without_toolkit_still_reads_its_host_code(
        build_package):
    # The CPU target alone: the host code (cudaMalloc, the launch) is left
    # out of the CPU build as it is of NVRTC's.
    toolkit_include()
    m = build_package("sample_vector_add_cpu", sources=[SAMPLE])
    a = np.ones(300, np.float32)
    np.testing.assert_allclose(np.asarray(m.vectorAdd(a, a)), 2 * a,
                               atol=1e-6)


def test_whole_file_with_an_error_in_its_kernel_reports_it(tmp_path):
    toolkit_include()
    src = tmp_path / "broken_sample.cu"
    src.write_text(SAMPLE.read_text().replace(
        "C[i] = axpb(", "C[i] = undeclared_helper(a) + axpb("))
    r = run_kernelc("build", src, "-o", tmp_path / "out", "--target", "cpu",
                    "-I", SOURCES)
    assert r.returncode == 1
    assert "broken_sample.cu:25:12: error: use of undeclared identifier " \
        "'undeclared_helper'" in r.stderr, r.stderr


# --- Template kernels ------------------------------------------------------

TEMPLATES = SOURCES / "template_kernels.cu"
FEATURES = SOURCES / "annotation_features.cu"


@pytest.mark.parametrize("source", [TEMPLATES, FEATURES],
                         ids=lambda p: p.name)
def test_source_builds_for_cuda(source, tmp_path):
    build = check_cuda_build(source, tmp_path)
    if source == TEMPLATES:
        # NVRTC names each variant's lowered (mangled) symbol.
        lowered = (build / "cuda").glob("*.ptx")
        text = "".join(p.read_text() for p in lowered)
        for mangled in ("_Z5scaleIfLi128EEvPKT_fxPS0_",
                        "_Z5scaleIdLi256EEvPKT_fxPS0_",
                        "_Z5scaleI6__halfLi64EEvPKT_fxPS1_"):
            assert f".weak .entry {mangled}(" in text


@pytest.fixture(scope="module")
def templates(build_package):
    return build_package("template_kernels", sources=[TEMPLATES])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_template_with_three_variants_picks_by_element_type(templates, dtype):
    x = np.linspace(-3, 3, 1000).astype(dtype)
    y = templates.scale(x, 2.5)
    assert y.dtype == dtype
    np.testing.assert_allclose(np.asarray(y, np.float64),
                               (2.5 * x.astype(np.float32)).astype(dtype),
                               rtol=1e-3)


def test_template_variant_under_jit_and_vmap(templates):
    x = np.arange(24, dtype=np.float64).reshape(4, 6)
    y = jax.jit(jax.vmap(lambda r: templates.scale(r, 0.5)))(x)
    np.testing.assert_allclose(np.asarray(y), 0.5 * x)


def test_template_without_matching_variant_lists_the_variants(templates):
    with pytest.raises(TypeError) as e:
        templates.scale(np.arange(4, dtype=np.int32), 1.0)
    assert str(e.value) == (
        "scale: no variant takes input element types (int32); its variants "
        "are scale<float, 128> (x: float32); scale<double, 256> (x: float64); "
        "scale<__half, 64> (x: float16)")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_host_kernel_template_with_two_variants(templates, dtype):
    x = np.arange(1, 11).astype(dtype)
    y = templates.running_sum(x)
    assert y.dtype == dtype
    np.testing.assert_allclose(np.asarray(y), np.cumsum(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_template_gradient_pairs_variant_by_variant(templates, dtype):
    x = np.linspace(-2, 2, 50).astype(dtype)
    g = jax.grad(lambda v: templates.cube(v).sum())(x)
    assert g.dtype == dtype
    np.testing.assert_allclose(np.asarray(g), 3 * x * x, rtol=1e-6)


def test_two_variants_with_the_same_input_types_are_ambiguous(tmp_path):
    src = tmp_path / "ambiguous.cu"
    src.write_text("""#include <kernelc.h>
template <typename T, int B>
KC_GRID("n") KC_BLOCK("B")
__global__ void k(KC_IN("n") const T* x, KC_DERIVED("x.size") int64_t n,
                  KC_OUT("n") T* y) {}
template __global__ void k<float, 64>(const float*, int64_t, float*);
template __global__ void k<float, 128>(const float*, int64_t, float*);
""")
    r = run_kernelc("build", src, "-o", tmp_path / "out")
    assert r.returncode == 1
    assert r.stderr.replace(str(src), "ambiguous.cu") == """\
ambiguous.cu:7:26: error: variants 'k<float, 128>' and 'k<float, 64>' of \
template kernel 'k' take the same input element types (float32), so a call \
cannot choose between them
template __global__ void k<float, 128>(const float*, int64_t, float*);
                         ^
ambiguous.cu:6:26: note: variant 'k<float, 64>' is declared here
template __global__ void k<float, 64>(const float*, int64_t, float*);
                         ^
1 error generated.
"""


# --- Traced scalars, optional inputs, '...' shapes, grids in blocks ---------


@pytest.fixture(scope="module")
def features(build_package):
    return build_package("annotation_features", sources=[FEATURES])


def sgd_reference(p, g, lr, correction, wd):
    return p - lr * (g / correction + wd * p)


def test_traced_scalars_keep_one_cache_entry(features):
    p = jnp.linspace(-1, 1, 300, dtype=jnp.float32)
    g = jnp.cos(p)
    step = jax.jit(lambda p, g, lr, c: features.sgd_step(p, g, lr, c, 0.01))
    expected = np.asarray(p)
    for t in range(1, 4):
        lr, c = jnp.float32(0.1 / t), jnp.float32(1 - 0.9 ** t)
        p = step(p, g, lr, c)
        expected = sgd_reference(expected, np.asarray(g), np.float32(lr),
                                 np.float32(c), np.float32(0.01))
    np.testing.assert_allclose(np.asarray(p), expected, rtol=1e-5)
    assert step._cache_size() == 1


def test_traced_scalar_takes_python_numbers_eagerly(features):
    p = np.ones(10, np.float32)
    g = np.full(10, 2.0, np.float32)
    np.testing.assert_allclose(
        np.asarray(features.sgd_step(p, g, 0.5, 2.0, 0.0)), p - 0.5)


def test_batched_traced_scalar_gives_each_element_its_value(features):
    # Under vmap a batched traced scalar means one value per batch element.
    p = np.ones((3, 8), np.float32)
    g = np.ones((3, 8), np.float32)
    lr = jnp.array([0.0, 0.5, 1.0], jnp.float32)
    out = jax.vmap(features.sgd_step, in_axes=(0, 0, 0, None, None))(
        p, g, lr, jnp.float32(1.0), 0.0)
    np.testing.assert_allclose(np.asarray(out),
                               1 - np.asarray(lr)[:, None] * np.ones((3, 8)))


def test_traced_value_to_static_scalar_names_kc_traced(features):
    p = jnp.ones(4, jnp.float32)
    with pytest.raises(TypeError, match="declare the parameter KC_TRACED"):
        jax.jit(lambda wd: features.sgd_step(p, p, 0.1, 1.0, wd))(
            jnp.float32(0.1))


def test_optional_bias(features):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 19), np.float32)
    w = rng.standard_normal((19, 23), np.float32)
    b = rng.standard_normal(23, np.float32)
    np.testing.assert_allclose(np.asarray(features.linear(x, w, b)),
                               x @ w + b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(features.linear(x, w, None)),
                               x @ w, rtol=1e-4, atol=1e-4)
    jitted = jax.jit(features.linear)
    np.testing.assert_allclose(np.asarray(jitted(x, w, None)), x @ w,
                               rtol=1e-4, atol=1e-4)


def test_optional_bias_of_the_wrong_shape_is_an_error(features):
    x = np.ones((2, 3), np.float32)
    w = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="bias"):
        features.linear(x, w, np.ones(5, np.float32))


def gelu_reference(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


@pytest.mark.parametrize("shape", [(1000,), (7, 33), (3, 5, 129)])
def test_one_elementwise_op_takes_rank_1_2_3(features, shape):
    x = np.linspace(-4, 4, int(np.prod(shape))).astype(np.float32)
    x = x.reshape(shape)
    y = features.gelu(x)
    assert y.shape == shape
    np.testing.assert_allclose(np.asarray(y), gelu_reference(x), rtol=1e-5,
                               atol=1e-6)


def test_leading_dimensions_under_vmap(features):
    x = np.linspace(-1, 1, 2 * 3 * 10).astype(np.float32).reshape(2, 3, 10)
    y = jax.vmap(features.gelu)(x)
    np.testing.assert_allclose(np.asarray(y), gelu_reference(x), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 5)])
def test_last_dimension_named_after_leading_dimensions(features, shape):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 2, shape).astype(np.float32)
    if len(shape) > 1:
        x.reshape(-1, shape[-1])[0] = -np.inf
    y = np.asarray(features.row_max_normalize(x))
    rows = x.reshape(-1, shape[-1])
    m = rows.max(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        expected = np.where(m == -np.inf, np.nan, rows / m).reshape(shape)
    np.testing.assert_allclose(y, expected, rtol=1e-6)


def test_math_macros_match_numpy(features):
    f, d = features.math_constants()
    np.testing.assert_array_equal(
        np.asarray(f),
        np.array([np.pi, np.pi, np.sqrt(2), np.e, np.inf, -np.inf, np.nan,
                  np.log(2)], np.float32))
    np.testing.assert_array_equal(np.asarray(d), [np.pi, np.inf])


def test_backward_of_a_traced_scalar_must_take_it_traced(tmp_path):
    src = tmp_path / "pair.cu"
    src.write_text("""#include <kernelc.h>
KC_GRID("n") KC_VJP("f_bwd")
__global__ void f(KC_IN("n") const float* x, KC_TRACED float s,
                  KC_DERIVED("x.size") int64_t n, KC_OUT("n") float* y) {}
KC_GRID("n")
__global__ void f_bwd(KC_IN("n") const float* d_y, float s,
                      KC_DERIVED("d_y.size") int64_t n,
                      KC_OUT("n") float* d_x) {}
""")
    r = run_kernelc("build", src, "-o", tmp_path / "out")
    assert r.returncode == 1
    assert r.stderr.replace(str(src), "pair.cu").startswith(
        "pair.cu:6:58: error: scalar 's' of backward kernel 'f_bwd' receives "
        "the scalar of kernel 'f' that is KC_TRACED, and must be declared the "
        "same way\n"), r.stderr


# --- Diagnostics of the new annotations -------------------------------------

MISUSES = {
    "ellipsis on a view": (
        """KC_KERNEL void k(KC_SHAPE("...") kc::In<float, 2> x,
                KC_SHAPE("x") kc::Out<float, 2> y) {}""",
        "error: the shape of view 'x' of kernel 'k' cannot start with '...': "
        "the view's type fixes its rank; use a pointer"),
    "ellipsis output without input": (
        """KC_KERNEL void k(KC_IN("n") const float* x,
                KC_OUT("..., n") float* y) {}""",
        "error: the shape of output 'y' of kernel 'k' starts with '...', but "
        "no input's does to give it leading dimensions"),
    "ellipsis with parallel": (
        """KC_KERNEL KC_PARALLEL("c")
void k(KC_IN("..., c") const float* x, KC_OUT("x") float* y) {}""",
        "error: kernel 'k' has KC_PARALLEL, which needs every dimension of its "
        "tensors known, and 'x' has a shape that starts with '...'"),
    "ellipsis shape index": (
        """KC_KERNEL void k(KC_IN("...") const float* x,
                KC_DERIVED("x.shape[0]") int64_t n, KC_OUT("x") float* y) {}""",
        "'x.shape[0]' counts from the first dimension, but the shape of 'x' "
        "starts with '...' and has any rank"),
    "optional binds a symbol": (
        """KC_KERNEL void k(KC_OPTIONAL KC_IN("n") const float* b,
                KC_IN("m") const float* x, KC_OUT("m") float* y) {}""",
        "error: shape symbol 'n' of optional input 'b' is bound by no required "
        "input: an input that may be None cannot give a symbol its value"),
    "optional elementwise": (
        """KC_GRID("n") KC_ELEMENTWISE
__global__ void k(KC_IN("n") const float* x,
                  KC_OPTIONAL KC_IN("n") const float* b,
                  KC_DERIVED("x.size") int64_t n, KC_OUT("n") float* y) {}""",
        "error: KC_ELEMENTWISE kernel 'k' cannot take optional input 'b': "
        "every tensor of an elementwise kernel has one shape"),
    "traced scalar in a shape": (
        """KC_KERNEL void k(KC_IN("n") const float* x, KC_TRACED int64_t m,
                KC_OUT("n * m") float* y) {}""",
        "'m' is a traced scalar (KC_TRACED), whose value is known only on the "
        "device when the kernel runs"),
}


@pytest.mark.parametrize("case", sorted(MISUSES))
def test_misuse_of_the_new_annotations_is_diagnosed(case, tmp_path):
    body, message = MISUSES[case]
    src = tmp_path / "bad.cu"
    src.write_text("#include <kernelc.h>\n" + body + "\n")
    r = run_kernelc("build", src, "-o", tmp_path / "out")
    assert r.returncode == 1, r.stderr
    errors = [line for line in r.stderr.splitlines() if ": error: " in line]
    assert len(errors) == 1 and message in errors[0], r.stderr
