"""Unit tests of the generated packages' Python runtime (_kernelc.py), on its
own: no kernelc, no built package. Plain jax functions stand in for the
kernels' ops; the packages' use of it is tested end to end in tests/python.
"""

import ctypes
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import _kernelc as kc

# The runtime must use no API that jax deprecates.
pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request):
    with jax.enable_x64(request.param):
        yield request.param


@pytest.fixture
def enable_x64():
    with jax.enable_x64(True):
        yield


# --- import order and the jaxlib check ---------------------------------------


def test_importing_the_module_imports_neither_jax_nor_numpy():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import _kernelc; "
            "print(sorted(m for m in ('jax', 'jaxlib', 'numpy') "
            "if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code, str(HERE)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "[]\n"


PACKAGE = kc.Package("pkg", ffi_api="0.2", jaxlib_floor="0.8.1")
TOO_OLD = ("pkg was built against XLA FFI API 0.2 (the headers of jaxlib "
           "0.8.1) and works with jax and jaxlib 0.8.1 or newer; this "
           "environment has jaxlib {}. Upgrade with: pip install "
           "'jax>=0.8.1' 'jaxlib>=0.8.1'")


@pytest.mark.parametrize("version, ok", [
    ("0.7.2", False), ("0.8.0", False), ("0.8.0rc1", False), ("0.8", False),
    ("0.8.1", True), ("0.8.1.dev20250101", True), ("0.11.2", True),
    ("1", True), ("1.0", True), ("10.0.0", True)])
def test_check_jaxlib_compares_with_the_floor(monkeypatch, version, ok):
    import jaxlib.version
    monkeypatch.setattr(jaxlib.version, "__version__", version)
    if ok:
        PACKAGE.check_jaxlib()
    else:
        with pytest.raises(ImportError) as e:
            PACKAGE.check_jaxlib()
        assert str(e.value) == TOO_OLD.format(version)


def test_check_jaxlib_without_jaxlib_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "jaxlib", None)
    with pytest.raises(ImportError) as e:
        PACKAGE.check_jaxlib()
    assert str(e.value) == (
        "pkg needs jax and jaxlib 0.8.1 or newer (built against XLA FFI API "
        "0.2), and jaxlib is not installed: pip install 'jax>=0.8.1' "
        "'jaxlib>=0.8.1'")
    assert isinstance(e.value.__cause__, ImportError)


def test_check_jaxlib_warns_on_a_version_it_cannot_read(monkeypatch):
    import jaxlib.version
    monkeypatch.setattr(jaxlib.version, "__version__", "nightly")
    with pytest.warns(RuntimeWarning) as caught:
        PACKAGE.check_jaxlib()
    assert [str(w.message) for w in caught] == [
        "pkg cannot read the version of jaxlib ('nightly') to check it; it "
        "needs jax and jaxlib 0.8.1 or newer (built against XLA FFI API 0.2)"]


# --- registration --------------------------------------------------------------


class _Library:
    """A stand-in for the package's ctypes.CDLL: any C function will do as
    a handler, since nothing calls it."""

    def __init__(self, *symbols):
        libc = ctypes.CDLL(None)
        for s in symbols:
            setattr(self, s, libc.abs)


def test_register_passes_the_handler_capsules_to_jax(monkeypatch):
    calls = []
    monkeypatch.setattr(jax.ffi, "register_ffi_target",
                        lambda *a, **kw: calls.append((a, kw)))
    lib = _Library("h_cpu", "h_init", "h_cuda")
    PACKAGE.register(lib, "pkg.k.0123", "h_cpu", "cpu")
    PACKAGE.register_cuda(lib, "pkg.k.0123", "h_init", "h_cuda")
    assert [(a[0], kw) for a, kw in calls] == [
        ("pkg.k.0123", {"platform": "cpu"}),
        ("pkg.k.0123", {"platform": "CUDA"})]
    capsule = type(jax.ffi.pycapsule(lib.h_cpu))
    assert isinstance(calls[0][0][1], capsule)
    stages = calls[1][0][1]
    assert sorted(stages) == ["execute", "initialize"]
    assert all(isinstance(c, capsule) for c in stages.values())


def test_a_registration_failure_names_package_target_and_api(monkeypatch):
    def reject(*_, **__):
        raise ValueError("unsupported XLA FFI API version 0.2")
    monkeypatch.setattr(jax.ffi, "register_ffi_target", reject)
    import jaxlib.version
    monkeypatch.setattr(jaxlib.version, "__version__", "9.1.0")
    with pytest.raises(ImportError) as e:
        PACKAGE.register_cuda(_Library("i", "x"), "pkg.k.0123", "i", "x")
    assert str(e.value) == (
        "pkg: jax could not register the XLA FFI handler of target "
        "'pkg.k.0123' (CUDA): ValueError: unsupported XLA FFI API version 0.2. "
        "The package's library was built against XLA FFI API 0.2 (the headers "
        "of jaxlib 0.8.1) and needs a jaxlib that accepts handlers of that "
        "API; this environment has jaxlib 9.1.0. Rebuild the package with "
        "kernelc for this jaxlib, or install a jaxlib that supports XLA FFI "
        "API 0.2")
    assert isinstance(e.value.__cause__, ValueError)


def test_a_missing_symbol_is_not_blamed_on_jaxlib(monkeypatch):
    monkeypatch.setattr(jax.ffi, "register_ffi_target",
                        lambda *a, **kw: pytest.fail("registered"))
    with pytest.raises(AttributeError):
        PACKAGE.register(ctypes.CDLL(None), "pkg.k.0123",
                         "kc_no_such_handler_symbol", "cpu")


# --- tensors and scalars ---------------------------------------------------------


def test_tensor_converts_python_and_numpy_values(x64):
    a = kc.tensor("k", "x", [1, 2, 3], "float32", 1)
    assert isinstance(a, jax.Array) and a.dtype == np.float32
    np.testing.assert_array_equal(a, [1, 2, 3])
    b = kc.tensor("k", "x", np.zeros((2, 3), np.int16), "int16", 2)
    assert b.dtype == np.int16 and b.shape == (2, 3)
    c = kc.tensor("k", "x", jnp.ones(4, jnp.bfloat16), "bfloat16", 1)
    assert c.dtype == jnp.bfloat16


def test_tensor_passes_arrays_and_tracers_as_they_are():
    x = jnp.arange(3.0, dtype=jnp.float32)
    assert kc.tensor("k", "x", x, "float32", 1) is x
    seen = []

    @jax.jit
    def f(t):
        seen.append(kc.tensor("k", "x", t, "float32", 1) is t)
        return t
    f(x)
    assert seen == [True]


def test_tensor_dtype_and_rank_errors(x64):
    with pytest.raises(TypeError) as e:
        kc.tensor("saxpy", "x", np.zeros(3, np.float64), "float32", 1)
    assert str(e.value) == ("saxpy: parameter 'x' expects float32 elements, "
                            "got float64")
    with pytest.raises(ValueError) as e:
        kc.tensor("saxpy", "x", np.zeros((2, 1), np.float32), "float32", 1)
    assert str(e.value) == ("saxpy: parameter 'x' expects rank 1, got rank 2 "
                            "(shape (2, 1))")
    with pytest.raises(ValueError) as e:
        kc.tensor("saxpy", "x", np.zeros(5, np.float32), "float32", 0)
    assert str(e.value) == ("saxpy: parameter 'x' expects rank 0, got rank 1 "
                            "(shape (5,))")


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype int64")
def test_tensor_of_a_64_bit_type_needs_x64():
    with jax.enable_x64(False), pytest.raises(TypeError) as e:
        kc.tensor("k", "n", [1, 2], "int64", 1)
    assert str(e.value) == ("k: parameter 'n' expects int64 elements, which "
                            "need 64-bit types: enable jax_enable_x64")
    with jax.enable_x64(True):
        assert kc.tensor("k", "n", [1, 2], "int64", 1).dtype == np.int64


@pytest.mark.parametrize("value, dtype, want", [
    (True, "bool", True),
    (np.bool_(False), "bool", False),
    (7, "int8", np.int8(7)),
    (np.int64(-128), "int8", np.int8(-128)),
    (2**64 - 1, "uint64", np.uint64(2**64 - 1)),
    (3, "float32", np.float32(3)),
    (0.1, "float32", np.float32(0.1)),
    (float("-inf"), "float32", np.float32("-inf")),
    (np.float16(1.5), "float64", np.float64(1.5)),
    (np.array(2.5, np.float32), "float64", np.float64(2.5)),
    (jnp.array(4, jnp.int32), "int64", np.int64(4)),
    (jnp.array(0.5, jnp.bfloat16), "float32", np.float32(0.5)),
])
def test_scalar_gives_the_parameter_s_exact_type(value, dtype, want):
    got = kc.scalar("k", "a", value, dtype)
    assert type(got) is type(want)
    assert got == want


@pytest.mark.parametrize("value, dtype, error, message", [
    (1, "bool", TypeError, "k: scalar 'a' expects a bool, got int"),
    (np.array(1.0), "bool", TypeError,
     "k: scalar 'a' expects a bool, got a 0-d float64 array"),
    (True, "int32", TypeError,
     "k: scalar 'a' expects an integer (int32), got bool"),
    (1.0, "int32", TypeError,
     "k: scalar 'a' expects an integer (int32), got float"),
    (128, "int8", ValueError, "k: scalar 'a' = 128 does not fit int8"),
    (-1, "uint32", ValueError, "k: scalar 'a' = -1 does not fit uint32"),
    (1j, "float32", TypeError,
     "k: scalar 'a' expects a number (float32), got complex"),
    (np.bool_(True), "float32", TypeError,
     "k: scalar 'a' expects a number (float32), got bool"),
    ("1", "float64", TypeError,
     "k: scalar 'a' expects a number (float64), got str"),
    (1e39, "float32", ValueError,
     "k: scalar 'a' = 1e+39 does not fit float32"),
    (10**400, "float64", ValueError,
     "k: scalar 'a' = " + str(10**400) + " does not fit float64"),
])
def test_scalar_errors(value, dtype, error, message):
    with pytest.raises(error) as e:
        kc.scalar("k", "a", value, dtype)
    assert str(e.value) == message


NUMBERS = [True, False, 0, 1, -1, 7, 127, 128, -129, 255, 2**31, 2**63 - 1,
           2**63, 2**64 - 1, 2**64, -(2**63), 10**400, 0.0, -0.5, 0.1, 1e38,
           3.5e38, 1e39, 1e300, float("inf"), float("-inf"), float("nan"),
           np.float32(1.5), np.float32("inf"), np.float16(2), np.float64(1e300),
           np.int8(-5), np.int64(2**40), np.uint64(2**64 - 1), np.bool_(True),
           1j, "1", None, np.array(1.0)]
DTYPES = ["bool", "int8", "uint8", "int32", "uint32", "int64", "uint64",
          "float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_number_is_scalar_s_verdict_or_none(dtype, monkeypatch, enable_x64):
    # The quick conversion of eager calls returns what `scalar` returns in
    # full (the same type and value), or None where `scalar` must decide:
    # never a value that `scalar` would reject.
    quick = {repr(v): kc.number(v, dtype) for v in NUMBERS}
    monkeypatch.setattr(kc, "number", lambda value, dtype: None)
    accepted = 0
    for value in NUMBERS:
        got = quick[repr(value)]
        if got is None:
            continue
        accepted += 1
        want = kc.scalar("k", "a", value, dtype)
        assert type(got) is type(want), (value, dtype)
        assert got == want or (np.isnan(want) and np.isnan(got)), (value, dtype)
    # NumPy knows no range of bfloat16: `scalar` decides each of its values.
    assert accepted > 0 or dtype == "bfloat16"


def test_a_traced_scalar_is_an_error_that_says_what_to_do():
    with pytest.raises(TypeError) as e:
        jax.jit(lambda a: kc.scalar("k", "a", a, "float32"))(1.0)
    assert str(e.value) == (
        "k: scalar 'a' is a static attribute and needs a concrete Python or "
        "NumPy number, got a traced value; mark the argument static "
        "(jax.jit's static_argnums), or declare the parameter KC_TRACED (a "
        "traced operand: a new value does not recompile) to pass a traced "
        "value")


def test_attr_passes_uint64_as_its_int64_bit_pattern():
    got = kc.attr(np.uint64(2**64 - 1))
    assert type(got) is np.int64 and got == -1
    assert type(kc.attr(np.uint32(5))) is np.uint32
    assert kc.attr(np.float32(0.5)) == np.float32(0.5)


# --- shapes and derived values -------------------------------------------------


def test_check_dim():
    x = np.zeros((4, 3), np.float32)
    kc.check_dim("k", "x", x, 1, lambda: 3, "m")
    with pytest.raises(ValueError) as e:
        kc.check_dim("k", "x", x, 0, lambda: 2 * 3, "n * 2")
    assert str(e.value) == ("k: parameter 'x' has shape (4, 3), but dimension "
                            "0 must be n * 2 = 6")
    with pytest.raises(ValueError) as e:
        kc.check_dim("k", "x", x, 0, lambda: kc.floor_div(4, 0), "n / m")
    assert str(e.value) == "k: dimension 0 of 'x' = n / m divides by zero"
    assert e.value.__cause__ is None and e.value.__suppress_context__


def test_derived_checks_its_integer_type():
    assert kc.derived("k", "n", lambda: 2**31 - 1, "int32", "m") == 2**31 - 1
    with pytest.raises(ValueError) as e:
        kc.derived("k", "n", lambda: 2**31, "int32", "m")
    assert str(e.value) == "k: derived value 'n' = 2147483648 does not fit int32"
    with pytest.raises(ValueError) as e:
        kc.derived("k", "n", lambda: kc.floor_mod(1, 0), "int64", "m % 0")
    assert str(e.value) == "k: derived value 'n' = m % 0 divides by zero"
    with pytest.raises(ValueError) as e:
        kc.derived("k", "n", lambda: kc.mul(2**62, 2), "int64", "m * 2")
    assert str(e.value) == "k: derived value 'n' = m * 2 overflows int64"


def test_out_shape():
    s = kc.out_shape("k", "out", "bfloat16", lambda: (2, np.int64(3)),
                     ("n", "m"))
    assert s == jax.ShapeDtypeStruct((2, 3), jnp.bfloat16)
    assert all(type(d) is int for d in s.shape)
    with pytest.raises(ValueError) as e:
        kc.out_shape("k", "out", "float32", lambda: (4, 2 - 5), ("n", "m - 5"))
    assert str(e.value) == "k: output 'out' would have dimension 1 = m - 5 = -3"
    with pytest.raises(ValueError) as e:
        kc.out_shape("k", "out", "float32", lambda: (kc.floor_div(4, 0),),
                     ("n / 0",))
    assert str(e.value) == ("k: the shape of output 'out' = (n / 0,) divides "
                            "by zero")


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@pytest.mark.parametrize("op, a, b, want", [
    ("add", INT64_MAX, 0, INT64_MAX),
    ("add", INT64_MAX, 1, "overflows int64"),
    ("sub", INT64_MIN, 1, "overflows int64"),
    ("mul", 2**32, 2**31, "overflows int64"),
    ("mul", -(2**32), 2**31, INT64_MIN),
    ("floor_div", -7, 2, -4),
    ("floor_div", INT64_MIN, -1, "overflows int64"),
    ("floor_div", 1, 0, "divides by zero"),
    ("floor_mod", -7, 2, 1),
    ("floor_mod", 7, -2, -1),
    ("floor_mod", INT64_MIN, -1, 0),
    ("floor_mod", 1, 0, "divides by zero"),
    ("ceil_div", 7, 2, 4),
    ("ceil_div", -7, 2, -3),
    ("ceil_div", INT64_MIN, -1, "overflows int64"),
    ("ceil_div", 1, 0, "divides by zero"),
    ("minimum", -3, 2, -3),
    ("maximum", -3, 2, 2),
])
def test_checked_int64_arithmetic(op, a, b, want):
    """The operations of kernelc/arith.h: exact, or failing as the handler
    does."""
    if isinstance(want, str):
        with pytest.raises(kc.ExpressionError, match=want):
            getattr(kc, op)(a, b)
    else:
        assert getattr(kc, op)(a, b) == want


def test_negation_and_uint64_scalars():
    assert kc.neg(INT64_MAX) == -INT64_MAX
    with pytest.raises(kc.ExpressionError, match="overflows int64"):
        kc.neg(INT64_MIN)
    # A uint64 scalar above INT64_MAX travels as its bit pattern.
    assert kc.int64(np.uint64(2**64 - 1)) == -1
    assert kc.int64(np.int32(-5)) == -5


def test_expressions_on_symbolic_dimensions():
    # jax.export's symbolic shapes: results stay symbolic, and what cannot
    # be decided while tracing is left to the handler's run-time checks.
    n, m = jax.export.symbolic_shape("n, m")
    assert str(kc.add(n, 1)) == "n + 1"
    assert str(kc.mul(kc.sub(n, 1), 2)) == "2*n - 2"
    assert str(kc.ceil_div(n, 4)) == str(-((-n) // 4))
    assert str(kc.minimum(n, m)) == str(jax.core.min_dim(n, m))
    assert str(kc.maximum(n, 3)) == str(jax.core.max_dim(n, 3))
    assert kc.minimum(3, 5) == 3 and kc.maximum(3, 5) == 5
    # Symbolic values that overflow int64 for some sizes: not known yet.
    assert str(kc.mul(n, INT64_MAX)) == f"{INT64_MAX}*n"
    with pytest.raises(kc.ExpressionError, match="divides by zero"):
        kc.floor_div(n, 0)
    arr = jax.ShapeDtypeStruct((n, m), jnp.float32)
    kc.check_dim("k", "x", arr, 1, lambda: n, "n")  # m = n: the handler decides
    with pytest.raises(ValueError, match=r"dimension 0 must be n \+ 1 = n \+ 1"):
        kc.check_dim("k", "x", arr, 0, lambda: kc.add(n, 1), "n + 1")
    assert kc.derived("k", "d", lambda: kc.mul(n, m), "int32", "n * m") is not None
    out = kc.out_shape("k", "y", "float32", lambda: (kc.sub(n, 2), 3), ("n - 2", "3"))
    assert str(out.shape) == "(n - 2, 3)"


def test_shifts_bits_and_casts_on_symbolic_dimensions():
    # A shift of a symbolic value by an int count is the product or floor
    # division it is; bitwise operations and casts (but to int64) have no
    # symbolic form: an error that says so, rather than jax's TypeError.
    n, = jax.export.symbolic_shape("n")
    assert str(kc.shl(n, 2)) == "4*n"
    assert str(kc.shr(n, 1)) == str(n // 2)
    assert kc.to_int64(n) is n
    with pytest.raises(kc.ExpressionError, match="shifts by a count outside"):
        kc.shl(n, 64)
    for op in (lambda: kc.bit_and(n, 3), lambda: kc.bit_or(1, n),
               lambda: kc.bit_xor(n, n), lambda: kc.bit_not(n),
               lambda: kc.to_uint32(n), lambda: kc.to_uint64(n),
               lambda: kc.shl(1, n)):
        with pytest.raises(kc.ExpressionError,
                           match="^cannot be computed on symbolic dimensions$"):
            op()


def test_traced_and_jit():
    assert not kc.traced(1.0, np.ones(2), jnp.ones(2))
    seen = []

    def f(x, a):
        seen.append((kc.traced(x), kc.traced(a)))
        return x * a
    g = kc.jit(f, (1,))
    np.testing.assert_array_equal(g(jnp.ones(2), 3.0), [3.0, 3.0])
    assert seen == [(True, False)]


# --- autodiff ----------------------------------------------------------------


def _scale(x, a):
    return x * a


def _scale_vjp(backward=lambda d_out, a: d_out * a):
    return kc.differentiable(
        "scale", _scale, args=("x", "a"), static=(1,), results=("out",),
        vjp=kc.Derivative("scale_bwd", backward,
                          (("cotangent", "out"), ("static", "a")), ("x",)))


def test_differentiable_runs_the_backward_function():
    f = _scale_vjp()
    x = jnp.arange(4.0, dtype=jnp.float32)
    np.testing.assert_array_equal(f(x, 3.0), x * 3)
    grad = jax.grad(lambda x: f(x, 3.0).sum())
    np.testing.assert_array_equal(grad(x), np.full(4, 3.0))
    np.testing.assert_array_equal(jax.jit(grad)(x), np.full(4, 3.0))
    batched = jax.vmap(jax.grad(lambda x: (f(x, 2.0) ** 2).sum()))(
        jnp.ones((2, 4), jnp.float32))
    np.testing.assert_array_equal(batched, np.full((2, 4), 8.0))


def test_a_linear_backward_function_gives_every_order():
    # The backward function takes no forward value: the op is affine, its
    # forward mode is op(t) - op(0), and the backward function
    # differentiates as itself.
    f = _scale_vjp()
    x = jnp.arange(1.0, 4.0, dtype=jnp.float32)
    _, dot = jax.jvp(lambda x: f(x, 3.0), (x,), (jnp.ones(3, jnp.float32),))
    np.testing.assert_array_equal(dot, np.full(3, 3.0))

    def loss(x):
        return jnp.sum(jnp.sin(f(x, 3.0)))

    want = np.diag(-9.0 * np.sin(3.0 * np.asarray(x)))
    np.testing.assert_allclose(jax.hessian(loss)(x), want, rtol=1e-5)
    np.testing.assert_allclose(jax.jacrev(jax.jacrev(loss))(x), want, rtol=1e-5)


def test_differentiable_passes_residuals_and_leaves_integer_inputs_without_gradient():
    # out = x * y with an integer input k that gets no gradient.
    def forward(x, k, y):
        return x * y + k

    def backward(x, y, d_out):
        return d_out * y, d_out * x

    f = kc.differentiable(
        "mul", forward, args=("x", "k", "y"), static=(), results=("out",),
        vjp=kc.Derivative("mul_bwd", backward,
                          (("value", "x"), ("value", "y"), ("cotangent", "out")),
                          ("x", "y")))
    x, y = jnp.float32(2.0), jnp.float32(5.0)
    _, vjp = jax.vjp(lambda x, y: f(x, jnp.int32(1), y), x, y)
    assert vjp(jnp.float32(1.0)) == (5.0, 2.0)
    # Forward mode: the backward function takes values and has no
    # derivatives of its own.
    with pytest.raises(TypeError) as e:
        jax.jvp(lambda x: f(x, jnp.int32(1), y), (x,), (x,))
    assert str(e.value).startswith(
        "mul: cannot differentiate in forward mode (jax.jvp, jax.jacfwd, "
        "jax.hessian): the kernel declares a backward kernel ('mul_bwd', "
        "KC_VJP), which gives reverse mode; since 'mul_bwd' takes forward "
        "values, the Jacobian-vector product needs a tangent kernel")


def test_differentiable_checks_the_gradient_shapes_at_trace_time():
    f = _scale_vjp(backward=lambda d_out, a: d_out[:-1] * a)
    with pytest.raises(ValueError) as e:
        jax.grad(lambda x: f(x, 3.0).sum())(jnp.ones(4, jnp.float32))
    assert str(e.value) == (
        "scale: backward kernel 'scale_bwd' returns 'd_x' with shape (3,) and "
        "dtype float32, but it is the gradient of input 'x', which has shape "
        "(4,) and dtype float32")


def test_without_vjp_passes_calls_and_names_the_kernel_when_differentiated():
    f = kc.without_vjp("scale", _scale, (1,))
    x = jnp.ones(3, jnp.float32)
    np.testing.assert_array_equal(f(x, 2.0), x * 2)
    np.testing.assert_array_equal(jax.jit(f, static_argnums=1)(x, 2.0), x * 2)
    with pytest.raises(TypeError) as e:
        jax.grad(lambda x: f(x, 2.0).sum())(x)
    assert str(e.value) == ("scale: cannot differentiate: the kernel declares "
                            "no backward kernel; name one with KC_VJP(\"...\") "
                            "(or a tangent kernel with KC_JVP(\"...\") for "
                            "forward mode)")
    g = kc.without_vjp("acc", _scale, (1,), inplace=("total",))
    with pytest.raises(TypeError) as e:
        jax.jvp(lambda x: g(x, 2.0), (x,), (x,))
    assert str(e.value).startswith(
        "acc: cannot differentiate: the kernel updates 'total' in place "
        "(KC_INMUT), and an in-place update has no derivative")


def _scale_jvp(tangent=lambda x, d_x, a: d_x * a):
    return kc.differentiable(
        "scale", _scale, args=("x", "a"), static=(1,), results=("out",),
        jvp=kc.Derivative("scale_jvp", tangent,
                          (("value", "x"), ("tangent", "x"), ("static", "a")),
                          ("out",)))


def test_differentiable_with_a_tangent_function_gives_forward_mode_only():
    f = _scale_jvp()
    x = jnp.arange(3.0, dtype=jnp.float32)
    out, dot = jax.jvp(lambda x: f(x, 2.0), (x,), (jnp.ones(3, jnp.float32),))
    np.testing.assert_array_equal(out, x * 2)
    np.testing.assert_array_equal(dot, np.full(3, 2.0))
    np.testing.assert_array_equal(
        jax.jit(jax.jacfwd(lambda x: f(x, 2.0)))(x), 2 * np.eye(3))
    with pytest.raises(TypeError) as e:
        jax.grad(lambda x: f(x, 2.0).sum())(x)
    assert str(e.value) == (
        "scale: cannot differentiate in reverse mode (jax.grad, jax.vjp, "
        "jax.jacrev): the kernel declares a tangent kernel ('scale_jvp', "
        "KC_JVP), which gives forward mode (jax.jvp, jax.jacfwd), and a kernel "
        "cannot be transposed; reverse mode needs a backward kernel: name one "
        "with KC_VJP(\"...\") instead")


def test_differentiable_checks_the_tangent_shapes(enable_x64):
    f = _scale_jvp(tangent=lambda x, d_x, a: (d_x * a).astype(jnp.float64))
    x = jnp.ones(2, jnp.float32)
    with pytest.raises(ValueError) as e:
        jax.jvp(lambda x: f(x, 2.0), (x,), (x,))
    assert str(e.value) == (
        "scale: tangent kernel 'scale_jvp' returns 'd_out' with shape (2,) and "
        "dtype float64, but it is the tangent of output 'out', which has "
        "shape (2,) and dtype float32")


def test_forward_and_reverse_from_both_functions():
    # out = x ** 3: forward mode from the tangent function, reverse mode
    # from the backward function, which gives its own forward mode.
    cube = kc.differentiable(
        "cube", lambda x: x ** 3, args=("x",), static=(), results=("out",),
        vjp=kc.Derivative("cube_bwd", lambda x, d: 3 * x * x * d,
                          (("value", "x"), ("cotangent", "out")), ("x",)),
        jvp=kc.Derivative("cube_jvp", lambda x, d: 3 * x * x * d,
                          (("value", "x"), ("tangent", "x")), ("out",)))
    x = jnp.array([0.5, -1.0, 2.0], jnp.float32)
    np.testing.assert_allclose(jax.jacfwd(cube)(x), np.diag(3 * x * x), rtol=1e-6)
    np.testing.assert_allclose(jax.jacrev(cube)(x), np.diag(3 * x * x), rtol=1e-6)
    # The plain functions standing in for kernels are differentiable
    # already: the hessian composes through them.
    np.testing.assert_allclose(jax.hessian(lambda x: cube(x).sum())(x),
                               np.diag(6 * x), rtol=1e-6)


# --- sharding ------------------------------------------------------------------


def _sharded_scale():
    # out[n] = x[n] * a: "p_n" is the parallel factor, "k" must be replicated.
    return kc.sharded(lambda x, w, a: x * a + w.sum(), (2,),
                      operands=(("p_n",), ("k",)), results=(("p_n",),))


def test_sharded_runs_the_op_eagerly_under_jit_and_vmap():
    f = _sharded_scale()
    x = jnp.arange(4.0, dtype=jnp.float32)
    w = jnp.ones(3, jnp.float32)
    want = x * 2 + 3
    np.testing.assert_array_equal(f(x, w, 2.0), want)
    np.testing.assert_array_equal(
        jax.jit(f, static_argnums=2)(x, w, 2.0), want)
    xs = jnp.stack([x, x + 1])
    np.testing.assert_array_equal(
        jax.vmap(lambda x: f(x, w, 2.0))(xs), xs * 2 + 3)
    # An unbatched operand under vmap: seen once, not broadcast.
    ws = jnp.stack([w, 2 * w])
    np.testing.assert_array_equal(
        jax.jit(jax.vmap(lambda x, w: f(x, w, 2.0)))(xs, ws),
        xs * 2 + np.array([[3.0], [6.0]], np.float32))


# --- lazily built wrappers -------------------------------------------------------


def test_lazy_builds_once_at_first_use_even_from_two_threads():
    import threading
    import time

    builds = []

    def build():
        builds.append(1)
        time.sleep(0.05)  # both threads arrive while it builds
        return lambda a, b: a + b

    lazy = kc.Lazy(build)
    assert lazy.function is None and builds == []
    start = threading.Barrier(2)
    got = [None, None]

    def use(i):
        start.wait()
        got[i] = lazy(i, 10)

    threads = [threading.Thread(target=use, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [10, 11] and builds == [1]
    assert lazy.get() is lazy.function
    assert builds == [1]


def test_exact_keys_static_floats_by_type_and_bits():
    zero, negative = np.float32(0.0), np.float32(-0.0)
    assert kc.exact(zero) != kc.exact(negative)
    assert kc.exact(np.float32("nan")) == kc.exact(np.float32("nan"))
    assert hash(kc.exact(np.float32("nan"))) == hash(
        kc.exact(np.float32("nan")))
    assert kc.exact(zero) != kc.exact(np.float64(0.0))
    assert type(kc.exact(np.float32(2.5))) is np.float32  # == keys it
    assert kc.scalar("k", "a", kc.exact(negative), "float32") is negative
