"""Every element type kernelc reads from C++, through one package: an
elementwise __global__ kernel per dtype (with a scalar of the same type where
XLA attributes allow one) and a host kernel with tensor views of mixed
dtypes. Each is checked eagerly, under jax.jit and under jax.vmap against
NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

BF16 = np.dtype(jnp.bfloat16)

# name, C++ type, NumPy dtype, has a scalar
INT_TYPES = [
    ("int8", "int8_t", np.int8),
    ("int16", "int16_t", np.int16),
    ("int32", "int32_t", np.int32),
    ("int64", "int64_t", np.int64),
    ("uint8", "uint8_t", np.uint8),
    ("uint16", "uint16_t", np.uint16),
    ("uint32", "uint32_t", np.uint32),
    ("uint64", "uint64_t", np.uint64),
]
FLOAT_TYPES = [
    ("float32", "float", np.float32),
    ("float64", "double", np.float64),
]
HALF_TYPES = [
    ("float16", "__half", np.float16),
    ("bfloat16", "__nv_bfloat16", BF16),
]

_ELEMENTWISE = """
KC_GRID("n")
KC_BLOCK(64)
__global__ void add_{name}(KC_IN("n") const {ctype}* x,
                          KC_IN("n") const {ctype}* y,
                          {ctype} s,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") {ctype}* out) {{
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<{ctype}>(x[i] + y[i] + s);
}}
"""

_HALF = """
KC_GRID("n")
__global__ void add_{name}(KC_IN("n") const {ctype}* x,
                          KC_IN("n") const {ctype}* y,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") {ctype}* out) {{
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = {ctype}(float(x[i]) + float(y[i]));
}}
"""

_REST = r"""
// KC_INIT in every kind of element type; the kernel writes nothing.
KC_KERNEL void fills(KC_SHAPE("n") kc::In<float, 1> x,
                     KC_SHAPE("n") KC_INIT(0.1) kc::Out<__half, 1> h,
                     KC_SHAPE("n") KC_INIT(-3.3) kc::Out<__nv_bfloat16, 1> b,
                     KC_SHAPE("n") KC_INIT(true) kc::Out<bool, 1> t,
                     KC_SHAPE("n") KC_INIT(18446744073709551615ull) kc::Out<uint64_t, 1> u64,
                     KC_SHAPE("n") KC_INIT(INT64_MIN) kc::Out<int64_t, 1> i64,
                     KC_SHAPE("n") KC_INIT(-128) kc::Out<int8_t, 1> i8,
                     KC_SHAPE("n") KC_INIT(65535) kc::Out<uint16_t, 1> u16,
                     KC_SHAPE("n") KC_INIT(-INFINITY) kc::Out<float, 1> ninf,
                     KC_SHAPE("n") KC_INIT(NAN) kc::Out<double, 1> qnan,
                     KC_SHAPE("n") KC_INIT(1e-40) kc::Out<float, 1> subnormal) {}

KC_GRID("n")
__global__ void ne_bool(KC_IN("n") const bool* x,
                        KC_IN("n") const bool* y,
                        bool s,
                        KC_DERIVED("x.size") int64_t n,
                        KC_OUT("x") bool* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = (x[i] != y[i]) != s;
}

// Half types read and written as well as computed: scale by 2 (exact).
KC_GRID("n")
__global__ void twice_half(KC_IN("n") const __half* x,
                           KC_DERIVED("x.size") int64_t n,
                           KC_OUT("x") float* wide,
                           KC_OUT("x") __nv_bfloat16* narrow) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  wide[i] = 2.0f * __half2float(x[i]);
  narrow[i] = __float2bfloat16(2.0f * __half2float(x[i]));
}

// A host kernel with views of several dtypes; one row per input row.
KC_KERNEL void mixed(KC_SHAPE("r, c") kc::In<int16_t, 2> a,
                     KC_SHAPE("r, c") kc::In<uint32_t, 2> b,
                     KC_SHAPE("r, c") kc::In<__half, 2> h,
                     KC_SHAPE("c") kc::In<__nv_bfloat16, 1> w,
                     KC_SHAPE("r, c") kc::Out<double, 2> total,
                     KC_SHAPE("r") kc::Out<bool, 1> any_negative,
                     KC_SHAPE("r") kc::Out<uint64_t, 1> row_sum) {
  for (int64_t i = 0; i < a.shape[0]; ++i) {
    bool neg = false;
    uint64_t sum = 0;
    for (int64_t j = 0; j < a.shape[1]; ++j) {
      total(i, j) = static_cast<double>(a(i, j)) + static_cast<double>(b(i, j)) +
                    static_cast<double>(float(h(i, j))) * static_cast<double>(float(w(j)));
      neg = neg || a(i, j) < 0;
      sum += b(i, j);
    }
    any_negative(i) = neg;
    row_sum(i) = sum;
  }
}
"""


def _source():
    parts = ["#include <kernelc.h>", "#include <cuda_fp16.h>", "#include <cuda_bf16.h>",
             "#include <math.h>"]
    for name, ctype, _ in INT_TYPES + FLOAT_TYPES:
        parts.append(_ELEMENTWISE.format(name=name, ctype=ctype))
    for name, ctype, _ in HALF_TYPES:
        parts.append(_HALF.format(name=name, ctype=ctype))
    parts.append(_REST)
    return "\n".join(parts)


@pytest.fixture(scope="module")
def dt(build_package):
    return build_package("dt_ops", source_text=_source())


N = 777  # not a multiple of the block


def _int_operands(dtype, rng):
    """x, y, s spanning the type's range without overflowing x + y + s."""
    info = np.iinfo(dtype)
    if info.min < 0:
        q = (int(info.max) + 1) // 4   # x, y in [-q, q), s = 1 - q
        x = rng.integers(-q, q, N, dtype=dtype, endpoint=False)
        y = rng.integers(-q, q, N, dtype=dtype, endpoint=False)
        x[:3] = [-q, q - 1, 0]
        y[:3] = [-q, q - 1, 0]
        s = dtype(-(q - 1))
    else:
        q = (int(info.max) + 1) // 4
        x = rng.integers(0, q, N, dtype=dtype, endpoint=False)
        y = rng.integers(0, q, N, dtype=dtype, endpoint=False)
        x[:3] = [0, q - 1, q - 1]
        y[:3] = [0, q - 1, 0]
        s = dtype(2 * q - 1)   # large: results reach max - 2
    return x, y, s


def _expected_int(x, y, s):
    dtype = x.dtype
    want = x.astype(object) + y.astype(object) + int(s)
    info = np.iinfo(dtype)
    assert all(info.min <= v <= info.max for v in want)
    return np.array(want.tolist(), dtype=dtype)


@pytest.mark.parametrize("name, ctype, dtype", INT_TYPES, ids=[t[0] for t in INT_TYPES])
def test_integer_kernel(dt, name, ctype, dtype):
    rng = np.random.default_rng(len(name))
    x, y, s = _int_operands(dtype, rng)
    want = _expected_int(x, y, s)
    f = getattr(dt, f"add_{name}")

    got = f(x, y, s)
    assert got.dtype == np.dtype(dtype) and got.shape == (N,)
    np.testing.assert_array_equal(np.asarray(got), want)

    # A Python int scalar is passed with the parameter's width.
    np.testing.assert_array_equal(np.asarray(f(x, y, int(s))), want)

    got = jax.jit(lambda a, b: f(a, b, s))(x, y)
    np.testing.assert_array_equal(np.asarray(got), want)

    xs = np.stack([x, np.flip(x), x // dtype(3)])
    got = jax.vmap(lambda a: f(a, y, s))(xs)
    want_b = np.stack([_expected_int(r, y, s) for r in xs])
    np.testing.assert_array_equal(np.asarray(got), want_b)
    got = jax.jit(jax.vmap(lambda a, b: f(a, b, s), in_axes=(1, 0)))(xs.T, np.stack([y] * 3))
    np.testing.assert_array_equal(np.asarray(got), want_b)


def test_integer_extremes_without_scalar_offset(dt):
    # Full range of each type: x + y with s = 0 where x and y hit min and max.
    for name, _, dtype in INT_TYPES:
        info = np.iinfo(dtype)
        x = np.array([info.min, info.max, 0, info.max, info.min], dtype=dtype)
        y = np.array([0, 0, info.max, info.min, 0], dtype=dtype)
        want = _expected_int(x, y, dtype(0))
        got = getattr(dt, f"add_{name}")(x, y, 0)
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)


def test_uint64_scalar_above_int64_max(dt):
    x = np.array([0, 1, 2 ** 62], np.uint64)
    y = np.zeros(3, np.uint64)
    s = np.uint64(2 ** 63 + 5)
    got = dt.add_uint64(x, y, s)
    np.testing.assert_array_equal(np.asarray(got), x + s)


@pytest.mark.parametrize("name, ctype, dtype", FLOAT_TYPES, ids=[t[0] for t in FLOAT_TYPES])
def test_float_kernel(dt, name, ctype, dtype):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(N) * 1e3).astype(dtype)
    y = (rng.standard_normal(N) * 1e-3).astype(dtype)
    x[:4] = [np.finfo(dtype).max / 4, -np.finfo(dtype).max / 4, np.finfo(dtype).tiny, -0.0]
    s = dtype(-2.5)
    want = (x + y) + s
    f = getattr(dt, f"add_{name}")
    got = f(x, y, s)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(f(x, y, -2.5)), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a, b: f(a, b, s))(x, y)), want)
    xs = np.stack([x, -x])
    got = jax.vmap(lambda b, a: f(a, b, s), in_axes=(None, 0))(y, xs)
    np.testing.assert_array_equal(np.asarray(got), np.stack([(r + y) + s for r in xs]))
    # Non-finite values go through.
    z = np.array([np.inf, -np.inf, np.nan], dtype=dtype)
    got = np.asarray(f(z, np.zeros(3, dtype), 1.0))
    np.testing.assert_array_equal(got, z)


@pytest.mark.parametrize("name, ctype, dtype", HALF_TYPES, ids=[t[0] for t in HALF_TYPES])
def test_half_kernel(dt, name, ctype, dtype):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(N) * 100).astype(np.float32)
    y = (rng.standard_normal(N)).astype(np.float32)
    x[:4] = [-60000.0, 60000.0, 2.0 ** -20, -0.0]
    x, y = x.astype(dtype), y.astype(dtype)
    # The kernel adds in float32 and rounds once to the 16-bit type.
    want = (x.astype(np.float32) + y.astype(np.float32)).astype(dtype)
    f = getattr(dt, f"add_{name}")
    got = f(x, y)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(got).astype(np.float32), want.astype(np.float32))
    got = jax.jit(f)(jnp.asarray(x), jnp.asarray(y))
    np.testing.assert_array_equal(np.asarray(got).astype(np.float32), want.astype(np.float32))
    xs = np.stack([x, y])
    got = jax.vmap(f, in_axes=(0, None))(xs, y)
    want_b = np.stack([(r.astype(np.float32) + y.astype(np.float32)).astype(dtype) for r in xs])
    np.testing.assert_array_equal(np.asarray(got).astype(np.float32), want_b.astype(np.float32))


def test_half_conversions(dt):
    x = np.array([0.0, -1.5, 65504.0 / 2, 6.1035e-05, 1e-7, 3.140625, -0.0], np.float16)
    wide, narrow = dt.twice_half(x)
    assert wide.dtype == np.float32 and narrow.dtype == BF16
    np.testing.assert_array_equal(np.asarray(wide), 2 * x.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(narrow).astype(np.float32),
                                  (2 * x.astype(np.float32)).astype(BF16).astype(np.float32))
    wide_j, narrow_j = jax.jit(dt.twice_half)(x)
    np.testing.assert_array_equal(np.asarray(wide_j), np.asarray(wide))
    np.testing.assert_array_equal(np.asarray(narrow_j).astype(np.float32),
                                  np.asarray(narrow).astype(np.float32))


def test_bool_kernel(dt):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2, N).astype(bool)
    y = rng.integers(0, 2, N).astype(bool)
    for s in (False, True, np.bool_(True)):
        want = (x != y) != bool(s)
        got = dt.ne_bool(x, y, s)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(np.asarray(got), want)
        np.testing.assert_array_equal(
            np.asarray(jax.jit(lambda a, b: dt.ne_bool(a, b, s))(x, y)), want)
    xs = np.stack([x, ~x, np.zeros_like(x)])
    got = jax.vmap(lambda a: dt.ne_bool(a, y, True))(xs)
    np.testing.assert_array_equal(np.asarray(got), np.stack([(r != y) != True for r in xs]))  # noqa: E712


def _mixed_want(a, b, h, w):
    total = (a.astype(np.float64) + b.astype(np.float64)
             + h.astype(np.float32).astype(np.float64) * w.astype(np.float32).astype(np.float64))
    return total, (a < 0).any(axis=1), b.astype(np.uint64).sum(axis=1)


def test_host_kernel_views_of_mixed_dtypes(dt):
    rng = np.random.default_rng(5)
    r, c = 5, 9
    a = rng.integers(-32768, 32767, (r, c), dtype=np.int16)
    a[1] = np.abs(a[1]).clip(0, 32767)  # a row without negatives
    a[3] = 0
    b = rng.integers(2 ** 31, 2 ** 32 - 1, (r, c), dtype=np.uint32, endpoint=True)
    h = (rng.standard_normal((r, c)) * 10).astype(np.float16)
    w = rng.standard_normal(c).astype(np.float32).astype(BF16)
    want = _mixed_want(a, b, h, w)
    for f in (dt.mixed, jax.jit(dt.mixed)):
        total, neg, sums = f(a, b, h, w)
        assert (total.dtype, neg.dtype, sums.dtype) == (np.float64, np.bool_, np.uint64)
        np.testing.assert_allclose(np.asarray(total), want[0], rtol=1e-12)
        np.testing.assert_array_equal(np.asarray(neg), want[1])
        np.testing.assert_array_equal(np.asarray(sums), want[2])
    # Batched over a leading axis of `a` and `h`; `b` and `w` shared.
    ab = np.stack([a, -a // 2])
    hb = np.stack([h, h * np.float16(0.5)])
    total, neg, sums = jax.vmap(dt.mixed, in_axes=(0, None, 0, None))(ab, b, hb, w)
    for i in range(2):
        wt, wn, ws = _mixed_want(ab[i], b, hb[i], w)
        np.testing.assert_allclose(np.asarray(total[i]), wt, rtol=1e-12)
        np.testing.assert_array_equal(np.asarray(neg[i]), wn)
        np.testing.assert_array_equal(np.asarray(sums[i]), ws)


def test_init_in_every_kind_of_type(dt):
    want = [
        np.full(4, np.float32(0.1).astype(np.float16)),
        np.full(4, np.float32(-3.3).astype(BF16)),
        np.full(4, True),
        np.full(4, 2 ** 64 - 1, np.uint64),
        np.full(4, -2 ** 63, np.int64),
        np.full(4, -128, np.int8),
        np.full(4, 65535, np.uint16),
        np.full(4, -np.inf, np.float32),
        np.full(4, np.nan),
        np.full(4, np.float32(1e-40)),
    ]
    for f in (dt.fills, jax.jit(dt.fills)):
        got = f(np.zeros(4, np.float32))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype, (g.dtype, w.dtype)
            np.testing.assert_array_equal(np.asarray(g), w)


def test_half_scalar_is_a_build_error(tmp_path):
    from conftest import run_kernelc
    src = tmp_path / "dt_half_scalar.cu"
    src.write_text("""#include <kernelc.h>
#include <cuda_fp16.h>
KC_GRID("n")
__global__ void hs(KC_IN("n") const __half* x, __half s, KC_DERIVED("x.size") int64_t n,
                   KC_OUT("x") __half* out) {}
""")
    r = run_kernelc("build", src, "-o", tmp_path / "out")
    assert r.returncode == 1
    assert ("scalar parameter 's' of kernel 'hs' has type '__half', but XLA FFI attributes "
            "cannot carry 16-bit floats; use float") in r.stderr
