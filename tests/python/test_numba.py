"""kernelc.numba: Numba-CUDA-style Python kernels built into kernelc ops.
On the CPU against NumPy (eager, jit, vmap, grad through a declared
backward kernel, 2-D grids, atomics, shared arrays and barriers under the
block executor, the memoized compile), the generated package imported where
Numba is not, and the diagnostics for bad annotations, which name the .py
file and line."""

import os
import pathlib
import re
import subprocess
import sys
import textwrap
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import KERNELC, ROOT

pytest.importorskip("numba", reason="Numba is not installed in this "
                    "environment (tools/requirements.txt has it)")

# numba-cuda 0.30 makes a NumPy 2.5 deprecation warning on import, which
# these tests (conftest.py) would take as an error.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from numba import cuda  # noqa: E402

sys.path.insert(0, str(ROOT / "python"))
import kernelc  # noqa: E402
from kernelc import _compiler  # noqa: E402

sys.path.insert(0, str(ROOT / "examples"))
import numba_demo  # noqa: E402

sys.path.remove(str(ROOT / "examples"))
# The pairwise distance with a loop in each thread, on a 2-D grid.
pairwise_distance = numba_demo.pairwise_distance


@pytest.fixture(autouse=True, scope="module")
def development_compiler():
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_compiler, "BINARY", KERNELC)
        yield


@kernelc.numba(grid="out.size", block=128, parallel="n")
def scale(x: kernelc.In(np.float32, ("n",)), a: kernelc.Scalar(np.float32),
          out: kernelc.Out(np.float32, "x")):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a * x[i] + 1


@kernelc.numba(grid="n")
def square_bwd(x: kernelc.In(np.float64, ("n",)),
               d_y: kernelc.In(np.float64, ("n",)),
               d_x: kernelc.Out(np.float64, ("n",))):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < x.shape[0]:
        d_x[i] = 2 * x[i] * d_y[i]


@kernelc.numba(grid="n", vjp=square_bwd, elementwise=True)
def square(x: kernelc.In(np.float64, ("n",)),
           y: kernelc.Out(np.float64, ("n",))):
    i = cuda.grid(1)
    if i < x.shape[0]:
        y[i] = x[i] * x[i]


@kernelc.numba(grid="values.size")
def histogram(values: kernelc.In(np.int32, ("n",)),
              counts: kernelc.Out(np.int32, (16,), init=0)):
    i = cuda.grid(1)
    if i < values.shape[0]:
        cuda.atomic.add(counts, values[i] % 16, 1)


@kernelc.numba(grid="x.size")
def accumulate(x: kernelc.InMut(np.float32, ("n",)),
               total: kernelc.Out(np.float64, (1,), init=0.5)):
    i = cuda.grid(1)
    if i < x.shape[0]:
        cuda.atomic.add(total, 0, x[i])
        x[i] = -x[i]


@kernelc.numba(grid="k")
def iota(k: kernelc.Scalar(np.int64), out: kernelc.Out("f32", "k")):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = i


def test_an_output_sized_by_a_scalar():
    np.testing.assert_array_equal(np.asarray(iota(5)),
                                  np.arange(5, dtype=np.float32))


def test_eager_jit_and_vmap_against_numpy():
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    np.testing.assert_allclose(np.asarray(scale(x, 2.0)), 2 * x + 1,
                               rtol=1e-6)
    f = jax.jit(lambda x: scale(x, np.float32(-3)))
    np.testing.assert_allclose(np.asarray(f(x)), -3 * x + 1, rtol=1e-6)
    xs = x.reshape(4, 250)
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda r: scale(r, 0.5))(xs)),
                               0.5 * xs + 1, rtol=1e-6)


def test_grad_through_the_backward_kernel():
    x = np.linspace(-2, 2, 37)
    np.testing.assert_allclose(np.asarray(square(x)), x * x, rtol=1e-15)
    g = jax.jit(jax.grad(lambda x: jnp.sum(jnp.sin(square(x)))))(x)
    np.testing.assert_allclose(np.asarray(g), np.cos(x * x) * 2 * x,
                               rtol=1e-12)
    # The backward kernel is an ordinary op of the same package too.
    np.testing.assert_allclose(np.asarray(square_bwd(x, x)), 2 * x * x)
    gs = jax.vmap(jax.grad(lambda x: jnp.sum(square(x))))(x.reshape(1, 37))
    np.testing.assert_allclose(np.asarray(gs)[0], 2 * x, rtol=1e-15)


def test_two_dimensional_grid_with_a_loop():
    p = np.random.default_rng(1).standard_normal((45, 3))
    want = np.sqrt(((p[:, None, :] - p[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(np.asarray(jax.jit(pairwise_distance)(p)),
                               want, rtol=1e-12, atol=1e-12)


def test_atomics_and_in_place_updates():
    values = np.random.default_rng(2).integers(0, 1000, 5000, dtype=np.int32)
    np.testing.assert_array_equal(np.asarray(histogram(values)),
                                  np.bincount(values % 16, minlength=16))
    x = np.arange(300, dtype=np.float32)
    neg, total = accumulate(x)
    np.testing.assert_array_equal(np.asarray(neg), -x)
    assert float(total[0]) == 0.5 + x.astype(np.float64).sum()


def test_shapes_are_checked_at_trace_time():
    with pytest.raises(Exception, match="pairwise_distance"):
        pairwise_distance(np.zeros(5))


# Kernels with shared arrays and barriers, for each element type DTYPE:
# they run one thread per call under the block executor.
BLOCK_KERNELS = """\
@kernelc.numba(grid="n", block=TPB)
def block_sum(x: kernelc.In(DTYPE, ("n",)),
              sums: kernelc.Out(DTYPE, ("(n + 63) / 64",)),
              positive: kernelc.Out(np.int32, ("(n + 63) / 64", 3))):
    buf = cuda.shared.array(TPB, DTYPE)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    inside = i < x.shape[0]
    buf[t] = x[i] if inside else 0
    above = inside and x[i] > 0
    count = cuda.syncthreads_count(above)
    every = cuda.syncthreads_and(above)
    some = cuda.syncthreads_or(above)
    half = TPB // 2
    while half > 0:
        if t < half:
            buf[t] += buf[t + half]
        cuda.syncthreads()
        half //= 2
    if t == 0:
        b = cuda.blockIdx.x
        sums[b] = buf[0]
        positive[b, 0] = count
        positive[b, 1] = every
        positive[b, 2] = some


@kernelc.numba(grid=("c", "r"), block=(16, 16))
def transpose(a: kernelc.In(DTYPE, ("r", "c")),
              out: kernelc.Out(DTYPE, ("c", "r"))):
    tile = cuda.shared.array(shape=(16, 17), dtype=DTYPE)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * 16 + tx
    row = cuda.blockIdx.y * 16 + ty
    if row < a.shape[0] and col < a.shape[1]:
        tile[ty, tx] = a[row, col]
    cuda.syncthreads()
    row = cuda.blockIdx.x * 16 + ty
    col = cuda.blockIdx.y * 16 + tx
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = tile[tx, ty]


@kernelc.numba(grid="n", block=TPB)
def reverse_blocks(x: kernelc.In(DTYPE, ("n",)),
                   out: kernelc.Out(DTYPE, "x")):
    buf = cuda.shared.array(TPB, DTYPE)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i >= x.shape[0]:
        return  # the block's other threads pass the barrier without it
    buf[t] = x[i]
    cuda.syncthreads()
    count = min(TPB, x.shape[0] - cuda.blockIdx.x * TPB)
    out[i] = buf[count - 1 - t]
"""


def _kernels_from(source, path, **names):
    """Runs `source` as the file `path` with `names` among its globals;
    returns its globals."""
    path.write_text(source)
    namespace = {"kernelc": kernelc, "cuda": cuda, "np": np, **names}
    exec(compile(source, str(path), "exec"), namespace)
    return namespace


@pytest.fixture(scope="module", params=[np.float32, np.float64],
                ids=["float32", "float64"])
def block_ops(request, tmp_path_factory):
    dtype = np.dtype(request.param)
    names = _kernels_from(
        BLOCK_KERNELS,
        tmp_path_factory.mktemp("numba") / f"block_{dtype}.py",
        DTYPE=request.param, TPB=64)
    kernels = [names[k] for k in ("block_sum", "transpose",
                                  "reverse_blocks")]
    return dtype, kernelc.load_numba(kernels, name=f"numba_block_{dtype}")


def _tolerance(dtype):
    return {"rtol": 1e-5 if dtype == np.float32 else 1e-12}


def test_block_reduction_with_a_shared_array_and_barriers(block_ops):
    dtype, ops = block_ops
    x = np.random.default_rng(3).standard_normal(1000).astype(dtype)
    x[:64] = np.abs(x[:64]) + 1  # a block all positive
    x[64:128] = -np.abs(x[64:128])  # a block with none
    blocks = [x[i:i + 64] for i in range(0, x.size, 64)]
    want_sums = np.array([b.sum(dtype=np.float64) for b in blocks])
    want_flags = np.array([[(b > 0).sum(), (b > 0).all(), (b > 0).any()]
                           for b in blocks], dtype=np.int32)
    for f in (ops.block_sum, jax.jit(ops.block_sum)):
        sums, flags = f(x)
        assert sums.dtype == dtype
        np.testing.assert_allclose(np.asarray(sums), want_sums,
                                   **_tolerance(dtype))
        np.testing.assert_array_equal(np.asarray(flags), want_flags)
    xs = x[:960].reshape(3, 320)
    sums, flags = jax.vmap(ops.block_sum)(xs)
    np.testing.assert_allclose(
        np.asarray(sums), xs.reshape(3, 5, 64).sum(-1, dtype=np.float64),
        **_tolerance(dtype))
    np.testing.assert_array_equal(np.asarray(flags)[:, :, 0],
                                  (xs.reshape(3, 5, 64) > 0).sum(-1))


def test_shared_memory_transpose_and_reverse(block_ops):
    dtype, ops = block_ops
    rng = np.random.default_rng(4)
    a = rng.standard_normal((37, 50)).astype(dtype)
    for f in (ops.transpose, jax.jit(ops.transpose)):
        np.testing.assert_array_equal(np.asarray(f(a)), a.T)
    batch = rng.standard_normal((2, 20, 33)).astype(dtype)
    np.testing.assert_array_equal(np.asarray(jax.vmap(ops.transpose)(batch)),
                                  batch.transpose(0, 2, 1))
    # The last block is partial: its missing threads return early.
    x = np.arange(150, dtype=dtype)
    want = np.concatenate([x[i:i + 64][::-1] for i in range(0, 150, 64)])
    for f in (ops.reverse_blocks, jax.jit(ops.reverse_blocks)):
        np.testing.assert_array_equal(np.asarray(f(x)), want)
    xs = np.stack([x, -x])
    np.testing.assert_array_equal(
        np.asarray(jax.vmap(ops.reverse_blocks)(xs)), np.stack([want, -want]))


@kernelc.numba(grid="out.size", block=32)
def diverge(out: kernelc.Out(np.float32, (64,))):
    if cuda.threadIdx.x < 16:
        cuda.syncthreads()
    else:
        cuda.syncwarp()
    out[cuda.grid(1)] = 1


def test_divergent_barrier_is_an_error_naming_the_kernel():
    message = ("diverge: block (0, 0, 0): threads wait for each other: "
               "thread (0, 0, 0) waits at __syncthreads, and thread "
               "(16, 0, 0) waits in __syncwarp with mask 0xffffffff")
    for f in (diverge, jax.jit(diverge)):
        with pytest.raises(Exception, match=re.escape(message)):
            jax.block_until_ready(f())


@kernelc.numba(grid="x.size")
def window_sums(x: kernelc.In(np.float64, ("n",)),
                out: kernelc.Out(np.float64, "x")):
    i = cuda.grid(1)
    if i < x.shape[0]:
        window = cuda.local.array(3, np.float64)
        for k in range(3):
            window[k] = x[(i + k) % x.shape[0]] * (k + 1)
        out[i] = window[0] + window[1] + window[2]


def test_local_arrays_keep_the_vectorized_row_function():
    x = np.linspace(0, 1, 101)
    want = x + 2 * np.roll(x, -1) + 3 * np.roll(x, -2)
    np.testing.assert_allclose(np.asarray(window_sums(x)), want, rtol=1e-15)
    source = kernelc.numba_source([window_sums])
    assert "if (threadIdx.x != 0) return;" in source
    assert "__shared__" not in source and "_barrier" not in source


def test_the_numba_compile_is_memoized(tmp_path, monkeypatch):
    from kernelc import _numba_compile
    compiles = []
    compile_once = _numba_compile._compile

    def counted(spec, symbol):
        compiles.append(spec.name)
        return compile_once(spec, symbol)

    monkeypatch.setattr(_numba_compile, "_compile", counted)
    source = textwrap.dedent("""\
        def offset(x: kernelc.In(np.float32, ("n",)),
                   out: kernelc.Out(np.float32, "x")):
            i = cuda.grid(1)
            if i < x.shape[0]:
                out[i] = x[i] + SHIFT
        """)
    names = _kernels_from(source, tmp_path / "memo.py", SHIFT=2)
    first = kernelc.numba(grid="x.size")(names["offset"])
    second = kernelc.numba(grid="x.size", block=64)(names["offset"])
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(first(x)), x + 2)
    np.testing.assert_array_equal(
        np.asarray(kernelc.load_numba([second], name="numba_memo").offset(x)),
        x + 2)
    assert compiles == ["offset"]

    def assembly(kernel):
        source = kernelc.numba_source([kernel])
        return source[source.index("asm("):source.index(")kc_asm")]

    assert assembly(second) == assembly(first)
    # What the cache holds is what a compile gives.
    uncached = compile_once(first._spec, "kc_numba_offset").assembly
    assert assembly(first) == 'asm(R"kc_asm(\n' + uncached
    # A global the kernel reads is part of what it compiles to.
    names["SHIFT"] = 3
    third = kernelc.numba(grid="x.size")(names["offset"])
    np.testing.assert_array_equal(np.asarray(third(x)), x + 3)
    assert compiles == ["offset", "offset"]


def test_package_imports_where_numba_is_not(tmp_path):
    module = kernelc.load_numba([square, scale], name="numba_ops")
    package_dir = pathlib.Path(module.__kernelc_build__.package_dir)
    script = textwrap.dedent(f"""
        import sys
        sys.modules["numba"] = None
        sys.modules["llvmlite"] = None
        sys.path.insert(0, {str(package_dir.parent)!r})
        import jax
        import numpy as np
        jax.config.update("jax_enable_x64", True)
        import numba_ops
        print(np.asarray(numba_ops.square(np.arange(4.0))).tolist())
        """)
    run = subprocess.run([sys.executable, "-W", "error::DeprecationWarning",
                          "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[0.0, 1.0, 4.0, 9.0]"


def test_sharded_along_a_parallel_dimension():
    module = kernelc.load_numba([scale], name="numba_sharded")
    package_dir = pathlib.Path(module.__kernelc_build__.package_dir)
    script = textwrap.dedent(f"""
        import os, sys
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
        sys.path.insert(0, {str(package_dir.parent)!r})
        import jax
        import numpy as np
        from jax.sharding import NamedSharding, PartitionSpec
        import numba_sharded
        mesh = jax.make_mesh((4,), ("d",))
        x = np.arange(64, dtype=np.float32)
        xs = jax.device_put(x, NamedSharding(mesh, PartitionSpec("d")))
        f = jax.jit(lambda x: numba_sharded.scale(x, 2.0))
        np.testing.assert_array_equal(np.asarray(f(xs)), 2 * x + 1)
        hlo = f.lower(xs).compile().as_text()
        assert "all-gather" not in hlo and "all-to-all" not in hlo, hlo
        print(f(xs).sharding.spec == PartitionSpec("d"))
        """)
    run = subprocess.run([sys.executable, "-W", "error::DeprecationWarning",
                          "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True"


def _decorate(source, directory, target=None):
    """Runs `source` (a kernelc.numba kernel k) as the file bad_kernel.py
    and builds it (for `target`, else the decorator's); returns
    BuildError's text, the file named bad_kernel.py."""
    path = directory / "bad_kernel.py"
    path.write_text(textwrap.dedent(source))
    namespace = {"kernelc": kernelc, "cuda": cuda, "np": np}
    with pytest.raises(kernelc.BuildError) as e:
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        if target is None:
            namespace["k"].function()
        else:
            kernelc.load_numba([namespace["k"]], name="bad_kernel", target=target,
                               cache_dir=directory / "cache")
    return str(e.value).replace(str(path), "bad_kernel.py")


BAD = [
    ("""\
     @kernelc.numba(grid="out.size")
     def k(x: kernelc.In(np.float32, ("n", "m +")),
           out: kernelc.Out(np.float32, "x")):
         pass
     """, """\
     bad_kernel.py:2:43: error: in the shape of 'x': expected an expression
     def k(x: kernelc.In(np.float32, ("n", "m +")),
                                               ^
     """),
    ("""\
     @kernelc.numba(grid="outs.size")
     def k(x: kernelc.In(np.float32, ("n",)),
           out: kernelc.Out(np.float32, "x")):
         pass
     """, """\
     bad_kernel.py:1:22: error: in the grid of 'k': unknown name 'outs': not a parameter, and no input shape binds it
     @kernelc.numba(grid="outs.size")
                          ^
     """),
    ("""\
     @kernelc.numba(grid="out.size")
     def k(x: kernelc.In(np.complex64, ("n",)),
           out: kernelc.Out(np.float32, "x")):
         pass
     """, """\
     bad_kernel.py:2:7: error: parameter 'x': element type <class 'numpy.complex64'> is not one of bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64
     def k(x: kernelc.In(np.complex64, ("n",)),
           ^
     """),
    ("""\
     @kernelc.numba(grid="out.size")
     def k(x, out: kernelc.Out(np.float32, (4,))):
         pass
     """, """\
     bad_kernel.py:2:7: error: parameter 'x' of kernel 'k' needs an annotation: kernelc.In, kernelc.InMut, kernelc.Out or kernelc.Scalar
     def k(x, out: kernelc.Out(np.float32, (4,))):
           ^
     """),
    ("""\
     @kernelc.numba(grid="out.size")
     def k(out: kernelc.Out(np.float32, (4, 2.5))):
         pass
     """, """\
     bad_kernel.py:2:7: error: parameter 'out': dimension 2.5 of its shape is not an int, an expression string or None
     def k(out: kernelc.Out(np.float32, (4, 2.5))):
           ^
     """),
    ("""\
     @kernelc.numba(grid="out.size")
     def k(out: kernelc.Out(np.float32, (4,))):
         cuda.threadfence()
     """, """\
     bad_kernel.py:3:5: error: cuda.threadfence is not supported by kernelc.numba on the CPU (supported: cuda.grid, cuda.gridsize, cuda.threadIdx, cuda.blockIdx, cuda.blockDim, cuda.gridDim, cuda.atomic.add, cuda.shared.array, cuda.local.array, cuda.syncthreads, cuda.syncthreads_count, cuda.syncthreads_and, cuda.syncthreads_or, cuda.syncwarp)
         cuda.threadfence()
         ^
     """),
    ("""\
     @kernelc.numba(grid="out.size")
     def k(out: kernelc.Out(np.float32, (4,))):
         a = cuda.shared.array((64, 64), np.float64)
         b = cuda.shared.array(4100, np.float32)
     """, """\
     bad_kernel.py:4:9: error: kernel 'k': its shared arrays take 49168 bytes, more than the 49152 of static shared memory a block may have
         b = cuda.shared.array(4100, np.float32)
             ^
     """),
    ("""\
     @kernelc.numba(grid="out.size")
     def k(out: kernelc.Out(np.float32, (4,))):
         a = cuda.shared.array(out.shape[0], np.float32)
     """, """\
     bad_kernel.py:3:9: error: cuda.shared.array: 'out.shape[0]' is not a constant of the kernel's module (NameError: name 'out' is not defined)
         a = cuda.shared.array(out.shape[0], np.float32)
             ^
     """),
    ("""\
     @kernelc.numba(grid="out.size")
     def k(out: kernelc.Out(np.float32, (4,))):
         a = cuda.local.array((4, 0), np.complex64)
     """, """\
     bad_kernel.py:3:9: error: cuda.local.array: the shape is a positive int or a tuple of them, not (4, 0)
         a = cuda.local.array((4, 0), np.complex64)
             ^
     """),
]


@pytest.mark.parametrize("source, message", BAD)
def test_diagnostics_name_the_python_file_and_line(source, message,
                                                   tmp_path):
    text = _decorate(source, tmp_path)
    assert text.splitlines()[:3] == textwrap.dedent(message).splitlines()


@pytest.mark.parametrize("source, message", BAD[:2])
def test_cuda_builds_name_the_python_file_and_line(source, message, tmp_path):
    # The cuda target builds a spec of numba-cuda's PTX; a mistake in the
    # annotations is still placed in the kernel's .py file.
    pytest.importorskip("numba.cuda", reason="numba-cuda is not installed")
    text = _decorate(source, tmp_path, target="cuda")
    assert text.splitlines()[:3] == textwrap.dedent(message).splitlines()


def test_numba_demo_runs():
    env = dict(os.environ, KERNELC_COMPILER=str(KERNELC),
               PYTHONPATH=str(ROOT / "python"))
    run = subprocess.run([sys.executable, str(ROOT / "examples" /
                                              "numba_demo.py")],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 5 and all(" OK " in line for line in lines), lines


def test_source_is_deterministic_and_builds_with_the_command(tmp_path):
    # Numba's own names count the process's compilations: the source must
    # not depend on what the process compiled before.
    script = textwrap.dedent(f"""
        import sys, warnings
        warnings.simplefilter("ignore", DeprecationWarning)
        sys.path[:0] = [{str(ROOT / "python")!r}, {str(ROOT / "examples")!r}]
        import numba
        numba.njit(lambda v: v + 1)(1)
        import kernelc, numba_demo as d
        sys.stdout.write(kernelc.numba_source([d.add_one,
                                               d.pairwise_distance]))
        """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    source = kernelc.numba_source([numba_demo.add_one,
                                   numba_demo.pairwise_distance])
    assert source == run.stdout
    (tmp_path / "demo_ops.cu").write_text(source)
    subprocess.run([str(KERNELC), "build", "demo_ops.cu", "-o", "out", "-q"],
                   cwd=tmp_path, check=True)
    check = textwrap.dedent("""
        import sys
        sys.modules["numba"] = None
        sys.path.insert(0, "out")
        import jax
        import numpy as np
        jax.config.update("jax_enable_x64", True)
        import demo_ops
        p = np.array([[0.0, 0.0], [3.0, 4.0]])
        print(np.asarray(demo_ops.pairwise_distance(p)).tolist(),
              np.asarray(demo_ops.add_one(np.arange(3.0))).tolist())
        """)
    run = subprocess.run([sys.executable, "-c", check], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == ("[[0.0, 5.0], [5.0, 0.0]] "
                                  "[1.0, 2.0, 3.0]")


def test_api_errors():
    with pytest.raises(ValueError, match="Numba kernels build for 'cpu', "
                       "'cuda' or 'cpu,cuda'"):
        kernelc.numba(grid="n", target="gpu")
    with pytest.raises(TypeError, match="not a kernelc.numba kernel"):
        kernelc.numba_source([lambda: None])
    bad_vjp = kernelc.numba(grid="out.size", vjp=len)(scale.__wrapped__)
    with pytest.raises(TypeError, match="not a kernelc.numba kernel: "
                       "<built-in function len>"):
        bad_vjp.function()


def test_numba_s_own_errors_name_the_kernel(tmp_path):
    text = _decorate("""\
        @kernelc.numba(grid="out.size")
        def k(out: kernelc.Out(np.float32, (4,))):
            out[0] = undefined_name
        """, tmp_path)
    assert text.startswith(
        "bad_kernel.py:2:1: error: Numba cannot compile kernel 'k':\n"), text
    assert "undefined_name" in text, text

