"""Guard elision on the CPU target: a kernel whose guard bounds its threads
by exactly its grid's total runs only the threads below the bound, with the
guard known to hold (guard_kernels.cu). Its results must be bit-identical
to NumPy's and to those of its twin whose guard kernelc cannot prove (every
thread of every block runs, and the guard), at sizes around the block's,
eagerly, under jax.jit and under jax.vmap; and a kernel that does something
before its guard keeps every thread."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import ROOT, run_kernelc

SOURCE = ROOT / "tests" / "python" / "guard_kernels.cu"
SIZES = [0, 1, 15, 16, 17, 255, 256, 257, 1024, (1 << 20) + 3]


@pytest.fixture(scope="module")
def ops(build_package):
    return build_package("guard_ops", sources=[SOURCE])


def data(n, dtype=np.float32, seed=0):
    return np.random.default_rng(seed + n).standard_normal(n).astype(dtype)


def test_inspect_records_the_guards():
    r = run_kernelc("inspect", SOURCE)
    assert r.returncode == 0, r.stderr
    guards = {k["name"]: k.get("grid_guard") for k in json.loads(r.stdout)["kernels"]}
    assert {name: g and (g["bound"], g["index"]) for name, g in guards.items()} == {
        "add_one": ("n", "int64"),
        "add_one_padded": ("n", "int64"),
        "saxpy": ("n", "int32"),
        "saxpy_padded": ("n", "int32"),
        "twice_plus": ("n", "uint64"),
        "where": ("n", "int64"),
        "where_96": ("n", "int64"),
        "count_threads": None,
    }


@pytest.mark.parametrize("n", SIZES)
def test_add_one_is_exact(ops, n):
    x = data(n)
    expected = x + np.float32(1)
    for run in (ops.add_one, jax.jit(ops.add_one), ops.add_one_padded):
        out = np.asarray(run(x))
        assert out.dtype == np.float32 and out.shape == (n,)
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("n", SIZES)
def test_saxpy_matches_its_padded_twin(ops, n):
    x, y = data(n), data(n, seed=1)
    a = np.float32(1.7)
    elided = np.asarray(ops.saxpy(x, y, a))
    padded = np.asarray(ops.saxpy_padded(x, y, a))
    assert elided.tobytes() == padded.tobytes()
    # One rounding (a fused multiply-add) or NumPy's two.
    np.testing.assert_allclose(elided, a * x + y, rtol=1e-6, atol=1e-6)
    # A power of two makes the product exact: then it is NumPy's to the bit.
    np.testing.assert_array_equal(np.asarray(ops.saxpy(x, y, np.float32(2))),
                                  np.float32(2) * x + y)


@pytest.mark.parametrize("n", SIZES)
def test_each_thread_sees_its_own_indices(ops, n):
    # Blocks of 256 run as one loop over every thread of the launch, blocks
    # of 96 one loop per block: both give each thread its blockIdx.x and
    # threadIdx.x.
    x = data(n)
    i = np.arange(n)
    for op, block in ((ops.where, 256), (ops.where_96, 96)):
        for run in (op, jax.jit(op)):
            out = np.asarray(run(x))
            assert out.dtype == np.int32
            np.testing.assert_array_equal(out, (i // block) * 1024 + i % block)


@pytest.mark.parametrize("n", [0, 1, 17, 257, 1024])
def test_vmap(ops, n):
    xs = np.stack([data(n, seed=s) for s in range(3)])
    np.testing.assert_array_equal(np.asarray(jax.vmap(ops.add_one)(xs)), xs + 1)
    xd = xs.astype(np.float64)
    yd = xd[::-1].copy()
    np.testing.assert_array_equal(np.asarray(jax.vmap(ops.twice_plus)(xd, yd)),
                                  2.0 * xd + yd)
    # A broadcast operand keeps the batch from folding.
    np.testing.assert_array_equal(
        np.asarray(jax.vmap(ops.twice_plus, in_axes=(0, None))(xd, yd[0])),
        2.0 * xd + yd[0])


def test_in_a_jitted_loop(ops):
    x = data(16)

    @jax.jit
    def loop(v):
        return jax.lax.fori_loop(0, 100, lambda _, u: ops.add_one(u), v)

    np.testing.assert_array_equal(np.asarray(loop(x)),
                                  np.asarray(jax.lax.fori_loop(
                                      0, 100, lambda _, u: u + jnp.float32(1), x)))


@pytest.mark.parametrize("n", [1, 15, 255, 256, 257, 1024])
def test_unproven_guard_runs_every_thread(ops, n):
    # 256 threads per block: the last block's padding runs too.
    count = np.asarray(ops.count_threads(data(n)))
    assert count.tolist() == [-(-n // 256) * 256]
