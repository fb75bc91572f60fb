"""kernelc.numba: Numba-CUDA-style Python kernels built into kernelc ops.
On the CPU against NumPy (eager, jit, vmap, grad through a declared
backward kernel, 2-D grids, atomics), the generated package imported where
Numba is not, and the diagnostics for bad annotations, which name the .py
file and line."""

import os
import pathlib
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


def _decorate(source, directory):
    """Runs `source` (a kernelc.numba kernel k) as the file bad_kernel.py
    and builds it; returns BuildError's text, the file named
    bad_kernel.py."""
    path = directory / "bad_kernel.py"
    path.write_text(textwrap.dedent(source))
    namespace = {"kernelc": kernelc, "cuda": cuda, "np": np}
    with pytest.raises(kernelc.BuildError) as e:
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        namespace["k"].function()
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
         cuda.syncthreads()
     """, """\
     bad_kernel.py:3:5: error: cuda.syncthreads is not supported by kernelc.numba on the CPU (supported: cuda.grid, cuda.gridsize, cuda.threadIdx, cuda.blockIdx, cuda.blockDim, cuda.gridDim, cuda.atomic.add)
         cuda.syncthreads()
         ^
     """),
]


@pytest.mark.parametrize("source, message", BAD)
def test_diagnostics_name_the_python_file_and_line(source, message,
                                                   tmp_path):
    text = _decorate(source, tmp_path)
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

