"""The cuda target on a GPU: every example (polar and the in-place
accumulate under vmap too), every element type (bool, float16 and bfloat16
included), KC_INIT fills of every width, shared memory, 2-D grids, vmap batches folded
into the grid's z axis (nested, broadcast, longer than 65535), CPU/GPU
dispatch of one function, and a jitted loop of many calls that XLA must
capture into command buffers (CUDA graphs) when they are enabled. Checked
against NumPy eagerly, under jax.jit and under jax.vmap. Skipped, with the
reason, without a GPU."""

import json
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gpu_support import PACKAGES, gpu_device, package

jax.config.update("jax_enable_x64", True)

pytestmark = pytest.mark.gpu

BF16 = np.dtype(jnp.bfloat16)


@pytest.fixture(scope="module")
def gpu():
    return gpu_device()


@pytest.fixture(scope="module")
def ex(gpu):
    return package("gpu_examples")


@pytest.fixture(scope="module")
def dt(gpu):
    return package("gpu_dtypes")


@pytest.fixture(scope="module")
def feat(gpu):
    return package("gpu_features")


def on(gpu, *arrays):
    return [jax.device_put(a, gpu) for a in arrays]


def platform_of(x):
    return next(iter(x.devices())).platform


def rng(seed=0):
    return np.random.default_rng(seed)


def close(got, want, rtol=1e-6, atol=1e-6):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (
        got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got.astype(np.float64) if got.dtype in (
        np.float16, BF16) else got, want.astype(np.float64) if want.dtype in (
            np.float16, BF16) else want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("n", [0, 1, 255, 256, 257, 100_003])
def test_saxpy(gpu, ex, n):
    x = rng(1).standard_normal(n).astype(np.float32)
    y = rng(2).standard_normal(n).astype(np.float32)
    gx, gy = on(gpu, x, y)
    want = np.float32(2.5) * x + y
    out = ex.saxpy(gx, gy, 2.5)
    assert platform_of(out) == "gpu"
    close(out, want)
    close(jax.jit(ex.saxpy, static_argnums=2)(gx, gy, 2.5), want)


def test_saxpy_vmap(gpu, ex):
    xs = rng(3).standard_normal((5, 300)).astype(np.float32)
    y = rng(4).standard_normal(300).astype(np.float32)
    gxs, gy = on(gpu, xs, y)
    got = jax.jit(jax.vmap(lambda a: ex.saxpy(a, gy, -1.0)))(gxs)
    close(got, -xs + y)
    got = jax.vmap(ex.saxpy, in_axes=(1, None, None))(gxs.T, gy, 2.0)
    close(got, 2 * xs + y)


def test_polar_and_accumulate_vmap(gpu, ex):
    # polar runs once per batch element (one call, a launch each) with the
    # unbatched y broadcast; accumulate's in-place operand is broadcast to
    # the batch first and, where XLA does not alias it, copied on the device.
    xs = rng(17).standard_normal((4, 1000)).astype(np.float32)
    y = rng(18).standard_normal(1000).astype(np.float32)
    gxs, gy = on(gpu, xs, y)
    for f in (jax.vmap(ex.polar, in_axes=(0, None)),
              jax.jit(jax.vmap(ex.polar, in_axes=(0, None)))):
        r, a = f(gxs, gy)
        close(r, np.hypot(xs, y), rtol=1e-5)
        close(a, np.arctan2(y, xs), rtol=1e-5, atol=1e-6)
    r, a = jax.vmap(ex.polar, in_axes=(None, 0))(gy, gxs)
    close(r, np.hypot(y, xs), rtol=1e-5)
    for f in (jax.vmap(ex.accumulate, in_axes=(0, None)),
              jax.jit(jax.vmap(ex.accumulate, in_axes=(0, None)))):
        close(f(gxs, gy), xs + y)
    # The total unbatched, the deltas batched: one running total per delta.
    close(jax.vmap(ex.accumulate, in_axes=(None, 0))(gy, gxs), y + xs)
    # The inputs are unchanged: the in-place update went to new buffers.
    close(gxs, xs)
    close(gy, y)


def test_polar_and_accumulate(gpu, ex):
    x = rng(5).standard_normal(1000).astype(np.float32)
    y = rng(6).standard_normal(1000).astype(np.float32)
    gx, gy = on(gpu, x, y)
    r, a = jax.jit(ex.polar)(gx, gy)
    close(r, np.hypot(x, y), rtol=1e-5)
    close(a, np.arctan2(y, x), rtol=1e-5, atol=1e-6)
    close(jax.jit(ex.accumulate)(gx, gy), x + y)
    # In place under jit with donation: the update lands in the buffer.
    donated = jax.jit(ex.accumulate, donate_argnums=0)(jnp.array(gx), gy)
    close(donated, x + y)


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (17, 33, 65), (128, 64, 300)])
def test_matmul(gpu, ex, m, k, n):
    a = rng(7).standard_normal((m, k)).astype(np.float32)
    b = rng(8).standard_normal((k, n)).astype(np.float32)
    ga, gb = on(gpu, a, b)
    close(jax.jit(ex.matmul)(ga, gb), a @ b, rtol=1e-4, atol=1e-4)
    bs = rng(9).standard_normal((3, k, n)).astype(np.float32)
    close(jax.vmap(ex.matmul, in_axes=(None, 0))(ga, jax.device_put(bs, gpu)),
          np.einsum("mk,bkn->bmn", a, bs), rtol=1e-4, atol=1e-4)


def test_batch_fold_over_nested_vmaps_and_broadcasts(gpu, ex):
    """Two vmaps, one argument batched along only one of them: the batch of
    2 x 3 runs as one launch along the grid's z axis (kernelc/fold.h), each
    element at its offsets, the unbatched dimension broadcast."""
    a = rng(10).standard_normal((3, 20, 6)).astype(np.float32)
    b = rng(11).standard_normal((2, 3, 6, 17)).astype(np.float32)
    f = jax.vmap(jax.vmap(ex.matmul), in_axes=(None, 0))
    for g in (f, jax.jit(f)):
        close(g(*on(gpu, a, b)), np.einsum("jmk,ijkn->ijmn", a, b),
              rtol=1e-4, atol=1e-4)


def test_batch_fold_longer_than_the_grid_z_axis(gpu, ex):
    """A batch of 70000 runs as launches of at most 65535 along z."""
    x = rng(12).standard_normal((70000, 3)).astype(np.float32)
    y = rng(13).standard_normal(3).astype(np.float32)
    r, a = jax.jit(jax.vmap(ex.polar, in_axes=(0, None)))(*on(gpu, x, y))
    close(r, np.hypot(x, y), rtol=1e-5)
    close(a, np.arctan2(y, x), rtol=1e-5, atol=1e-6)


def test_one_function_dispatches_by_platform(gpu, ex):
    x = np.arange(10, dtype=np.float32)
    cpu_out = ex.saxpy(jax.device_put(x, jax.devices("cpu")[0]), x, 3.0)
    gpu_out = ex.saxpy(*on(gpu, x, x), 3.0)
    assert platform_of(cpu_out) == "cpu"
    assert platform_of(gpu_out) == "gpu"
    close(cpu_out, 4 * x)
    close(gpu_out, 4 * x)


INT = [("int8", np.int8), ("int16", np.int16), ("int32", np.int32),
       ("int64", np.int64), ("uint8", np.uint8), ("uint16", np.uint16),
       ("uint32", np.uint32), ("uint64", np.uint64)]
FLOAT = [("float32", np.float32), ("float64", np.float64)]


@pytest.mark.parametrize("name, dtype", INT + FLOAT, ids=[n for n, _ in INT + FLOAT])
def test_every_dtype(gpu, dt, name, dtype):
    n = 1001
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        x = rng(10).integers(info.min // 2, info.max // 2, n, dtype=dtype,
                             endpoint=True)
        y = rng(11).integers(info.min // 2, info.max // 2, n, dtype=dtype,
                             endpoint=True)
        s = dtype(3)
        with np.errstate(over="ignore"):
            want = (x + y + s).astype(dtype)
            want_y = (y + y + s).astype(dtype)
    else:
        x = rng(10).standard_normal(n).astype(dtype)
        y = rng(11).standard_normal(n).astype(dtype)
        s = dtype(0.5)
        want = x + y + s
        want_y = y + y + s
    fn = getattr(dt, f"add_{name}")
    gx, gy = on(gpu, x, y)
    close(fn(gx, gy, s), want)
    close(jax.jit(fn, static_argnums=2)(gx, gy, s), want)
    xs = np.stack([x, y])
    close(jax.vmap(lambda a: fn(a, gy, s))(jax.device_put(xs, gpu)),
          np.stack([want, want_y]))


@pytest.mark.parametrize("name, dtype", [("float16", np.float16),
                                         ("bfloat16", BF16)])
def test_half_types(gpu, dt, name, dtype):
    x = rng(12).standard_normal(777).astype(dtype)
    y = rng(13).standard_normal(777).astype(dtype)
    want = (x.astype(np.float32) + y.astype(np.float32)).astype(dtype)
    fn = getattr(dt, f"add_{name}")
    gx, gy = on(gpu, x, y)
    for out in (fn(gx, gy), jax.jit(fn)(gx, gy)):  # eagerly and jitted
        assert out.dtype == dtype and platform_of(out) == "gpu"
        np.testing.assert_array_equal(np.asarray(out).view(np.uint16),
                                      want.view(np.uint16))
    outs = jax.vmap(fn, in_axes=(0, None))(jax.device_put(np.stack([x, y]), gpu), gy)
    np.testing.assert_array_equal(np.asarray(outs[1]).view(np.uint16),
                                  (y.astype(np.float32) * 2).astype(dtype).view(np.uint16))


def test_bool(gpu, dt):
    x = rng(19).integers(0, 2, 1001).astype(bool)
    y = rng(20).integers(0, 2, 1001).astype(bool)
    gx, gy = on(gpu, x, y)
    for s in (False, True, np.bool_(True)):
        want = (x != y) != bool(s)
        out = dt.ne_bool(gx, gy, s)
        assert out.dtype == np.bool_ and platform_of(out) == "gpu"
        np.testing.assert_array_equal(np.asarray(out), want)
        np.testing.assert_array_equal(
            np.asarray(jax.jit(dt.ne_bool, static_argnums=2)(gx, gy, s)), want)
    xs = np.stack([x, ~x, np.zeros_like(x)])
    got = jax.vmap(lambda a: dt.ne_bool(a, gy, True))(jax.device_put(xs, gpu))
    np.testing.assert_array_equal(np.asarray(got),
                                  np.stack([(r != y) != True for r in xs]))  # noqa: E712


def test_init_fills_every_width(gpu, feat):
    n = 1000
    x = np.arange(n, dtype=np.float32)
    i8, i16, f16, f32, i64, f64 = jax.jit(feat.fills)(*on(gpu, x))
    even = np.arange(n) % 2 == 0
    def expect(fill, written, dtype):
        return np.where(even, written, fill).astype(dtype)
    np.testing.assert_array_equal(i8, expect(3, 0, np.int8))
    np.testing.assert_array_equal(i16, expect(-2, 0, np.int16))
    np.testing.assert_array_equal(f16, expect(1.5, x.astype(np.float16), np.float16))
    np.testing.assert_array_equal(f32, expect(2.25, x, np.float32))
    np.testing.assert_array_equal(i64, expect(-1, 0, np.int64))
    # 0.1's halves differ: the 64-bit fill kernel, not cuMemsetD32.
    np.testing.assert_array_equal(f64, expect(0.1, x.astype(np.float64), np.float64))


@pytest.mark.parametrize("rows, cols", [(1, 1), (3, 1000), (70, 257)])
def test_shared_memory_row_sum(gpu, feat, rows, cols):
    x = rng(14).standard_normal((rows, cols)).astype(np.float32)
    close(jax.jit(feat.row_sum)(*on(gpu, x)), x.sum(axis=1), rtol=1e-4, atol=1e-4)


def test_two_dimensional_grid(gpu, feat):
    m = rng(15).standard_normal((300, 70)).astype(np.float32)
    close(jax.jit(feat.transpose)(*on(gpu, m)), m.T)


def test_grid_limit_is_an_error_not_a_crash(gpu, feat):
    # 65536 * 8 rows need 65536 blocks along y: over CUDA's limit of 65535.
    m = jnp.zeros((65536 * 8, 1), jnp.float32, device=gpu)
    with pytest.raises(Exception, match="transpose: the grid needs 65536 "
                       "blocks along y, more than the limit of 65535"):
        jax.block_until_ready(jax.jit(feat.transpose)(m))


_LOOP = textwrap.dedent("""
    import glob, json, os, sys
    sys.path.insert(0, sys.argv[1])
    import jax, jax.numpy as jnp, numpy as np
    import gpu_features as feat
    import hlo_capture
    gpu = jax.devices("cuda")[0]
    x = jax.device_put(np.zeros(1000, np.float32), gpu)

    @jax.jit
    def unrolled(x):
        for _ in range(64):
            x = feat.add_one(x)
        return x

    @jax.jit
    def looped(x):
        return jax.lax.fori_loop(0, 1000, lambda i, x: feat.add_one(x), x)

    for _ in range(3):  # replays of the recorded graphs
        u = unrolled(x)
        l = looped(x)
    np.testing.assert_array_equal(np.asarray(u), np.full(1000, 64, np.float32))
    np.testing.assert_array_equal(np.asarray(l), np.full(1000, 1000, np.float32))
    # Where XLA put the op's custom calls, from the optimized HLO it dumped.
    dump = os.environ["KC_DUMP"]
    report = {}
    for name in ("unrolled", "looped"):
        files = glob.glob(os.path.join(
            dump, f"*jit_{name}*gpu_after_optimizations.txt"))
        texts = [open(f).read() for f in files]
        report[name] = hlo_capture.capture(texts, "gpu_features.add_one.")
    print("LOOP-OK " + json.dumps(report))
    """)


@pytest.mark.parametrize("enabled", [True, False],
                         ids=["command_buffers", "no_command_buffers"])
def test_jitted_loop_of_many_calls(gpu, feat, enabled, tmp_path):
    # With command buffers on, XLA outlines the op's custom calls (its
    # execute handler is marked command-buffer compatible) into a
    # `command_buffer` computation that a call runs as a CUDA graph; the
    # fori_loop's body, or the whole loop, likewise. Off, none is.
    flags = ("--xla_gpu_enable_command_buffer=+CUSTOM_CALL "
             "--xla_gpu_graph_min_graph_size=1" if enabled else
             "--xla_gpu_enable_command_buffer=")
    env = dict(os.environ, XLA_FLAGS=f"{flags} --xla_dump_to={tmp_path}",
               XLA_PYTHON_CLIENT_PREALLOCATE="false", KC_DUMP=str(tmp_path),
               PYTHONPATH=os.pathsep.join(
                   [os.path.dirname(__file__)] +
                   [p for p in [os.environ.get("PYTHONPATH")] if p]))
    p = subprocess.run([sys.executable, "-c", _LOOP, str(PACKAGES)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0 and "LOOP-OK " in p.stdout, p.stdout + p.stderr
    report = json.loads(p.stdout.split("LOOP-OK ", 1)[1].splitlines()[0])
    for name, (calls, captured) in report.items():
        assert calls > 0, f"no add_one custom call in the HLO of {name}"
        if enabled:
            assert captured == calls, (
                f"{name}: {captured} of {calls} add_one custom calls are in "
                "command buffers")
        else:
            assert captured == 0, report


@pytest.mark.parametrize("n", [1, 256, 1000])
def test_dynamic_shared_memory(gpu, feat, n):
    x = np.arange(n, dtype=np.float32)
    want = np.concatenate([x[i:i + 256][::-1] for i in range(0, n, 256)])
    close(jax.jit(feat.block_reverse)(*on(gpu, x)), want)


@pytest.mark.parametrize("words", [16, 16384])  # 64 B, and 64 KiB > 48 KiB
def test_dynamic_shared_memory_sized_by_a_scalar(gpu, feat, words):
    x = rng(16).standard_normal(3000).astype(np.float32)
    close(jax.jit(feat.big_shared, static_argnums=1)(*on(gpu, x), words), x + 1)


def test_intrinsics(gpu):
    import intrinsics_expect
    mod = package("gpu_intrinsics")
    a, b, u, f = intrinsics_expect.inputs()
    intrinsics_expect.check(mod, a, b, u, f, device=gpu)


@pytest.fixture(scope="module")
def ptx(gpu):
    return package("gpu_ptx")


def test_ptx_kernels_of_both_abis(gpu, ptx):
    x = rng().standard_normal(1000).astype(np.float32)
    (xd,) = on(gpu, x)
    close(ptx.scale(xd, s=3.0), 3 * x)
    close(ptx.scale_numba(xd, s=-0.5), -0.5 * x)


@pytest.fixture(scope="module")
def nb(gpu):
    if not (PACKAGES / "gpu_numba" / "__init__.py").exists():
        pytest.skip("gpu_numba was not prebuilt (no numba-cuda where "
                    "tools/prebuild_gpu.sh ran)")
    return package("gpu_numba")


def test_numba_kernels_on_the_gpu(gpu, nb):
    x = rng().standard_normal(1000).astype(np.float32)
    (xd,) = on(gpu, x)
    out, total = nb.axpy(xd, a=2.0)
    close(out, 2 * x)
    close(total, np.array([x.sum()], np.float32), rtol=1e-4, atol=1e-3)
    m = rng(1).standard_normal((7, 50)).astype(np.float32)
    (md,) = on(gpu, m)
    # Each block of 64 threads sums 64 elements, those past the end zero.
    flat = np.concatenate([m.ravel(), np.zeros(-m.size % 64, np.float32)])
    close(nb.block_sums(md), flat.reshape(-1, 64).sum(axis=1), rtol=1e-5,
          atol=1e-4)
