"""What annotations mean at run time: outputs sized by scalars and shape
expressions, "_" dims, same-shape outputs, KC_INIT, narrow derived values,
3-D grids, __device__ helpers, .cc host kernels, several calls in one jit,
and the handler's own checks when its FFI target is called directly."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import direct_call

SOURCE = r"""
#include <kernelc.h>

// No tensor input: a scalar sizes the output.
KC_GRID("k")
__global__ void iota(int64_t k, KC_OUT("k") int64_t* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < k) out[i] = i;
}

// A scalar sizes an output beside an input.
KC_GRID("k")
__global__ void repeat_first(KC_IN("_") const float* x, int32_t k,
                             KC_OUT("k") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < k) out[i] = x[0] * (float)i;
}

// Output shapes from expressions.
KC_KERNEL void exprs(KC_SHAPE("n") kc::In<float, 1> x,
                     KC_SHAPE("n * 2") kc::Out<float, 1> twice,
                     KC_SHAPE("ceil_div(n, 2)") kc::Out<float, 1> pairs,
                     KC_SHAPE("n / 2") kc::Out<float, 1> products,
                     KC_SHAPE("min(n, 3)") kc::Out<float, 1> head,
                     KC_SHAPE("max(n, 4)") kc::Out<float, 1> padded,
                     KC_SHAPE("n % 3") kc::Out<float, 1> tail) {
  int64_t n = x.shape[0];
  for (int64_t i = 0; i < 2 * n; ++i) twice(i) = x(i / 2);
  for (int64_t i = 0; i < pairs.shape[0]; ++i)
    pairs(i) = x(2 * i) + (2 * i + 1 < n ? x(2 * i + 1) : 0.0f);
  for (int64_t i = 0; i < products.shape[0]; ++i) products(i) = x(2 * i) * x(2 * i + 1);
  for (int64_t i = 0; i < head.shape[0]; ++i) head(i) = x(i);
  for (int64_t i = 0; i < padded.shape[0]; ++i) padded(i) = i < n ? x(i) : -1.0f;
  for (int64_t i = 0; i < tail.shape[0]; ++i) tail(i) = x(n - tail.shape[0] + i);
}

// Floor division and modulo of negative values, in an input check (Python
// and the handler must agree) and in an output shape.
KC_KERNEL void floors(KC_SHAPE("n") kc::In<float, 1> x,
                      KC_SHAPE("(n - 7) / 2 + 3") kc::In<float, 1> y,
                      KC_SHAPE("(n - 7) % 3, ceil_div(n - 7, 2) + 4") kc::Out<float, 2> out) {
  for (int64_t i = 0; i < out.shape[0]; ++i)
    for (int64_t j = 0; j < out.shape[1]; ++j) out(i, j) = (y.shape[0] > 0 ? y(0) : 0.0f) + (float)(i * 10 + j);
}

// "_" accepts any extent: column sums of any number of rows.
KC_KERNEL void colsum(KC_SHAPE("_, m") kc::In<float, 2> x,
                      KC_SHAPE("m") kc::In<float, 1> w,
                      KC_SHAPE("m") kc::Out<float, 1> out) {
  for (int64_t j = 0; j < x.shape[1]; ++j) {
    float s = 0.0f;
    for (int64_t i = 0; i < x.shape[0]; ++i) s += x(i, j);
    out(j) = w(j) * s;
  }
}

// An output with the same shape as a rank-3 input.
KC_GRID("n")
__global__ void negate3(KC_IN("a, b, c") const double* x,
                        KC_DERIVED("x.size") int64_t n,
                        KC_OUT("x") double* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = -x[i] + (double)i;
}

// KC_INIT with a float and with negative integers; the kernel writes only
// some elements.
KC_GRID("n")
__global__ void partial(KC_IN("n") const float* x,
                        KC_DERIVED("x.size") int64_t n,
                        KC_OUT("x") KC_INIT(1.5) float* odd_only,
                        KC_OUT("x") KC_INIT(-7) int16_t* positive_only,
                        KC_SHAPE("n") KC_INIT(-2.25) kc::Out<double, 1> never,
                        KC_SHAPE("2, n") KC_INIT(-9000000000) kc::Out<int64_t, 2> big) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (i % 2 == 1) odd_only[i] = x[i];
  if (x[i] > 0) positive_only[i] = (int16_t)i;
  if (i == 0) big(1, 0) = 5;
}

// Derived values of type int32: a size, a dimension and a rank.
KC_GRID("n")
__global__ void derived32(KC_IN("r, c") const int32_t* x,
                          KC_DERIVED("x.size") int32_t n,
                          KC_DERIVED("x.shape[1]") int32_t cols,
                          KC_DERIVED("x.rank") int32_t rank,
                          KC_OUT("x") int32_t* out) {
  int32_t i = (int32_t)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = x[i] + 10 * (i % cols) + 1000 * rank + 100000 * n;
}

// A 3-D grid sized by scalars with a block that does not divide it; each
// in-range thread adds index + 1 to a buffer pre-filled with -1, so an
// element written exactly once holds its own linear index.
KC_GRID("a", "b", "c")
KC_BLOCK(4, 3, 2)
__global__ void grid3(int64_t a, int64_t b, int64_t c,
                      KC_OUT("c, b, a") KC_INIT(-1) int64_t* out) {
  int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int64_t y = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
  int64_t z = blockIdx.z * (int64_t)blockDim.z + threadIdx.z;
  if (x >= a || y >= b || z >= c) return;
  int64_t idx = (z * b + y) * a + x;
  out[idx] += idx + 1;
}

// The same with the default block (8x8x4), an in-place counter, and a grid
// from derived values.
KC_GRID("d2", "d1", "d0")
__global__ void grid3_hits(KC_INMUT("_, _, _") int32_t* t,
                           KC_DERIVED("t.shape[0]") int64_t d0,
                           KC_DERIVED("t.shape[1]") int64_t d1,
                           KC_DERIVED("t.shape[2]") int64_t d2) {
  int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int64_t y = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
  int64_t z = blockIdx.z * (int64_t)blockDim.z + threadIdx.z;
  if (x >= d2 || y >= d1 || z >= d0) return;
  t[(z * d1 + y) * d2 + x] += 1;
}

// User __device__ helpers: plain, templated, calling one another, and a
// functor.
__device__ float square(float v) { return v * v; }
__device__ __forceinline__ float poly(float v) { return square(v) + 2.0f * v + 1.0f; }
template <typename T>
__device__ T clamp_to(T v, T lo, T hi) { return v < lo ? lo : (v > hi ? hi : v); }
struct Affine {
  float m, c;
  __device__ float operator()(float v) const { return m * v + c; }
};

KC_GRID("n")
__global__ void helpers(KC_IN("n") const float* x, float lo, float hi,
                        KC_DERIVED("x.size") int64_t n, KC_OUT("x") float* out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  Affine f{0.5f, -1.0f};
  out[i] = clamp_to(f(poly(x[i])), lo, hi);
}
"""

CC_SOURCE = r"""
// A host kernel in a .cc file, using the C++ standard library.
#include <kernelc.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace {
double Mean(const std::vector<float>& v) {
  if (v.empty()) return 0.0;
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}
}  // namespace

KC_KERNEL void sort_rows(KC_SHAPE("r, c") kc::In<float, 2> x, bool descending,
                         KC_SHAPE("r, c") kc::Out<float, 2> sorted,
                         KC_SHAPE("r") kc::Out<double, 1> mean) {
  std::vector<float> row(static_cast<size_t>(x.shape[1]));
  for (int64_t i = 0; i < x.shape[0]; ++i) {
    for (int64_t j = 0; j < x.shape[1]; ++j) row[j] = x(i, j);
    if (descending)
      std::sort(row.begin(), row.end(), [](float a, float b) { return a > b; });
    else
      std::sort(row.begin(), row.end());
    for (int64_t j = 0; j < x.shape[1]; ++j) sorted(i, j) = row[j];
    mean(i) = Mean(row);
  }
}
"""

NAMES_SOURCE = r"""
#include <kernelc.h>

// Rank-0 tensors, parameters named like Python keywords or with a leading
// underscore, and ranks in an output shape.
KC_GRID("1")
__global__ void scal(KC_IN("") const float* s, KC_IN("n") const float* from,
                     float lambda, KC_OUT("") float* out,
                     KC_OUT("s.rank + 1, from.rank + 1") int32_t* ranks) {
  out[0] = s[0] * lambda + from[0];
  ranks[0] = 10;
  ranks[1] = 11;
}

// A grid smaller than the outputs, possibly empty: the pre-filled output
// and the in-place operand keep their values where no thread writes.
KC_GRID("k")
__global__ void head(KC_IN("n") const float* x, int64_t k,
                     KC_OUT("n") KC_INIT(3) float* out,
                     KC_INMUT("n") float* acc) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < k) {
    out[i] = x[i];
    acc[i] += x[i];
  }
}

// Results in declaration order whatever the roles: an Out declared first,
// an InMut last; a derived value from a size and a scalar.
KC_GRID("n")
__global__ void spread(KC_OUT("n * k") float* out, KC_IN("n") const float* x, int32_t k,
                       KC_DERIVED("x.size * k") int64_t total, KC_INMUT("k") int32_t* cnt) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= total / k) return;
  for (int32_t j = 0; j < k; ++j) out[i * k + j] = x[i] * (float)j;
  if (i == 0)
    for (int32_t j = 0; j < k; ++j) cnt[j] += j;
}

// An InMut first, then an Out.
KC_KERNEL void swap_first(KC_SHAPE("n") kc::InMut<float, 1> a,
                          KC_SHAPE("n") kc::In<float, 1> b,
                          KC_SHAPE("") kc::Out<float, 0> old) {
  old() = a(0);
  a(0) = b(0);
}

// A host kernel updating a view in place.
KC_KERNEL void bump(KC_SHAPE("n, m") kc::InMut<int64_t, 2> t,
                    KC_SHAPE("m") kc::In<int64_t, 1> d, int64_t _scale) {
  for (int64_t i = 0; i < t.shape[0]; ++i)
    for (int64_t j = 0; j < t.shape[1]; ++j) t(i, j) += d(j) * _scale + i;
}
"""

F32 = np.float32


@pytest.fixture(scope="module")
def sem(build_package):
    return build_package("sem_main", source_text=SOURCE)


@pytest.fixture(scope="module")
def sem_cc(build_package):
    return build_package("sem_host_cc", source_text=CC_SOURCE, suffix=".cc")


@pytest.fixture(scope="module")
def sem_names(build_package):
    return build_package("sem_names", source_text=NAMES_SOURCE)


def f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


# --- outputs sized by scalars --------------------------------------------------

@pytest.mark.parametrize("k", [0, 1, 255, 256, 1000])
def test_scalar_sizes_output(sem, k):
    got = sem.iota(k)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(np.asarray(got), np.arange(k))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda: sem.iota(k))()), np.arange(k))


def test_scalar_sizes_output_beside_input(sem):
    x = np.array([2.5, 9.0], F32)
    for k in (0, 3, 300):
        want = F32(2.5) * np.arange(k, dtype=F32)
        np.testing.assert_array_equal(np.asarray(sem.repeat_first(x, k)), want)
        np.testing.assert_array_equal(np.asarray(jax.jit(sem.repeat_first, static_argnums=1)(x, k)),
                                      want)
    xs = np.array([[1.0], [2.0], [-3.0]], F32)
    got = jax.vmap(lambda v: sem.repeat_first(v, 4))(xs)
    np.testing.assert_array_equal(np.asarray(got), xs * np.arange(4, dtype=F32))


# --- shape expressions -----------------------------------------------------------

def np_exprs(x):
    n = x.size
    pairs = np.array([x[2 * i] + (x[2 * i + 1] if 2 * i + 1 < n else 0) for i in range(-(-n // 2))],
                     F32).reshape(-1)
    products = (x[0:2 * (n // 2):2] * x[1:2 * (n // 2):2]).astype(F32)
    padded = np.concatenate([x, np.full(max(n, 4) - n, -1.0, F32)])
    tail = x[n - n % 3:]
    return np.repeat(x, 2), pairs, products, x[:min(n, 3)], padded, tail


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 7, 10])
def test_shape_expressions(sem, n):
    x = f32(n, seed=n) if n else np.zeros(0, F32)
    want = np_exprs(x)
    for f in (sem.exprs, jax.jit(sem.exprs)):
        got = f(x)
        assert len(got) == 6
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_array_equal(np.asarray(g), w)


def test_shape_expressions_vmap(sem):
    xs = f32(5, 3, seed=1)   # batch along axis 1, n = 5
    got = jax.vmap(sem.exprs, in_axes=1)(xs)
    for b in range(3):
        for g, w in zip(got, np_exprs(xs[:, b])):
            np.testing.assert_array_equal(np.asarray(g[b]), w)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8, 11])
def test_floor_division_of_negative_values(sem, n):
    ny = (n - 7) // 2 + 3          # floor division, as in Python
    rows, cols = (n - 7) % 3, -((7 - n) // 2) + 4
    y = np.full(ny, 0.5, F32)
    got = sem.floors(np.zeros(n, F32), y)
    want = (0.5 if ny else 0.0) + (10 * np.arange(rows)[:, None] + np.arange(cols)[None, :]).astype(F32)
    assert got.shape == (rows, cols)
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(sem.floors)(np.zeros(n, F32), y)), want)
    # Truncating division would want another length for y.
    with pytest.raises(ValueError, match=r"floors: parameter 'y' has shape"):
        sem.floors(np.zeros(n, F32), np.zeros(ny + 1, F32))


@pytest.mark.parametrize("rows", [0, 1, 3, 17])
def test_underscore_dimension_accepts_any_size(sem, rows):
    x = f32(rows, 4, seed=rows)
    w = np.array([1.0, -1.0, 2.0, 0.5], F32)
    want = w * x.sum(axis=0, dtype=F32) if rows else np.zeros(4, F32)
    np.testing.assert_allclose(np.asarray(sem.colsum(x, w)), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(sem.colsum)(x, w)), want, rtol=1e-5, atol=1e-6)
    # The named dimension is still checked.
    with pytest.raises(ValueError, match=r"^colsum: parameter 'w' has shape \(3,\), "
                                         r"but dimension 0 must be m = 4"):
        sem.colsum(x, w[:3])


def test_same_shape_output(sem):
    for shape in [(2, 3, 4), (1, 1, 1), (5, 0, 2), (3, 7, 13)]:
        x = np.random.default_rng(1).standard_normal(shape)
        want = -x + np.arange(x.size, dtype=np.float64).reshape(shape)
        got = sem.negate3(x)
        assert got.shape == shape and got.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(got), want)
        np.testing.assert_array_equal(np.asarray(jax.jit(sem.negate3)(x)), want)
    xs = np.random.default_rng(2).standard_normal((2, 3, 4, 5))
    got = jax.vmap(sem.negate3, in_axes=3, out_axes=3)(xs)
    want = np.stack([-xs[..., i] + np.arange(24.0).reshape(2, 3, 4) for i in range(5)], axis=3)
    np.testing.assert_array_equal(np.asarray(got), want)


# --- KC_INIT -------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 6, 257])
def test_init_values(sem, n):
    x = f32(n, seed=3) if n else np.zeros(0, F32)
    idx = np.arange(n)
    want_odd = np.where(idx % 2 == 1, x, F32(1.5)).astype(F32)
    want_pos = np.where(x > 0, idx, -7).astype(np.int16)
    want_never = np.full(n, -2.25)
    want_big = np.full((2, n), -9_000_000_000, np.int64)
    if n:
        want_big[1, 0] = 5
    for f in (sem.partial, jax.jit(sem.partial)):
        odd, pos, never, big = f(x)
        assert (odd.dtype, pos.dtype, never.dtype, big.dtype) == (F32, np.int16, np.float64, np.int64)
        np.testing.assert_array_equal(np.asarray(odd), want_odd)
        np.testing.assert_array_equal(np.asarray(pos), want_pos)
        np.testing.assert_array_equal(np.asarray(never), want_never)
        np.testing.assert_array_equal(np.asarray(big), want_big)


def test_init_values_vmap(sem):
    xs = f32(3, 9, seed=4)
    odd, pos, never, big = jax.vmap(sem.partial)(xs)
    idx = np.arange(9)
    np.testing.assert_array_equal(np.asarray(odd), np.where(idx % 2 == 1, xs, F32(1.5)))
    np.testing.assert_array_equal(np.asarray(pos), np.where(xs > 0, idx, -7))
    np.testing.assert_array_equal(np.asarray(never), np.full((3, 9), -2.25))
    want_big = np.full((3, 2, 9), -9_000_000_000, np.int64)
    want_big[:, 1, 0] = 5
    np.testing.assert_array_equal(np.asarray(big), want_big)


# --- derived values --------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (17, 31), (0, 4)])
def test_int32_derived_values(sem, shape):
    x = np.random.default_rng(5).integers(-1000, 1000, shape, dtype=np.int32)
    n = x.size
    i = np.arange(n).reshape(shape)
    want = (x + 10 * (i % shape[1]) + 1000 * 2 + 100000 * n).astype(np.int32)
    for f in (sem.derived32, jax.jit(sem.derived32)):
        got = f(x)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(got), want)
    got = jax.vmap(sem.derived32, in_axes=2)(np.stack([x, -x], axis=2))
    np.testing.assert_array_equal(np.asarray(got[0]), want)
    np.testing.assert_array_equal(np.asarray(got[1]), want - 2 * x)


# --- 3-D grids ----------------------------------------------------------------------------

@pytest.mark.parametrize("a, b, c", [(1, 1, 1), (7, 5, 3), (4, 3, 2), (9, 1, 5), (13, 11, 7), (0, 3, 2)])
def test_3d_grid_writes_each_element_once(sem, a, b, c):
    want = np.arange(a * b * c, dtype=np.int64).reshape(c, b, a)
    got = sem.grid3(a, b, c)
    assert got.shape == (c, b, a)
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda: sem.grid3(a, b, c))()), want)


@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 5, 7), (4, 8, 8), (5, 9, 17), (2, 0, 3)])
def test_3d_grid_default_block_in_place(sem, shape):
    t = np.random.default_rng(6).integers(-5, 5, shape, dtype=np.int32)
    np.testing.assert_array_equal(np.asarray(sem.grid3_hits(t)), t + 1)
    f = jax.jit(sem.grid3_hits, donate_argnums=0)
    np.testing.assert_array_equal(np.asarray(f(f(jnp.asarray(t)))), t + 2)


# --- __device__ helpers ----------------------------------------------------------------

def test_device_helpers(sem):
    x = np.linspace(-4, 4, 301, dtype=F32)
    poly = x * x + F32(2) * x + F32(1)
    want = np.clip(F32(0.5) * poly - F32(1), F32(-0.75), F32(3.0))
    np.testing.assert_allclose(np.asarray(sem.helpers(x, -0.75, 3.0)), want, rtol=1e-6, atol=1e-6)
    g = jax.jit(lambda v: sem.helpers(v, -0.75, 3.0))
    np.testing.assert_allclose(np.asarray(g(x)), want, rtol=1e-6, atol=1e-6)


# --- a host kernel in a .cc file -----------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 9), (1, 1), (3, 0), (0, 5)])
def test_host_kernel_in_cc_file(sem_cc, shape):
    x = np.random.default_rng(7).standard_normal(shape).astype(F32)
    mean = x.astype(np.float64).mean(axis=1) if shape[1] else np.zeros(shape[0])
    for f in (sem_cc.sort_rows, jax.jit(sem_cc.sort_rows, static_argnums=1)):
        s, m = f(x, False)
        np.testing.assert_array_equal(np.asarray(s), np.sort(x, axis=1))
        np.testing.assert_allclose(np.asarray(m), mean, rtol=1e-12)
        s, m = f(x, True)
        np.testing.assert_array_equal(np.asarray(s), -np.sort(-x, axis=1))
    xs = np.stack([x, 2 * x])
    s, m = jax.vmap(lambda v: sem_cc.sort_rows(v, False))(xs)
    np.testing.assert_array_equal(np.asarray(s), np.sort(xs, axis=2))


# --- composition -------------------------------------------------------------------------------

def test_jit_calls_op_twice(sem):
    x = np.linspace(-2, 2, 50, dtype=F32)

    def twice(v):
        once = sem.helpers(v, -10.0, 10.0)
        return sem.helpers(once, -10.0, 10.0), once

    def ref(v):
        return np.clip(F32(0.5) * (v * v + 2 * v + 1) - 1, -10, 10).astype(F32)

    out, once = jax.jit(twice)(x)
    np.testing.assert_allclose(np.asarray(once), ref(x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(out), ref(ref(x)), rtol=1e-5, atol=1e-5)

    # Two different kernels, and outputs feeding inputs.
    def chain(v):
        m = sem.negate3(v)
        return sem.negate3(m) + sem.negate3(v)
    v = np.random.default_rng(8).standard_normal((2, 3, 4))
    base = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(np.asarray(jax.jit(chain)(v)),
                                  -(-v + base) + base + (-v + base))


# --- the handler's own checks --------------------------------------------------------------

@pytest.mark.parametrize("jit", [False, True])
def test_ffi_target_rejects_wrong_output_shape(sem, jit):
    body = f"""
x = np.zeros((2, 3, 4))
call = jax.ffi.ffi_call(target, jax.ShapeDtypeStruct((2, 3, 5), np.float64))
if {jit}:
    call = jax.jit(call)
np.asarray(call(x))
"""
    r = direct_call(sem, "negate3", body)
    # A Python exception (exit 1 with a traceback), not a crash.
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "Traceback (most recent call last)" in r.stderr
    assert ("negate3: parameter 'out' has shape (2, 3, 5), but dimension 2 must be "
            "x.shape[2] = 4") in r.stderr, r.stderr


@pytest.mark.parametrize("out, args, message", [
    ("((5,), np.float32)", "np.zeros((2, 5), np.float32), np.zeros(3, np.float32)",
     "colsum: parameter 'w' has shape (3,), but dimension 0 must be m = 5"),
    ("((5,), np.float32)", "np.zeros((2, 5), np.float32), np.zeros(5, np.float64)",
     "colsum: parameter 'w' expects float32 elements"),
    ("((5,), np.float64)", "np.zeros((2, 5), np.float32), np.zeros(5, np.float32)",
     "colsum: parameter 'out' expects float32 elements"),
    ("((5,), np.float32)", "np.zeros((2, 5), np.float32), np.zeros((5, 1), np.float32)",
     "colsum: parameter 'w' expects rank 1, got rank 2"),
    ("((4,), np.float32)", "np.zeros((2, 5), np.float32), np.zeros(5, np.float32)",
     "colsum: parameter 'out' has shape (4,), but dimension 0 must be m = 5"),
    ("((5,), np.float32)", "np.zeros(5, np.float32),",
     "Wrong number of arguments: expected 2 but got 1"),
], ids=["input-dim", "input-dtype", "output-dtype", "input-rank", "output-dim", "arity"])
def test_ffi_target_checks_every_buffer(sem, out, args, message):
    body = f"""
try:
    jax.ffi.ffi_call(target, jax.ShapeDtypeStruct{out})({args})
except Exception as e:
    print("ERR", type(e).__name__, str(e).splitlines()[0])
else:
    print("NO ERROR")
# The process is still usable afterwards.
x = np.ones((2, 5), np.float32)
print("AFTER", np.asarray(sem_main.colsum(x, np.ones(5, np.float32))).tolist())
"""
    r = direct_call(sem, "colsum", body)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    err = next(line for line in lines if line.startswith(("ERR", "NO ERROR")))
    assert err.startswith("ERR ") and "RuntimeError" in err, err
    assert err.endswith("INVALID_ARGUMENT: " + message), err
    assert lines[-1] == "AFTER [2.0, 2.0, 2.0, 2.0, 2.0]"


# The handler of helpers(x, lo, hi) takes the attributes "hi" and "lo",
# which XLA passes sorted by name: the checks of the call frame.
@pytest.mark.parametrize("out, attrs, message", [
    ("jax.ShapeDtypeStruct((4,), np.float32)", "lo=np.float64(-0.75), hi=np.float32(3)",
     "Wrong attribute type: 'lo' expects a float32 scalar, got float64"),
    ("jax.ShapeDtypeStruct((4,), np.float32)", "lo=np.float32(-0.75)",
     "Wrong number of attributes: expected 2 but got 1 with name(s): lo"),
    ("jax.ShapeDtypeStruct((4,), np.float32)", "lo=np.float32(-0.75), high=np.float32(3)",
     "Attribute name mismatch: high vs hi"),
    ("jax.ShapeDtypeStruct((4,), np.float32)", "lo=np.float32(-0.75), hi=np.array([3.0], np.float32)",
     "Wrong attribute type: 'hi' is not a scalar"),
    ("(jax.ShapeDtypeStruct((4,), np.float32), jax.ShapeDtypeStruct((4,), np.float32))",
     "lo=np.float32(-0.75), hi=np.float32(3)",
     "Wrong number of results: expected 1 but got 2"),
    ("jax.ShapeDtypeStruct((4,), np.float32)", "lo=np.float32(-0.75), hi=np.float32(3)", None),
], ids=["attr-type", "attr-count", "attr-name", "attr-array", "result-count", "valid"])
def test_ffi_target_checks_its_signature(sem, out, attrs, message):
    body = f"""
x = np.array([-4.0, -1.0, 0.5, 2.0], np.float32)
try:
    r = jax.ffi.ffi_call(target, {out})(x, {attrs})
except Exception as e:
    print("ERR", type(e).__name__, str(e).splitlines()[0])
else:
    print("RESULT", np.asarray(r).tolist())
"""
    r = direct_call(sem, "helpers", body)
    assert r.returncode == 0, r.stderr
    line = r.stdout.splitlines()[-1]
    if message is None:
        x = np.array([-4.0, -1.0, 0.5, 2.0], F32)
        want = np.clip(F32(0.5) * (x * x + F32(2) * x + F32(1)) - F32(1), F32(-0.75), F32(3))
        assert line == "RESULT " + str(want.tolist()), line
    else:
        assert line.startswith("ERR ") and "RuntimeError" in line, line
        assert line.endswith("INVALID_ARGUMENT: " + message), line


# --- names, rank 0, keyword arguments ---------------------------------------------------

def test_rank0_and_keyword_names(sem_names):
    from_ = np.array([0.25, 9.0], F32)
    out, ranks = sem_names.scal(F32(3.0), from_, 2.0)
    assert out.shape == () and out.dtype == F32
    assert float(out) == 6.25
    np.testing.assert_array_equal(np.asarray(ranks), [[10, 11]])   # shape (0 + 1, 1 + 1)
    # Keyword arguments use the escaped names.
    out, _ = sem_names.scal(s=3.0, from_=from_, lambda_=-1.0)
    assert float(out) == -2.75
    out, _ = jax.jit(lambda v: sem_names.scal(v, from_, lambda_=2.0))(F32(0.5))
    assert float(out) == 1.25
    outs, ranks = jax.vmap(lambda v: sem_names.scal(v, from_, 2.0))(np.arange(4, dtype=F32))
    np.testing.assert_array_equal(np.asarray(outs), 2 * np.arange(4, dtype=F32) + F32(0.25))
    assert ranks.shape == (4, 1, 2)


def test_host_view_in_place(sem_names):
    t = np.arange(6, dtype=np.int64).reshape(2, 3)
    d = np.array([1, -1, 10], np.int64)
    want = t + d * 5 + np.arange(2)[:, None]
    np.testing.assert_array_equal(np.asarray(sem_names.bump(t, d, 5)), want)
    np.testing.assert_array_equal(np.asarray(sem_names.bump(t, d, _u_scale=5)), want)
    f = jax.jit(sem_names.bump, static_argnums=2, donate_argnums=0)
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray(t), d, 5)), want)
    tb = np.stack([t, 2 * t], axis=2)
    got = jax.vmap(sem_names.bump, in_axes=(2, None, None))(tb, d, 5)
    np.testing.assert_array_equal(np.asarray(got[1]), 2 * t + d * 5 + np.arange(2)[:, None])


@pytest.mark.parametrize("k", [0, 1, 5, 9])
def test_grid_smaller_than_outputs(sem_names, k):
    x = np.arange(1, 10, dtype=F32)
    acc = np.full(9, 100.0, F32)
    mask = np.arange(9) < k
    want_out = np.where(mask, x, F32(3))
    want_acc = np.where(mask, acc + x, acc)
    for f in (lambda a, b: sem_names.head(a, k, b), jax.jit(lambda a, b: sem_names.head(a, k, b))):
        out, new_acc = f(x, acc)
        np.testing.assert_array_equal(np.asarray(out), want_out)
        np.testing.assert_array_equal(np.asarray(new_acc), want_acc)
    g = jax.jit(lambda a, b: sem_names.head(a, k, b), donate_argnums=1)
    out, new_acc = g(x, jnp.asarray(acc))
    np.testing.assert_array_equal(np.asarray(new_acc), want_acc)


def test_several_sources_in_one_package(build_package):
    from conftest import EXAMPLES
    m = build_package("sem_multi", sources=[EXAMPLES / "polar.cu", EXAMPLES / "histogram.cc",
                                            EXAMPLES / "saxpy.cu"])
    assert sorted(m.__all__) == ["accumulate", "histogram", "polar", "saxpy", "saxpy_bwd"]
    x = np.array([3.0, 0.0, -1.0], F32)
    y = np.array([4.0, 2.0, 0.0], F32)
    np.testing.assert_array_equal(np.asarray(m.saxpy(x, y, 2.0)), 2 * x + y)
    r, _ = m.polar(x, y)
    np.testing.assert_allclose(np.asarray(r), np.hypot(x, y), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(m.histogram(x[None], -2.0, 4.0, 3)), [[1, 1, 1]])


def test_concurrent_calls_from_threads(sem):
    # Grid indices are per OS thread: concurrent calls must not mix them.
    from concurrent.futures import ThreadPoolExecutor
    shapes = [(3 + i, 5, 7 + 2 * i) for i in range(12)]
    f = jax.jit(sem.negate3)

    def work(shape):
        x = np.random.default_rng(sum(shape)).standard_normal(shape)
        want = -x + np.arange(x.size, dtype=np.float64).reshape(shape)
        ok = True
        for _ in range(3):
            ok &= np.array_equal(np.asarray(f(x)), want)
            ok &= np.array_equal(np.asarray(sem.grid3(*shape)),
                                 np.arange(np.prod(shape)).reshape(shape[::-1]))
        return ok

    with ThreadPoolExecutor(6) as pool:
        assert all(pool.map(work, shapes))


def test_results_follow_declaration_order(sem_names):
    x = np.array([1.0, 2.0, 3.0], F32)
    out, cnt = sem_names.spread(x, 4, np.array([10, 10, 10, 10], np.int32))
    np.testing.assert_array_equal(np.asarray(out), np.outer(x, np.arange(4, dtype=F32)).ravel())
    np.testing.assert_array_equal(np.asarray(cnt), [10, 11, 12, 13])
    out, cnt = jax.vmap(sem_names.spread, in_axes=(0, None, None))(np.stack([x, -x]), 2,
                                                                  np.zeros(2, np.int32))
    np.testing.assert_array_equal(np.asarray(out[1]), np.outer(-x, [0, 1]).ravel())
    np.testing.assert_array_equal(np.asarray(cnt), [[0, 1], [0, 1]])

    a = np.array([5.0, 6.0], F32)
    for f in (sem_names.swap_first, jax.jit(sem_names.swap_first)):
        new_a, old = f(a, np.array([-1.0, -2.0], F32))
        np.testing.assert_array_equal(np.asarray(new_a), [-1.0, 6.0])
        assert old.shape == () and float(old) == 5.0
