"""Trace-time errors of generated functions: each one is raised before
anything runs, names the kernel and the parameter, and reads exactly as
documented in the package's support module."""

import os
import pathlib
import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import EXAMPLES

SOURCE = r"""
#include <kernelc.h>

// Two inputs bound to one symbol, a derived length and a float scalar.
KC_GRID("n")
__global__ void scale(KC_IN("n") const float* x,
                      KC_IN("n") const float* y,
                      float a,
                      KC_DERIVED("x.size") int64_t n,
                      KC_OUT("x") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + y[i];
}

// Dimensions given by expressions over symbols and a scalar.
KC_KERNEL void shaped(KC_SHAPE("r, c") kc::In<float, 2> a,
                      KC_SHAPE("c * 2") kc::In<float, 1> b,
                      KC_SHAPE("k, r") kc::In<int32_t, 2> idx,
                      int32_t k,
                      KC_SHAPE("r") kc::Out<float, 1> out) {
  for (int64_t i = 0; i < out.shape[0]; ++i) out(i) = 0.0f;
}

// Scalars of several kinds.
KC_KERNEL void scalars(KC_SHAPE("n") kc::In<float, 1> x,
                       int8_t small, uint16_t count, bool flag, double w,
                       KC_SHAPE("n") kc::Out<float, 1> out) {
  for (int64_t i = 0; i < x.shape[0]; ++i)
    out(i) = flag ? x(i) * (float)w + small + count : x(i);
}

// An output shorter than the input: negative when n < 5.
KC_KERNEL void trim(KC_SHAPE("n") kc::In<float, 1> x,
                    KC_SHAPE("n - 5") kc::Out<float, 1> out) {
  for (int64_t i = 0; i < out.shape[0]; ++i) out(i) = x(i + 5);
}

// A scalar sizes the output.
KC_KERNEL void sized(KC_SHAPE("_") kc::In<float, 1> x, int64_t k,
                     KC_SHAPE("k - 1") kc::Out<float, 1> out) {
  for (int64_t i = 0; i < out.shape[0]; ++i) out(i) = 0.0f;
}

// A scalar divides a dimension.
KC_KERNEL void split(KC_SHAPE("n") kc::In<float, 1> x, int64_t parts,
                     KC_SHAPE("parts, n / parts") kc::Out<float, 2> out) {
  for (int64_t i = 0; i < out.shape[0] * out.shape[1]; ++i) out[i] = x(i);
}

// Expressions that leave int64 for large scalars: a derived value, a
// checked input dimension, and an output dimension that min() would bring
// back into range, were it not for the overflow before it.
KC_KERNEL void huge(KC_SHAPE("n") kc::In<float, 1> x, int64_t k,
                    KC_SHAPE("n * k") kc::In<float, 1> y,
                    KC_DERIVED("-x.size * k") int64_t m,
                    KC_SHAPE("min(k * k, n)") kc::Out<float, 1> out) {
  for (int64_t i = 0; i < out.shape[0]; ++i) out(i) = 0.0f;
}

// A uint64 scalar sizes an output: as the handler reads it, int64.
KC_KERNEL void counted(KC_SHAPE("_") kc::In<float, 1> x, uint64_t k,
                       KC_SHAPE("k") kc::Out<float, 1> out) {
  for (int64_t i = 0; i < out.shape[0]; ++i) out(i) = 0.0f;
}

// A derived value with a narrow type.
KC_GRID("n")
__global__ void narrow(KC_IN("_") const float* x,
                       KC_DERIVED("x.size * 1000") int32_t n,
                       KC_OUT("x") float* out) {
}

// 64-bit element types.
KC_GRID("n")
__global__ void wide(KC_IN("n") const int64_t* x,
                     KC_DERIVED("x.size") int64_t n,
                     KC_OUT("x") int64_t* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + 1;
}
"""


@pytest.fixture(scope="module")
def te(build_package):
    return build_package("te_errors", source_text=SOURCE)


def raises(exc, message):
    """The whole message; under jit JAX may append its traceback note on
    later lines."""
    return pytest.raises(exc, match="^" + re.escape(message) + r"(\n|$)")


F32 = np.float32


def test_wrong_dtype(te):
    x = np.zeros(4, F32)
    with raises(TypeError, "scale: parameter 'x' expects float32 elements, got float64"):
        te.scale(np.zeros(4), x, 1.0)
    with raises(TypeError, "scale: parameter 'y' expects float32 elements, got int32"):
        te.scale(x, np.zeros(4, np.int32), 1.0)
    with raises(TypeError, "shaped: parameter 'idx' expects int32 elements, got int64"):
        te.shaped(np.zeros((2, 3), F32), np.zeros(6, F32), np.zeros((1, 2), np.int64), 1)
    with raises(TypeError, "scale: parameter 'x' expects float32 elements, got bfloat16"):
        te.scale(jnp.zeros(4, jnp.bfloat16), x, 1.0)
    # The same check inside jit and vmap.
    with raises(TypeError, "scale: parameter 'y' expects float32 elements, got float16"):
        jax.jit(lambda a, b: te.scale(a, b, 1.0))(x, np.zeros(4, np.float16))
    with raises(TypeError, "scale: parameter 'x' expects float32 elements, got float64"):
        jax.vmap(lambda a: te.scale(a, x, 1.0))(np.zeros((2, 4)))


def test_wrong_rank(te):
    x = np.zeros(4, F32)
    with raises(ValueError, "scale: parameter 'x' expects rank 1, got rank 2 (shape (2, 3))"):
        te.scale(np.zeros((2, 3), F32), x, 1.0)
    with raises(ValueError, "scale: parameter 'y' expects rank 1, got rank 0 (shape ())"):
        te.scale(x, F32(1.0), 1.0)
    with raises(ValueError, "shaped: parameter 'a' expects rank 2, got rank 1 (shape (6,))"):
        te.shaped(np.zeros(6, F32), np.zeros(6, F32), np.zeros((1, 6), np.int32), 1)
    # Under vmap the rank is the per-example rank.
    with raises(ValueError, "scale: parameter 'x' expects rank 1, got rank 2 (shape (4, 5))"):
        jax.vmap(lambda a: te.scale(a, x, 1.0))(np.zeros((3, 4, 5), F32))


def test_mismatched_symbol(te):
    with raises(ValueError, "scale: parameter 'y' has shape (5,), but dimension 0 must be n = 4"):
        te.scale(np.zeros(4, F32), np.zeros(5, F32), 1.0)
    with raises(ValueError, "scale: parameter 'y' has shape (3,), but dimension 0 must be n = 0"):
        jax.jit(lambda a, b: te.scale(a, b, 1.0))(np.zeros(0, F32), np.zeros(3, F32))
    with raises(ValueError, "shaped: parameter 'idx' has shape (1, 3), but dimension 1 must be r = 2"):
        te.shaped(np.zeros((2, 3), F32), np.zeros(6, F32), np.zeros((1, 3), np.int32), 1)


def test_derived_and_scalar_constraints(te):
    a = np.zeros((2, 3), F32)
    with raises(ValueError, "shaped: parameter 'b' has shape (3,), but dimension 0 must be c * 2 = 6"):
        te.shaped(a, np.zeros(3, F32), np.zeros((1, 2), np.int32), 1)
    with raises(ValueError, "shaped: parameter 'idx' has shape (4, 2), but dimension 0 must be k = 3"):
        te.shaped(a, np.zeros(6, F32), np.zeros((4, 2), np.int32), 3)
    with raises(ValueError, "shaped: parameter 'idx' has shape (4, 2), but dimension 0 must be k = 3"):
        jax.jit(lambda a, b, i: te.shaped(a, b, i, 3))(a, np.zeros(6, F32), np.zeros((4, 2), np.int32))
    # The right shapes pass.
    out = te.shaped(a, np.zeros(6, F32), np.zeros((3, 2), np.int32), 3)
    np.testing.assert_array_equal(np.asarray(out), np.zeros(2, F32))


def test_derived_value_does_not_fit(te):
    # x.size * 1000 > int32 max; eval_shape needs no memory.
    spec = jax.ShapeDtypeStruct((3_000_000,), F32)
    with raises(ValueError, "narrow: derived value 'n' = 3000000000 does not fit int32"):
        jax.eval_shape(te.narrow, spec)
    assert jax.eval_shape(te.narrow, jax.ShapeDtypeStruct((2_000_000,), F32)).shape == (2_000_000,)


def test_scalar_errors(te):
    x = np.ones(3, F32)
    with raises(TypeError, "scale: scalar 'a' expects a number (float32), got str"):
        te.scale(x, x, "2.0")
    with raises(TypeError, "scale: scalar 'a' expects a number (float32), got NoneType"):
        te.scale(x, x, None)
    with raises(TypeError, "scale: scalar 'a' expects a number (float32), got bool"):
        te.scale(x, x, True)
    with raises(TypeError, "scale: scalar 'a' expects a number (float32), got ndarray"):
        te.scale(x, x, np.array([1.0], F32))
    with raises(ValueError, "scalars: scalar 'small' = 128 does not fit int8"):
        te.scalars(x, 128, 1, True, 1.0)
    with raises(ValueError, "scalars: scalar 'small' = -129 does not fit int8"):
        te.scalars(x, np.int64(-129), 1, True, 1.0)
    with raises(ValueError, "scalars: scalar 'count' = -1 does not fit uint16"):
        te.scalars(x, 0, -1, True, 1.0)
    with raises(ValueError, "scalars: scalar 'count' = 65536 does not fit uint16"):
        te.scalars(x, 0, 65536, True, 1.0)
    with raises(TypeError, "scalars: scalar 'small' expects an integer (int8), got bool"):
        te.scalars(x, True, 1, True, 1.0)
    with raises(TypeError, "scalars: scalar 'count' expects an integer (uint16), got "
                           + type(np.bool_(False)).__name__):
        te.scalars(x, 0, np.bool_(False), True, 1.0)
    with raises(TypeError, "scalars: scalar 'count' expects an integer (uint16), got float"):
        te.scalars(x, 0, 2.0, True, 1.0)
    with raises(TypeError, "scalars: scalar 'flag' expects a bool, got int"):
        te.scalars(x, 0, 1, 1, 1.0)
    with raises(TypeError, "scalars: scalar 'w' expects a number (float64), got complex"):
        te.scalars(x, 0, 1, True, 1j)
    # Edge values fit, and are passed with their exact type.
    got = te.scalars(x, -128, 65535, True, 0.5)
    np.testing.assert_array_equal(np.asarray(got), x * F32(0.5) + F32(-128 + 65535))
    got = te.scalars(x, np.int8(127), np.uint16(0), np.bool_(False), np.float64(3))
    np.testing.assert_array_equal(np.asarray(got), x)


def test_concrete_0d_arrays_as_scalars(te):
    # A concrete 0-d JAX or NumPy array is the NumPy scalar of its dtype:
    # the same kinds and ranges are accepted.
    x = np.ones(3, F32)
    for a in (jnp.float32(2.0), np.array(2.0, F32), jnp.asarray(2.0, jnp.bfloat16),
              np.array(2, np.int32), jnp.int8(2)):
        np.testing.assert_array_equal(np.asarray(te.scale(x, x, a)), 3 * x)
    got = te.scalars(x, jnp.int8(-128), np.array(65535, np.uint16), jnp.bool_(True),
                     np.array(0.5))
    np.testing.assert_array_equal(np.asarray(got), x * F32(0.5) + F32(-128 + 65535))
    # Inside jit, a concrete array closed over is still concrete.
    two = jnp.float32(2.0)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda x: te.scale(x, x, two))(x)),
                                  3 * x)
    with raises(TypeError, "scale: scalar 'a' expects a number (float32), got a 0-d "
                           "bool array"):
        te.scale(x, x, np.array(True))
    with raises(TypeError, "scalars: scalar 'small' expects an integer (int8), got a "
                           "0-d float32 array"):
        te.scalars(x, jnp.float32(1.0), 1, True, 1.0)
    with raises(TypeError, "scalars: scalar 'flag' expects a bool, got a 0-d int32 "
                           "array"):
        te.scalars(x, 0, 1, jnp.int32(1), 1.0)
    with raises(TypeError, "scalars: scalar 'w' expects a number (float64), got a 0-d "
                           "complex64 array"):
        te.scalars(x, 0, 1, True, np.array(1j, np.complex64))
    with raises(ValueError, "scalars: scalar 'small' = 300 does not fit int8"):
        te.scalars(x, jnp.int32(300), 1, True, 1.0)
    with raises(ValueError, "scale: scalar 'a' = 1e+300 does not fit float32"):
        te.scale(x, x, np.array(1e300))
    with raises(TypeError, "scale: scalar 'a' expects a number (float32), got ArrayImpl"):
        te.scale(x, x, jnp.ones(1, F32))
    # A traced 0-d array is still a traced value.
    with raises(TypeError, "scale: scalar 'a' is a static attribute and needs a concrete "
                           "Python or NumPy number, got a traced value; mark the argument "
                           "static (jax.jit's static_argnums), or declare the parameter "
                           "KC_TRACED (a traced operand: a new value does not "
                           "recompile) to pass a traced value"):
        jax.jit(lambda a: te.scale(x, x, a))(jnp.float32(2.0))


def test_traced_scalar_inside_jit(te):
    x = np.ones(3, F32)
    hint = ("; mark the argument static (jax.jit's static_argnums), or declare the "
            "parameter KC_TRACED (a traced operand: a new value does not recompile) "
            "to pass a traced value")
    with raises(TypeError, "scale: scalar 'a' is a static attribute and needs a concrete "
                           "Python or NumPy number, got a traced value" + hint):
        jax.jit(te.scale)(x, x, 2.0)
    with raises(TypeError, "sized: scalar 'k' is a static attribute and needs a concrete "
                           "Python or NumPy number, got a traced value" + hint):
        jax.vmap(te.sized, in_axes=(0, 0))(np.ones((2, 3), F32), np.array([2, 3]))
    # Marked static, it works.
    np.testing.assert_array_equal(
        np.asarray(jax.jit(te.scale, static_argnums=2)(x, x, 2.0)), 3 * x)


def test_negative_output_dimension(te):
    with raises(ValueError, "trim: output 'out' would have dimension 0 = n - 5 = -2"):
        te.trim(np.zeros(3, F32))
    with raises(ValueError, "trim: output 'out' would have dimension 0 = n - 5 = -5"):
        jax.jit(te.trim)(np.zeros(0, F32))
    with raises(ValueError, "sized: output 'out' would have dimension 0 = k - 1 = -1"):
        te.sized(np.zeros(4, F32), 0)
    assert te.trim(np.zeros(5, F32)).shape == (0,)
    x = np.arange(8, dtype=F32)
    np.testing.assert_array_equal(np.asarray(te.trim(x)), x[5:])


def test_negative_scalar_sizing_an_output(te):
    with raises(ValueError, "sized: output 'out' would have dimension 0 = k - 1 = -11"):
        jax.jit(lambda v: te.sized(v, -10))(np.zeros(2, F32))
    with raises(ValueError, "split: output 'out' would have dimension 0 = parts = -2"):
        te.split(np.zeros(4, F32), -2)
    np.testing.assert_array_equal(np.asarray(te.split(np.arange(7, dtype=F32), 3)),
                                  np.arange(6, dtype=F32).reshape(3, 2))


def test_shape_division_by_zero_names_the_output(te):
    with raises(ValueError, "split: the shape of output 'out' = (parts, n / parts) "
                            "divides by zero"):
        te.split(np.zeros(4, F32), 0)
    with raises(ValueError, "split: the shape of output 'out' = (parts, n / parts) "
                            "divides by zero"):
        jax.jit(lambda v: te.split(v, 0))(np.zeros(4, F32))


def test_int64_overflow_names_the_expression(te):
    # The handler computes in int64 and rejects these calls; the trace-time
    # checks compute the same, rather than with Python's unbounded ints.
    def spec(n):  # eval_shape needs no memory
        return jax.ShapeDtypeStruct((n,), F32)

    with raises(ValueError, "huge: derived value 'm' = -x.size * k overflows int64"):
        te.huge(np.zeros(4, F32), 2**62, np.zeros(4, F32))
    # -2 * 2**62 is INT64_MIN; 2 * 2**62 is one more than INT64_MAX.
    with raises(ValueError, "huge: dimension 0 of 'y' = n * k overflows int64"):
        te.huge(np.zeros(2, F32), 2**62, np.zeros(2, F32))
    # min(k * k, n) overflows in k * k, whatever min would give.
    with raises(ValueError, "huge: the shape of output 'out' = (min(k * k, n),) "
                            "overflows int64"):
        jax.eval_shape(lambda a, b: te.huge(a, 2**32, b), spec(1), spec(2**32))
    # Within range, the same expressions give the values.
    assert te.huge(np.zeros(4, F32), 3, np.zeros(12, F32)).shape == (4,)
    assert jax.eval_shape(lambda a, b: te.huge(a, 2**31, b), spec(2**31),
                          spec(2**62)).shape == (2**31,)


def test_uint64_scalars_read_as_int64(te):
    # 2**63 travels as its bit pattern, INT64_MIN: a negative dimension, as
    # the handler would see it.
    with raises(ValueError, "counted: output 'out' would have dimension 0 = k = "
                            "-9223372036854775808"):
        te.counted(np.zeros(2, F32), 2**63)
    assert te.counted(np.zeros(2, F32), 3).shape == (3,)


def test_errors_name_the_kernel_of_an_example(build_package):
    saxpy = build_package("te_saxpy", sources=[EXAMPLES / "saxpy.cu"])
    with raises(TypeError, "saxpy: parameter 'x' expects float32 elements, got float64"):
        saxpy.saxpy(np.zeros(3), np.zeros(3, F32), 1.0)
    with raises(ValueError, "saxpy: parameter 'y' has shape (2,), but dimension 0 must be n = 3"):
        saxpy.saxpy(np.zeros(3, F32), np.zeros(2, F32), 1.0)


def test_int64_without_x64_asks_for_it(te):
    pkg_dir = pathlib.Path(te.__file__).resolve().parents[1]
    code = f"""
import sys
sys.path.insert(0, {str(pkg_dir)!r})
import jax, numpy as np
assert not jax.config.jax_enable_x64
import te_errors
try:
    te_errors.wide(np.arange(3, dtype=np.int64))
except TypeError as e:
    print("MESSAGE:" + str(e))
try:
    te_errors.wide([1, 2, 3])
except TypeError as e:
    print("MESSAGE:" + str(e))
# 32-bit kernels run without x64, their int64 derived values included.
out = te_errors.scale(np.ones(3, np.float32), np.ones(3, np.float32), 2.0)
print("SCALE:" + repr(np.asarray(out).tolist()))
"""
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    msg = ("wide: parameter 'x' expects int64 elements, which need 64-bit types: "
           "enable jax_enable_x64")
    lines = r.stdout.splitlines()
    assert lines.count("MESSAGE:" + msg) == 2, r.stdout
    assert "SCALE:[3.0, 3.0, 3.0]" in lines


def test_float_scalar_out_of_range(te):
    x = np.zeros(4, F32)
    with raises(ValueError, "scale: scalar 'a' = 1e+300 does not fit float32"):
        te.scale(x, x, 1e300)
    with raises(ValueError, f"scale: scalar 'a' = {10 ** 400} does not fit float32"):
        te.scale(x, x, 10 ** 400)
    # Non-finite floats are values like any other.
    assert np.isinf(np.asarray(te.scale(np.ones(4, F32), x, float("inf")))).all()
