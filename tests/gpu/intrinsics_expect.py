"""NumPy expectations of tests/gpu/kernels/intrinsics.cu, shared by the CPU
test (tests/python/test_cuda_build.py) and the GPU test."""

import jax
import jax.numpy as jnp
import numpy as np

BF16 = np.dtype(jnp.bfloat16)


def inputs(n=517, seed=0):
    r = np.random.default_rng(seed)
    a = r.standard_normal(n).astype(np.float16)
    b = r.standard_normal(n).astype(np.float16)
    u = r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    u[:4] = [0, 1, 0x80000000, 0xffffffff]
    f = r.standard_normal(n).astype(np.float32)
    return a, b, u, f


def check(mod, a, b, u, f, device=None):
    """Runs the kernels on NumPy inputs (placed on `device` when given) and
    compares with NumPy."""
    def put(x):
        return x if device is None else jax.device_put(x, device)

    s, fma, bsum, pair = mod.half_ops(put(a), put(b))
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    np.testing.assert_array_equal(np.asarray(s), (a32 + b32).astype(np.float16))
    want_fma = -(a32 * b32 + 1).astype(np.float16)
    np.testing.assert_allclose(np.asarray(fma).astype(np.float32),
                               want_fma.astype(np.float32), rtol=1e-3,
                               atol=1e-3)
    np.testing.assert_array_equal(
        np.asarray(bsum).astype(np.float32),
        (a32.astype(BF16).astype(np.float32) * 2).astype(BF16).astype(
            np.float32))
    np.testing.assert_array_equal(np.asarray(pair), a32 - b32)

    popc, clz, ffs, brev, mulhi, lo = mod.int_ops(put(u))
    bits = np.unpackbits(u.view(np.uint8).reshape(-1, 4)[:, ::-1], axis=1)
    np.testing.assert_array_equal(popc, bits.sum(axis=1))
    first_one = np.where(bits.any(axis=1), bits.argmax(axis=1), 32)
    np.testing.assert_array_equal(clz, first_one)
    low_first = np.where(u == 0, 0, np.array(
        [(int(v) & -int(v)).bit_length() for v in u]))
    np.testing.assert_array_equal(ffs, low_first)
    np.testing.assert_array_equal(
        brev, np.array([int(f"{int(v):032b}"[::-1], 2) for v in u], np.uint32))
    np.testing.assert_array_equal(
        mulhi, ((u.astype(np.uint64) * np.uint64(0x9E3779B9)) >> np.uint64(32))
        .astype(np.uint32))
    np.testing.assert_array_equal(
        lo, np.minimum(u, 1000) + np.maximum(u & 7, 3))

    out = mod.float_ops(put(f))
    want = f * 2 + f * f + np.minimum(f, 0.5) + np.maximum(f, -0.5)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6, atol=1e-6)
