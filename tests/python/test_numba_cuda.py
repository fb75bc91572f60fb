"""kernelc.numba's CUDA path without a GPU: numba-cuda's PTX of Numba
kernels (tests/gpu/kernels/numba_kernels.py: arrays, a scalar, the thread
indices, an atomic, a shared array and a barrier) goes through `kernelc
build --target cuda` for sm_80 and sm_90, the package imports where Numba
is not, and the fake-CUDA tier (test_cuda_handlers.py) launches the
kernels with the parameter block of the numba ABI. The kernels run on a
GPU in tests/gpu."""

import json
import pathlib
import subprocess
import sys
import textwrap
import warnings
import zipfile

import numpy as np
import pytest

from conftest import KERNELC, ROOT
from cuda_tools import needs_ptxas
from fake_cuda_tier import Tier, arg, attr, f32_bits, ret

numba = pytest.importorskip("numba", reason="Numba is not installed in this "
                            "environment (tools/requirements.txt has it)")
sys.path.insert(0, str(ROOT / "python"))
import kernelc  # noqa: E402
from kernelc import _compiler, _numba_ptx  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "gpu" / "kernels"))
from numba_kernels import axpy, block_sums  # noqa: E402

sys.path.remove(str(ROOT / "tests" / "gpu" / "kernels"))

def _numba_cuda_problem():
    """Why numba-cuda cannot compile PTX here, or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from numba.cuda.cudadrv import nvvm
            nvvm.NVVM()
    except Exception as e:  # noqa: BLE001 (any reason skips, and says so)
        return f"numba-cuda cannot compile PTX here: {e}"
    return None


needs_numba_cuda = pytest.mark.skipif(_numba_cuda_problem() is not None,
                                      reason=str(_numba_cuda_problem()))


@pytest.fixture(autouse=True, scope="module")
def development_compiler():
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_compiler, "BINARY", KERNELC)
        yield


@pytest.fixture(scope="module")
def numba_spec(tmp_path_factory):
    """The spec, PTX and all, that kernelc.numba builds for CUDA."""
    if _numba_cuda_problem():
        pytest.skip(_numba_cuda_problem())
    directory = tmp_path_factory.mktemp("numba_cuda")
    files = _numba_ptx.spec_files([axpy, block_sums], cc=(8, 0), cpu=False)
    for name, text in files.items():
        (directory / name).write_text(text)
    return directory


@needs_numba_cuda
def test_numba_cuda_gives_ptx_of_the_numba_abi(numba_spec):
    spec = json.loads((numba_spec / "spec.json").read_text())
    kernels = {k["name"]: k for k in spec["kernels"]}
    assert kernels["axpy"]["ptx"]["abi"] == "numba"
    axpy_ptx = (numba_spec / "axpy.ptx").read_text()
    sums_ptx = (numba_spec / "block_sums.ptx").read_text()
    assert ".target sm_80" in axpy_ptx
    assert "atom.global.add.f32" in axpy_ptx or "red.global.add.f32" in \
        axpy_ptx
    assert "%tid.x" in axpy_ptx and "%ctaid.x" in axpy_ptx
    assert ".shared" in sums_ptx and "bar.sync" in sums_ptx


@needs_numba_cuda
def test_spec_places_the_annotations_in_the_py_file(numba_spec):
    # Each name and text of the spec is placed in numba_kernels.py, whose
    # lines the spec quotes under "origins" for kernelc's diagnostics.
    spec = json.loads((numba_spec / "spec.json").read_text())
    [(path, origin)] = spec["origins"].items()
    assert pathlib.Path(path) == ROOT / "tests/gpu/kernels/numba_kernels.py"

    def quoted(place):
        file, line, column = place["loc"].rsplit(":", 2)
        assert file == path
        text = origin["lines"][int(line) - origin["first_line"]]
        return text[int(column) - 1:]

    axpy, block_sums = spec["kernels"]
    assert quoted(axpy).startswith("axpy(x: kernelc.In(")
    assert quoted(axpy["grid"][0]) == 'out.size", block=128)'
    assert quoted(axpy["params"][1]).startswith("a: kernelc.Scalar(")
    assert quoted(axpy["params"][3]["init"]).startswith("total: ")
    sums = block_sums["params"][1]["shape"]
    assert sums["text"] == "(n * m + 63) / 64"
    assert quoted(sums) == '(n * m + 63) / 64",))):'


@needs_ptxas
@needs_numba_cuda
def test_numba_kernels_build_for_cuda_and_import_without_numba(tmp_path):
    module = kernelc.load_numba([axpy, block_sums], name="numba_cuda_ops",
                                target="cuda", cuda_arch="sm_80,sm_90",
                                cache_dir=tmp_path / "cache")
    package_dir = pathlib.Path(module.__kernelc_build__.package_dir)
    manifest = json.loads((package_dir / "kernelc.json").read_text())
    assert manifest["cuda"]["archs"] == ["sm_80", "sm_90"]
    for b in manifest["cuda"]["binaries"]:
        assert [i["arch"] for i in b["images"]] == ["sm_80", "sm_90",
                                                   "compute_80"]
    script = textwrap.dedent(f"""
        import sys
        sys.modules["numba"] = None
        sys.modules["llvmlite"] = None
        sys.path.insert(0, {str(package_dir.parent)!r})
        import numba_cuda_ops
        print(callable(numba_cuda_ops.axpy),
              callable(numba_cuda_ops.block_sums))
        """)
    run = subprocess.run([sys.executable, "-W", "error::DeprecationWarning",
                          "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True True"


@needs_ptxas
@needs_numba_cuda
def test_written_build_files_wheel_with_the_command(tmp_path):
    # write_numba gives what `kernelc wheel` takes; the wheel's package is
    # the one load_numba builds, without Numba in the build.
    spec = kernelc.write_numba([axpy, block_sums], tmp_path / "src",
                               target="cpu,cuda", cuda_arch="sm_80")
    assert spec == tmp_path / "src" / "spec.json"
    assert sorted(p.name for p in spec.parent.iterdir()) == [
        "axpy.ptx", "block_sums.ptx", "kernels.cu", "spec.json"]
    r = subprocess.run([str(KERNELC), "wheel", str(spec), "--name", "numba_wheel",
                        "--target", "cpu,cuda", "--cuda-arch", "sm_80", "-o",
                        str(tmp_path / "dist")],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (wheel,) = (tmp_path / "dist").glob("numba_wheel-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        manifest = json.loads(z.read("numba_wheel/kernelc.json"))
    assert any(n.startswith("numba_wheel/") and n.endswith(".so") for n in names)
    assert [k["name"] for k in manifest["kernels"]] == ["axpy", "block_sums"]
    assert manifest["targets"] == ["cpu", "cuda"]
    assert kernelc.write_numba([axpy], tmp_path / "cpu") == tmp_path / "cpu" / "kernels.cu"
    assert (tmp_path / "cpu" / "kernels.cu").read_text() == kernelc.numba_source([axpy])


@needs_ptxas
@needs_numba_cuda
def test_fake_driver_launches_numba_kernels_with_their_arrays(
        numba_spec, tmp_path):
    tier = Tier(tmp_path, sources=[numba_spec / "spec.json"])
    n, x, out, total = 300, 0x100000, 0x300000, 0x400000
    call = [arg("f32", x, n), attr("a", "f32", 2.0), ret("f32", out, n),
            ret("f32", total, 1)]
    init, run = tier.run(tier.call("initialize", "axpy", *call),
                         tier.call("execute", "axpy", *call))
    assert init.ok, init.message
    assert run.ok, run.message
    (launch,) = run.launches()
    assert launch.name == tier.lowered["axpy"]
    assert launch.grid == (3, 1, 1) and launch.block == (128, 1, 1)
    # Each array: meminfo, parent, nitems, itemsize, data, shape, strides.
    assert launch.params == [0, 0, n, 4, x, n, 4,
                             f32_bits(2.0),
                             0, 0, n, 4, out, n, 4,
                             0, 0, 1, 4, total, 1, 4]
    # The 2-d array's strides are a C-contiguous array's, in bytes.
    (run,) = tier.run(tier.call("execute", "block_sums", arg("f32", x, 5, 30),
                                ret("f32", out, 3)))
    assert run.ok, run.message
    (launch,) = run.launches()
    assert launch.params == [0, 0, 150, 4, x, 5, 30, 120, 4,
                             0, 0, 3, 4, out, 3, 4]


@needs_ptxas
@needs_numba_cuda
def test_cpu_and_cuda_in_one_package(tmp_path):
    # The spec names the CPU path's C++ source beside the PTX: the CPU op
    # is the one the cpu target builds alone, the shared array and barrier
    # of block_sums under the block executor.
    module = kernelc.load_numba([axpy, block_sums], name="numba_both",
                                target="cpu,cuda", cuda_arch="sm_80",
                                cache_dir=tmp_path)
    spec = next((tmp_path / "numba").glob("*/spec.json"))
    kernels = json.loads(spec.read_text())["kernels"]
    assert [k["source"] for k in kernels] == ["kernels.cu"] * 2
    assert [k["ptx"]["file"] for k in kernels] == ["axpy.ptx", "block_sums.ptx"]
    x = np.arange(300, dtype=np.float32)
    out, total = module.axpy(x, a=2.0)
    np.testing.assert_array_equal(np.asarray(out), 2 * x)
    assert float(total[0]) == x.sum()
    y = np.linspace(-1, 1, 5 * 30, dtype=np.float32).reshape(5, 30)
    want = np.add.reduceat(y.ravel().astype(np.float64), np.arange(0, 150, 64))
    np.testing.assert_allclose(np.asarray(module.block_sums(y)), want, rtol=1e-5,
                               atol=1e-5)
