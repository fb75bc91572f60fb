"""Block-level CUDA kernels on the CPU target (the block executor): the
battery of runtime/testdata behind annotated kernels (block_kernels.cu),
each against NumPy eagerly, under jax.jit and under jax.vmap, in float32
and float64 (and 16-bit floats where the kernel computes in float); then
what a kernel's misuse of the block gives, and calls from several Python
threads at once. Public kernels as their projects write them (NVIDIA's CUDA
samples, llm.c) are tests/corpus (test_corpus.py; both use the checks of
numeric_checks.py); JAX's GPU tutorial's RMS norm is examples/rms_norm.cu
(test_rms_norm.py)."""

import concurrent.futures
import importlib
import shutil
import subprocess

import jax
import numpy as np
import pytest

from conftest import ROOT, run_kernelc
from numeric_checks import (DTYPES, SUM_TOLERANCE, block_sums, close, layernorm, random,
                            rng, softmax, three_ways)

HERE = ROOT / "tests" / "python"
SOURCES = [HERE / "block_kernels.cu"]


@pytest.fixture(scope="module")
def ops(build_package):
    return build_package("block_ops", sources=SOURCES)


# --- block reductions --------------------------------------------------------------

@pytest.mark.parametrize("kind", ["f32", "f64"])
@pytest.mark.parametrize("name, chunk", [("reduce_tree", 256), ("reduce_shuffle", 192),
                                         ("reduce_samples", 256)])
def test_block_reductions(ops, kind, name, chunk):
    blocks = 24
    inputs = [(random(100003, kind, seed),) for seed in range(3)]
    three_ways(getattr(ops, f"{name}_{kind}"), lambda x: block_sums(x, blocks, chunk),
               inputs, kind, static=(blocks,), tol=SUM_TOLERANCE[kind])


# --- scans ------------------------------------------------------------------------

def segment_cumsum(x, segment):
    x = np.asarray(x, np.float64)
    out = np.empty_like(x)
    for start in range(0, x.size, segment):
        out[start:start + segment] = np.cumsum(x[start:start + segment])
    return out


@pytest.mark.parametrize("kind", ["f32", "f64", "i32"])
def test_warp_and_block_scans(ops, kind):
    inputs = [((np.arange(3000) * (7 + s) % 11 - 5).astype(DTYPES[kind]),)
              for s in range(3)]
    three_ways(getattr(ops, f"warp_scan_{kind}"), lambda x: segment_cumsum(x, 32), inputs,
               kind)
    three_ways(getattr(ops, f"block_scan_{kind}"), lambda x: segment_cumsum(x, 512),
               inputs, kind)


# --- matrices -----------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["f32", "f64"])
def test_tiled_matmul(ops, kind):
    inputs = [(random((37, 53), kind, s), random((53, 45), kind, s + 10)) for s in range(3)]
    three_ways(getattr(ops, f"matmul_{kind}"),
               lambda a, b: a.astype(np.float64) @ b.astype(np.float64), inputs, kind)


@pytest.mark.parametrize("kind", ["f32", "f64", "f16"])
def test_shared_memory_transpose(ops, kind):
    inputs = [(random((70, 101), kind, s),) for s in range(3)]
    three_ways(getattr(ops, f"transpose_{kind}"), lambda x: x.T, inputs, kind)


# --- rows: softmax and layernorm -----------------------------------------------------

@pytest.mark.parametrize("kind", ["f32", "f64", "f16", "bf16"])
def test_softmax_rows(ops, kind):
    inputs = [(random((29, 300), kind, s, -4, 4),) for s in range(3)]
    three_ways(getattr(ops, f"softmax_{kind}"), softmax, inputs, kind)


@pytest.mark.parametrize("kind", ["f32", "f64"])
def test_layernorm_rows(ops, kind):
    inputs = [(random((13, 200), kind, s, -3, 3), random(200, kind, s + 5),
               random(200, kind, s + 9)) for s in range(3)]
    three_ways(getattr(ops, f"layernorm_{kind}"),
               lambda x, w, b: layernorm(x, w, b, 1e-5), inputs, kind, static=(1e-5,))


# --- atomics in shared memory: histograms ---------------------------------------------

def test_histogram_with_shared_atomics(ops):
    inputs = [(rng(s).integers(0, 256, 50000).astype(np.uint8),) for s in range(3)]
    three_ways(ops.histogram_u8, lambda d: np.bincount(d, minlength=256), inputs, "i32",
               static=(24,))


# --- cooperative groups --------------------------------------------------------------

@pytest.mark.parametrize("kind", ["f32", "f64"])
def test_tile_reduce_dot(ops, kind):
    inputs = [(random(7777, kind, s), random(7777, kind, s + 3)) for s in range(3)]
    three_ways(getattr(ops, f"dot_{kind}"),
               lambda a, b: np.dot(a.astype(np.float64), b.astype(np.float64)), inputs,
               kind, static=(8,), tol=SUM_TOLERANCE[kind])


def test_warp_aggregated_filter(ops):
    # The order of the compacted elements depends on which warp gets there
    # first; the set of them does not.
    for x in (random(1000, "f32", 1), random(1000, "f32", 2)):
        for f in (ops.filter_positive_f32, jax.jit(ops.filter_positive_f32)):
            out, count = f(x)
            count = int(count)
            assert count == int((x > 0).sum())
            np.testing.assert_array_equal(np.sort(np.asarray(out)[:count]),
                                          np.sort(x[x > 0]))
            assert not np.asarray(out)[count:].any()


# --- dynamic shared memory ----------------------------------------------------------------

@pytest.mark.parametrize("kind", ["f32", "f64"])
def test_dynamic_shared_memory(ops, kind):
    def reverse_blocks(x):
        return np.concatenate([x[i:i + 96][::-1] for i in range(0, x.size, 96)])

    inputs = [(random(1000, kind, s),) for s in range(3)]
    three_ways(getattr(ops, f"reverse_blocks_{kind}"), reverse_blocks, inputs, kind)


# --- several Python threads at once -----------------------------------------------------

def test_concurrent_calls_from_python_threads(ops):
    # Each call splits its grid over XLA's pool too: blocks of different
    # calls run at once on the pool's threads, each with its own executor.
    x = random((64, 300), "f32", 7, -4, 4)
    a, b = random((96, 80), "f64", 8), random((80, 72), "f64", 9)
    calls = [
        (jax.jit(ops.softmax_f32), (x,), softmax(x), "f32"),
        (jax.jit(ops.matmul_f64), (a, b), a @ b, "f64"),
        (jax.jit(lambda v: ops.block_scan_i32(v)), (np.arange(5000, dtype=np.int32) % 7,),
         segment_cumsum(np.arange(5000) % 7, 512), "i32"),
    ]
    for f, args, _, _ in calls:
        jax.block_until_ready(f(*args))   # compiled once, outside the threads

    def run(i):
        f, args, want, kind = calls[i % len(calls)]
        for _ in range(5):
            close(f(*args), want, kind)
        return i

    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        assert sorted(pool.map(run, range(12))) == list(range(12))


# --- misuse and limits -------------------------------------------------------------------

LIMITS = r"""
#include <kernelc.h>

// Lanes 0-15 of each warp wait at the block's barrier, lanes 16-31 in a
// warp barrier that names all 32: neither can complete.
KC_GRID("n") KC_BLOCK(64)
__global__ void diverge(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  if (threadIdx.x % 32 < 16) {
    __syncthreads();
  } else {
    __syncwarp();
  }
  y[blockIdx.x * 64 + threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
}

// As much dynamic shared memory as the caller asks for.
KC_GRID("32") KC_BLOCK(32) KC_SHARED_BYTES("bytes")
__global__ void stage(KC_IN("32") const float* x, int64_t bytes,
                      KC_OUT("32") float* y) {
  extern __shared__ float staged[];
  staged[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  y[threadIdx.x] = staged[31 - threadIdx.x];
}

// The largest block, 1024 threads, summing through shared memory.
KC_GRID("1024") KC_BLOCK(1024)
__global__ void sum1024(KC_IN("1024") const int32_t* x, KC_OUT("") int32_t* total) {
  __shared__ int32_t s[1024];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  for (unsigned half = 512; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *total = s[0];
}
"""


@pytest.fixture(scope="module")
def limits(build_package):
    return build_package("block_limits", LIMITS)


def test_divergent_barrier_is_an_error_naming_the_kernel(limits):
    x = np.arange(128, dtype=np.float32)
    message = ("diverge: block (0, 0, 0): threads wait for each other: thread (0, 0, 0) "
               "waits at __syncthreads, and thread (16, 0, 0) waits in __syncwarp with "
               "mask 0xffffffff; a barrier waits for every thread of the block that has "
               "not returned, a warp function for every lane it names that has not "
               "returned, each making the same call")
    for f in (limits.diverge, jax.jit(limits.diverge)):
        with pytest.raises(Exception, match="INTERNAL: " + _re(message)):
            jax.block_until_ready(f(x))
    # The package, and the threads that ran the failed blocks, go on.
    np.testing.assert_array_equal(np.asarray(limits.stage(x[:32], 128)), x[:32][::-1])


def test_shared_memory_over_the_limit_is_an_error(limits):
    x = np.arange(32, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(limits.stage(x, 227 * 1024)), x[::-1])
    with pytest.raises(Exception, match=_re(
            "stage: 232449 bytes of dynamic shared memory per block is more than the "
            "CPU target's limit of 232448")):
        jax.block_until_ready(limits.stage(x, 227 * 1024 + 1))
    with pytest.raises(Exception, match=_re(
            "stage: dynamic shared memory of -4 bytes is out of range")):
        jax.block_until_ready(limits.stage(x, -4))


def test_a_block_of_1024_threads(limits):
    x = np.arange(1024, dtype=np.int32)
    assert int(limits.sum1024(x)) == x.sum()
    assert [int(t) for t in jax.vmap(limits.sum1024)(np.stack([x, 2 * x]))] == [
        x.sum(), 2 * x.sum()]


def test_a_block_over_1024_threads_does_not_build(tmp_path):
    src = tmp_path / "big.cu"
    src.write_text("""#include <kernelc.h>
KC_GRID("n", "n") KC_BLOCK(64, 32)
__global__ void big(KC_IN("n, n") const float* x, KC_OUT("x") float* y) {
  __syncthreads();
}
""")
    r = run_kernelc("build", src, "-o", tmp_path / "out")
    assert r.returncode == 1
    assert ("error: KC_BLOCK of kernel 'big' asks for 2048 threads per block; at most "
            "1024 are allowed") in r.stderr, r.stderr


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ on PATH")
def test_block_kernels_built_by_gxx(tmp_path, monkeypatch):
    # A $KERNELC_CXX that is not Clang compiles the kernels and the executor
    # without Clang's own flags.
    monkeypatch.setenv("KERNELC_CXX", "g++")
    ops = _build(tmp_path, monkeypatch, LIMITS, "gxx_blocks")
    x = np.arange(1024, dtype=np.int32)
    assert int(jax.jit(ops.sum1024)(x)) == x.sum()


def _build(tmp_path, monkeypatch, source, name):
    """Builds `source` into package `name` without the cache; imports it."""
    src = tmp_path / f"{name}.cu"
    src.write_text(source)
    r = run_kernelc("build", src, "-o", tmp_path / "out", "--name", name, "--no-cache")
    assert r.returncode == 0, r.stderr
    monkeypatch.syspath_prepend(str(tmp_path / "out"))
    return importlib.import_module(name)


def _re(text):
    import re
    return re.escape(text)


RESUMABLE = """#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <kernelc.h>

namespace cg = cooperative_groups;

// Its barriers are its own once its helper is inlined: a resumable thread.
__device__ float block_total(float v, float* slots) {
  slots[threadIdx.x] = v;
  __syncthreads();
  float total = 0.0f;
  for (int i = 0; i < 64; ++i) total += slots[i];
  __syncthreads();
  return total;
}

// Its barrier is in a function kept out of line: a fiber.
__device__ __noinline__ float apart(float v, float* slots) {
  return block_total(v, slots);
}

KC_GRID("n") KC_BLOCK(64)
__global__ void inlined(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  __shared__ float slots[64];
  const int i = blockIdx.x * 64 + threadIdx.x;
  y[i] = x[i] / block_total(x[i], slots);
}

// Half the warp returns before the other half's reduce completes, which the
// last lane to return then completes, with a waiting lane's operator: an
// object in that lane's frame, which must outlive its suspension.
KC_GRID("n") KC_BLOCK(32)
__global__ void half_reduce(KC_IN("n") const float* x, float scale,
                            KC_OUT("x") float* y) {
  const int i = blockIdx.x * 32 + threadIdx.x;
  y[i] = 0.0f;
  if (threadIdx.x >= 16) return;
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  y[i] = cg::reduce(warp, x[i], [scale](float a, float b) { return a + scale * b; });
}

// Barriers only: its blocks run in rounds. Threads leave before the first
// barrier, between the two, and after both.
KC_GRID("n") KC_BLOCK(64)
__global__ void early(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  const int i = blockIdx.x * 64 + threadIdx.x;
  y[i] = -1.0f;
  if (threadIdx.x >= 48) return;
  const int big = __syncthreads_count(x[i] > 100.0f);
  if (threadIdx.x >= 32) {
    y[i] = big;
    return;
  }
  const int some = __syncthreads_or(x[i] > 150.0f);
  // Over the 32 threads that have not returned.
  y[i] = 4 * big + 2 * some + __syncthreads_and(x[i] > 40.0f);
}

// Thread 0 polls shared memory, backing off with __nanosleep, for what the
// last thread, in another warp, writes: the yield lets that warp run.
KC_GRID("n") KC_BLOCK(64)
__global__ void poll(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  __shared__ volatile float box;
  __shared__ volatile int full;
  const int i = blockIdx.x * 64 + threadIdx.x;
  if (threadIdx.x == 0) full = 0;
  __syncthreads();
  y[i] = x[i];
  if (threadIdx.x == 63) {
    box = x[i];
    __threadfence_block();
    full = 1;
  }
  if (threadIdx.x == 0) {
    while (!full) __nanosleep(100);
    y[i] = box;
  }
}

KC_GRID("n") KC_BLOCK(64)
__global__ void out_of_line(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  __shared__ float slots[64];
  const int i = blockIdx.x * 64 + threadIdx.x;
  y[i] = x[i] / apart(x[i], slots);
}
"""


@pytest.mark.skipif(shutil.which("nm") is None or shutil.which("objdump") is None,
                    reason="no nm or objdump on PATH")
def test_threads_are_resumable_where_their_waits_are_their_own(tmp_path, monkeypatch):
    ops = _build(tmp_path, monkeypatch, RESUMABLE, "resumable_ops")
    x = np.arange(1, 257, dtype=np.float32)
    want = x / np.repeat(x.reshape(4, 64).sum(axis=1), 64)
    for kernel in (ops.inlined, ops.out_of_line):
        np.testing.assert_allclose(np.asarray(jax.jit(kernel)(x)), want, rtol=1e-6)
    # Lanes 0 to 15 fold in lane order; the others return 0.
    warps = x.reshape(-1, 32)
    folded = warps[:, 0].copy()
    for lane in range(1, 16):
        folded = folded + np.float32(0.5) * warps[:, lane]
    want = np.zeros_like(warps)
    want[:, :16] = folded[:, None]
    np.testing.assert_allclose(np.asarray(jax.jit(lambda v: ops.half_reduce(v, 0.5))(x)),
                               want.reshape(-1), rtol=1e-6)
    blocks = x.reshape(4, 64)
    big = (blocks[:, :48] > 100).sum(axis=1)
    want = np.full_like(blocks, -1.0)
    want[:, 32:48] = big[:, None]
    stay = blocks[:, :32]
    want[:, :32] = (4 * big + 2 * (stay > 150).any(axis=1) + (stay > 40).all(axis=1))[:, None]
    np.testing.assert_array_equal(np.asarray(jax.jit(ops.early)(x)), want.reshape(-1))
    want = blocks.copy()
    want[:, 0] = blocks[:, 63]
    np.testing.assert_array_equal(np.asarray(jax.jit(ops.poll)(x)), want.reshape(-1))
    library, = (tmp_path / "out" / "resumable_ops").glob("*.so")
    symbols = subprocess.run(["nm", library], capture_output=True, text=True,
                             check=True).stdout
    # Each resumable thread's step function, named after its entry; threads
    # that wait at barriers and warp functions only become loops over a
    # block's threads, a round function (and its x86-64-v3 copy) each.
    kernels = ("inlined", "half_reduce", "early", "poll", "out_of_line")

    def named(suffix):
        return {name for name in kernels
                if any(f"kc_resumable_ops_{name}_" in line and line.endswith(suffix)
                       for line in symbols.splitlines())}
    assert named(".step") == {"poll"}
    assert named(".round") == {"inlined", "half_reduce", "early"}
    assert named(".round.x86_64_v3") == {"inlined", "half_reduce", "early"}
    code = subprocess.run(["objdump", "-d", library], capture_output=True, text=True,
                          check=True).stdout
    loops = {name for name in kernels for function in code.split("\n\n")
             if f"kc_resumable_ops_{name}_" in function.split("\n", 1)[0]
             and "<kc_host_run_thread_loops>" in function}
    assert loops == {"inlined", "half_reduce", "early"}


LOOPS = """#include <kernelc.h>
// A scan through shared memory in a block of 8 x 4 x 2 threads: the loop
// over the steps crosses both barriers; every thread takes every step.
KC_BLOCKS("n / 64", "1", "1") KC_BLOCK(8, 4, 2)
__global__ void scan3d(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  __shared__ float buf[64];
  const int l = (threadIdx.z * 4 + threadIdx.y) * 8 + threadIdx.x;
  const int i = blockIdx.x * 64 + l;
  float v = x[i];
  for (int s = 1; s < 64; s *= 2) {
    buf[l] = v;
    __syncthreads();
    if (l >= s) v += buf[l - s];
    __syncthreads();
  }
  y[i] = v;
}

// Blocks of 48 threads, of which the last 8 return at once; the others
// take `steps` steps, a number the kernel's argument sets, each between
// barriers that only they reach.
KC_BLOCKS("n / 40") KC_BLOCK(48)
__global__ void ragged(KC_IN("n") const float* x, int steps,
                       KC_OUT("x") float* y) {
  __shared__ float acc[48];
  const int t = threadIdx.x;
  if (t >= 40) return;
  const int i = blockIdx.x * 40 + t;
  float v = x[i];
  for (int s = 0; s < steps; ++s) {
    acc[t] = v;
    __syncthreads();
    v += 0.5f * acc[(t + 1 + s) % 40];
    __syncthreads();
  }
  y[i] = v;
}

// A function left out of line reads threadIdx: each thread's own.
__device__ __noinline__ float weighed(float v) { return v * (threadIdx.x + 1); }

KC_BLOCKS("n / 32") KC_BLOCK(32)
__global__ void helper(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  __shared__ float buf[32];
  const int t = threadIdx.x;
  const int i = blockIdx.x * 32 + t;
  buf[t] = weighed(x[i]);
  __syncthreads();
  y[i] = buf[31 - t] + weighed(1.0f);
}

// Warps at different shuffles in one round, a partial last warp whose
// lanes past 40 have returned, and a mask that names lanes that have.
KC_BLOCKS("n / 40") KC_BLOCK(48)
__global__ void lanes(KC_IN("n") const float* x, KC_OUT("x") float* y) {
  __shared__ float buf[40];
  const int t = threadIdx.x;
  if (t >= 40) return;
  const int i = blockIdx.x * 40 + t;
  float v = x[i];
  if (t < 32) v += __shfl_down_sync(0xffffffffu, v, 1);
  v += __shfl_xor_sync(t < 32 ? 0xffffffffu : 0xffffu, v, 1);
  buf[t] = v;
  __syncthreads();
  y[i] = buf[(t + 1) % 40];
}

KC_BLOCKS("1") KC_BLOCK(32)
__global__ void own_lane(KC_IN("32") const float* x, KC_OUT("x") float* y) {
  y[threadIdx.x] = __shfl_sync(0x1u, x[threadIdx.x], 0);
}
"""


@pytest.mark.skipif(shutil.which("nm") is None, reason="no nm on PATH")
def test_barrier_threads_run_as_loops(tmp_path, monkeypatch):
    ops = _build(tmp_path, monkeypatch, LOOPS, "loop_ops")
    library, = (tmp_path / "out" / "loop_ops").glob("*.so")
    symbols = subprocess.run(["nm", library], capture_output=True, text=True,
                             check=True).stdout
    for name in ("scan3d", "ragged", "helper", "lanes"):
        assert any(f"kc_loop_ops_{name}_" in line and line.endswith(".round")
                   for line in symbols.splitlines()), name
    x = np.random.default_rng(7).standard_normal(64 * 5).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jax.jit(ops.scan3d)(x)),
                               np.cumsum(x.reshape(5, 64), axis=1).reshape(-1),
                               rtol=1e-5, atol=1e-5)
    x = x[:40 * 6]
    for steps in (0, 1, 5):
        want = x.reshape(6, 40).copy()
        for s in range(steps):
            want = want + np.float32(0.5) * np.roll(want, -(1 + s), axis=1)
        got = np.asarray(jax.jit(lambda v, s=steps: ops.ragged(v, s))(x))
        np.testing.assert_allclose(got, want.reshape(-1), rtol=1e-5, atol=1e-5)
    x = x[:32 * 3].reshape(3, 32)
    lanes = np.arange(32, dtype=np.float32)
    want = x[:, ::-1] * (32 - lanes) + (lanes + 1)
    np.testing.assert_allclose(np.asarray(ops.helper(x.reshape(-1))), want.reshape(-1),
                               rtol=1e-6)
    x = np.random.default_rng(8).standard_normal(40 * 4).astype(np.float32)
    v = x.reshape(4, 40).copy()
    v[:, :31] += v[:, 1:32]
    v[:, 31] += v[:, 31]
    v = v + v[:, np.arange(40) ^ 1]
    np.testing.assert_allclose(np.asarray(jax.jit(ops.lanes)(x)),
                               np.roll(v, -1, axis=1).reshape(-1), rtol=1e-5, atol=1e-6)
    with pytest.raises(Exception, match=_re(
            "own_lane: block (0, 0, 0): thread (1, 0, 0) calls __shfl_sync with mask "
            "0x00000001, which does not name its own lane 1")):
        jax.block_until_ready(ops.own_lane(x[:32]))
