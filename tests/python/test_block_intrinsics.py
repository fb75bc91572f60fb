"""CUDA's block-level built-ins on the CPU target, through kernelc and JAX
(block_intrinsics.cu): each kernel's every output against what CUDA
specifies, computed here with NumPy, eagerly, under jax.jit and under
jax.vmap; atomics on shared memory within a block and on global memory
across the blocks that XLA's pool runs at once; cache-hinted loads and
stores, fences, clock64 and printf."""

import subprocess
import sys

import jax
import numpy as np
import pytest

from conftest import ROOT

SOURCE = ROOT / "tests" / "python" / "block_intrinsics.cu"


@pytest.fixture(scope="module")
def ops(build_package):
    return build_package("block_intrinsics", sources=[SOURCE])


def as_int32(values):
    """Python ints taken modulo 2**32, as int32 (CUDA's unsigned results
    stored through an int32_t*)."""
    return np.array([v & 0xFFFFFFFF for v in values], np.uint32).view(np.int32)


def mask(bits):
    return sum(1 << j for j, b in enumerate(bits) if b)


def eager_and_jit(op, want, *args):
    """op(*args), eagerly and under jax.jit, equals want."""
    np.testing.assert_array_equal(np.asarray(op(*args)), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(op)(*args)), want)


def check_batched(op, reference, *inputs):
    """op under jax.vmap over the stacked inputs, each row against reference."""
    got = np.asarray(jax.vmap(op)(*[np.stack(parts) for parts in zip(*inputs)]))
    for i, args in enumerate(inputs):
        np.testing.assert_array_equal(got[i], reference(*args))


def block_votes(x):
    padded = np.concatenate([x, np.zeros(-x.size % 128, x.dtype)]).reshape(-1, 128) > 0
    per_block = np.stack([padded.sum(1), padded.all(1), padded.any(1)], axis=1)
    return np.repeat(per_block, 128, axis=0)[:x.size].astype(np.int32)


def test_block_votes(ops):
    rng = np.random.default_rng(0)
    x = rng.integers(-5, 5, 1000).astype(np.int32)
    x[:128] = 1   # a block where every thread votes yes
    x[128:256] = -1   # and one where none does
    want = block_votes(x)
    assert set(want[:, 1]) == {0, 1} and set(want[:, 2]) == {0, 1}
    eager_and_jit(ops.block_votes, want, x)
    check_batched(ops.block_votes, block_votes, (x,), (x[::-1].copy(),))


def warp_functions(x):
    out = []
    for w in x.reshape(-1, 32).tolist():
        for lane in range(32):
            v = w[lane]
            half = range(0, 16) if lane < 16 else range(16, 32)
            out.append(as_int32([
                w[(lane * 5 + 3) % 32],
                w[lane // 8 * 8 + (lane + 1) % 8],
                w[lane - 3] if lane >= 3 else v,
                w[lane + 5] if lane % 16 + 5 < 16 else v,
                w[lane ^ 6],
                mask(u > 0 for u in w),
                any(u > 40 for u in w),
                all(u > -40 for u in w),
                sum(w),
                min(w),
                max(w),
                np.bitwise_and.reduce(np.array(w, np.int64) & 0xFFFFFFFF),
                np.bitwise_or.reduce(np.array(w, np.int64) & 0xFFFFFFFF),
                np.bitwise_xor.reduce(np.array(w, np.int64) & 0xFFFFFFFF),
                mask((u & 3) == (v & 3) for u in w),
                0xFFFFFFFF if len({u > 45 for u in w}) == 1 else 0,
                len({u > 45 for u in w}) == 1,
                0xFFFFFFFF,
                mask(j in half and w[j] > 0 for j in range(32)),
                sum(w[j] for j in half),
            ]))
    return np.array(out, np.int32)


def test_warp_functions(ops):
    rng = np.random.default_rng(1)
    x = rng.integers(-50, 51, 256).astype(np.int32)
    x[:32] = rng.integers(41, 51, 32)   # any(> 40) and all(> -40) hold
    x[32:64] = rng.integers(46, 51, 32)   # so does match_all(> 45)
    want = warp_functions(x)
    assert set(want[:, 6]) == {0, 1} and set(want[:, 7]) == {0, 1}
    assert set(want[:, 16]) == {0, 1}
    eager_and_jit(ops.warp_functions, want, x)
    check_batched(ops.warp_functions, warp_functions, (x,), (x[::-1].copy(),))


def tiles(x):
    out = []
    for r, v in enumerate(x.tolist()):
        rank = r % 64
        t = x[r - r % 8:r - r % 8 + 8].tolist()
        out.append([r % 8, rank // 8, 8, rank % 16, 16, 16, t[7 - r % 8],
                    t[r % 8 + 1] if r % 8 < 7 else v, t[(r % 8) ^ 3], sum(t), min(t),
                    max(t)])
    return np.array(out, np.int32)


def test_cooperative_groups_tiles(ops):
    x = np.random.default_rng(2).integers(-1000, 1000, 192).astype(np.int32)
    eager_and_jit(ops.tiles, tiles(x), x)
    check_batched(ops.tiles, tiles, (x,), (x[::-1].copy(),))


def shared_atomics(x):
    results = []
    for b in x.reshape(-1, 256):
        u = (b.astype(np.int64) & 0xFFFFFFFF)
        results.append(as_int32([
            int(b.sum()), -int(b.sum()), int(b.min()), int(b.max()),
            int(np.bitwise_and.reduce(u)), int(np.bitwise_or.reduce(u)),
            int(np.bitwise_xor.reduce(u)), int(b.sum()), 256 % 10, -256 % 10, 0]))
    return np.array(results, np.int32)


def test_shared_memory_atomics(ops):
    rng = np.random.default_rng(3)
    x = rng.integers(-1000, 1000, 6 * 256).astype(np.int32)
    for f in (ops.shared_atomics, jax.jit(ops.shared_atomics, static_argnums=1)):
        results, exchanged = (np.asarray(r) for r in f(x, 6))
        want = shared_atomics(x)
        # atomicExch: the last value written is the block's, and the values
        # replaced are -1 and every value but that one, once each.
        np.testing.assert_array_equal(results[:, :10], want[:, :10])
        for b in range(6):
            mine = x[256 * b:256 * (b + 1)]
            assert results[b, 10] in mine
            assert sorted(exchanged[256 * b:256 * (b + 1)].tolist() + [results[b, 10]]) \
                == sorted(mine.tolist() + [-1])


def test_global_atomics_across_concurrent_blocks(ops):
    # Integers in {-1, 0, 1}: every partial sum, in whatever order the
    # blocks add, is exact in float16.
    x = np.random.default_rng(4).integers(-1, 2, 100_000).astype(np.int32)
    start = (np.array([5, 7, -7, 0x100], np.int32), np.array([0.5], np.float32),
             np.array([0.25], np.float64), np.array([1.0], np.float16))
    total = int(x.sum())
    want = ([5 + total, min(7, x.min()), max(-7, x.max()), 0x100 | np.bitwise_or.reduce(x)],
            [0.5 + total], [0.25 + total], [1.0 + total])
    for f in (ops.global_atomics, jax.jit(ops.global_atomics)):
        got = f(x, *start)
        for g, w, s in zip(got, want, start):
            np.testing.assert_array_equal(np.asarray(g), np.array(w, s.dtype))


def test_hinted_loads_and_stores_fences_and_clock(ops):
    x = np.random.default_rng(5).standard_normal(1000).astype(np.float32)
    for f in (ops.hinted_copy, jax.jit(ops.hinted_copy)):
        y, clocks = f(x)
        np.testing.assert_array_equal(np.asarray(y), x)
        assert (np.asarray(clocks) >= 0).all()


def test_printf_from_kernels(ops, tmp_path):
    # stdio flushes when the process exits: run the op in one.
    program = (f"import sys; sys.path.insert(0, {str(ops.__file__.rsplit('/', 2)[0])!r})\n"
               "import numpy as np, block_intrinsics as k\n"
               "print(np.asarray(k.hello(5)).tolist(), flush=True)\n")
    r = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "[0, 1, 2, 3, 4]" in lines
    assert sorted(line for line in lines if line.startswith("hello")) == [
        f"hello from block {b} of 5" for b in range(5)]
