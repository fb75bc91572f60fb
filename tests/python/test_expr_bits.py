"""C's integer syntax in annotation expressions: shifts, masks, casts,
suffixed and hexadecimal literals in a grid counted in blocks, the dynamic
shared memory, output shapes and derived values, run on the CPU against
NumPy; and their faults at trace time."""

import re

import jax
import numpy as np
import pytest

from conftest import direct_call

SOURCE = r"""
#include <kernelc.h>

#define LOG_BLOCK 7

// One block of 1 << LOG_BLOCK threads per that many elements: the grid
// must cover all of x, or `twice` misses its last elements.
KC_BLOCKS("(n + (1 << LOG_BLOCK) - 1) >> LOG_BLOCK") KC_BLOCK(128)
KC_SHARED_BYTES("(size_t)(1 << LOG_BLOCK) * 4u")
__global__ void bits(KC_IN("n") const float* x,
                     KC_DERIVED("x.size") int64_t n,
                     KC_DERIVED("(unsigned)n >> 1 | 1") int32_t odd_half,
                     int32_t k,
                     KC_OUT("n") float* twice,
                     KC_OUT("n & ~3") float* head,
                     KC_OUT("(int)n / 2") float* pairs,
                     KC_OUT("((unsigned)k >> 28) ^ 0x1ULL") int64_t* flags,
                     KC_OUT("1") int64_t* derived) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) twice[i] = 2.0f * x[i];
  if (i < (n & ~int64_t{3})) head[i] = x[i];
  if (i < n / 2) pairs[i] = x[2 * i] + x[2 * i + 1];
  if (i < (int64_t)(((uint32_t)k >> 28) ^ 1u)) flags[i] = i;
  if (i == 0) derived[0] = odd_half;
}

// An output whose extent a scalar shifts: a count outside 0..63 fails.
KC_KERNEL void shifted(int32_t s, KC_SHAPE("1 << s") kc::Out<int8_t, 1> out) {
  for (int64_t i = 0; i < out.shape[0]; ++i) out(i) = 1;
}
"""


@pytest.fixture(scope="module")
def ops(build_package):
    return build_package("expr_bits", source_text=SOURCE)


def reference(x, k):
    n = x.size
    flags = ((k & 0xFFFFFFFF) >> 28) ^ 1
    return (2 * x, x[:n & ~3], x[0:2 * (n // 2):2] + x[1:2 * (n // 2):2],
            np.arange(flags, dtype=np.int64),
            np.array([((n & 0xFFFFFFFF) >> 1) | 1], np.int64))


@pytest.mark.parametrize("n", [0, 1, 3, 4, 127, 128, 129, 1000])
@pytest.mark.parametrize("k", [0, -1, 1 << 28, -(1 << 31)])
def test_shifts_masks_and_casts_size_the_call(ops, n, k):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    want = reference(x, k)
    for got in (ops.bits(x, k), jax.jit(ops.bits, static_argnums=1)(x, k)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            g = np.asarray(g)
            assert g.shape == w.shape
            # With no element there is no thread: only the shapes count.
            if n:
                np.testing.assert_allclose(g, w, rtol=1e-6)


def raises_message(pattern, call, *args):
    """The ValueError's message (its text, not the notes JAX adds to an
    error raised under jax.jit) matches pattern whole."""
    with pytest.raises(ValueError) as info:
        call(*args)
    assert re.fullmatch(pattern, str(info.value)), str(info.value)


def test_a_shift_count_out_of_range_fails_at_trace_time(ops):
    np.testing.assert_array_equal(np.asarray(ops.shifted(3)), np.ones(8, np.int8))
    for s in (64, -1):
        raises_message(r"shifted: .*1 << s.* shifts by a count outside 0\.\.63",
                       ops.shifted, s)
    raises_message(r"shifted: .*1 << s.* overflows int64", ops.shifted, 63)


@pytest.mark.parametrize("s, fails", [(3, False), (64, True), (-1, True),
                                      (63, True)])
def test_the_handler_checks_shifts_itself(ops, s, fails):
    """The FFI target called directly, past the trace-time checks: the
    handler's evaluator refuses the same shifts."""

    body = f"""
try:
    out = jax.ffi.ffi_call(target, jax.ShapeDtypeStruct((8,), np.int8))(
        s=np.int32({s}))
    print("OK", np.asarray(out).tolist())
except Exception as e:
    print("ERR", str(e).splitlines()[0])
"""
    r = direct_call(ops, "shifted", body)
    assert r.returncode == 0, r.stderr
    line = r.stdout.splitlines()[-1]
    if not fails:
        assert line == "OK [1, 1, 1, 1, 1, 1, 1, 1]"
    else:
        assert line.endswith(
            "INVALID_ARGUMENT: shifted: a shape or grid expression divides by "
            "zero, overflows or shifts by a count outside 0..63"), line
