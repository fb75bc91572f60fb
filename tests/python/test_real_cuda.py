"""Real CUDA code as it is written: whole .cu files with their host code,
template kernels, traced scalars, optional inputs, shapes that start with
'...', grids counted in blocks, macros in annotation expressions, the math
macros on NVRTC. Each source runs on the CPU against NumPy, and builds for
the cuda target with NVRTC, its PTX accepted by ptxas."""

import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from conftest import ROOT, run_kernelc
from test_cuda_build import ptxas, toolkit_include

SOURCES = ROOT / "tests" / "cuda_sources"
SAMPLE = SOURCES / "sample_vector_add.cu"


def check_cuda_build(source, tmp_path):
    """Builds `source` for the cuda target (sm_80, sm_90) and has ptxas
    accept every PTX file; returns the build directory."""
    toolkit_include()
    r = run_kernelc("emit", source, "-o", tmp_path, "--target", "cuda",
                    "--cuda-arch", "sm_80,sm_90")
    assert r.returncode == 0, r.stderr
    ptxs = sorted((tmp_path / "build" / "cuda").glob("*.ptx"))
    assert ptxs
    tool = ptxas()
    if tool is None:
        pytest.skip("no ptxas (CUDA toolkit) on this machine")
    for ptx in ptxs:
        p = subprocess.run([str(tool), "-arch=sm_90", str(ptx), "-o",
                            str(tmp_path / "out.cubin")],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    return tmp_path / "build"


# --- Whole .cu files -------------------------------------------------------


def test_whole_sample_file_builds_for_cuda(tmp_path):
    check_cuda_build(SAMPLE, tmp_path)


def test_whole_sample_file_builds_for_both_targets_and_runs_on_cpu(
        build_package):
    toolkit_include()
    m = build_package("sample_vector_add", sources=[SAMPLE],
                      extra=("--target", "cpu,cuda", "--cuda-arch", "sm_80"))
    a = np.linspace(-1, 1, 1000).astype(np.float32)
    a[7] = np.inf
    b = np.arange(1000, dtype=np.float32)
    expected = np.where(np.isinf(a), 0, a) + b
    np.testing.assert_allclose(np.asarray(m.vectorAdd(a, b)), expected,
                               rtol=1e-6, atol=1e-6)


def test_whole_sample_file_without_toolkit_still_reads_its_host_code(
        build_package):
    # The CPU target alone: the host code (cudaMalloc, the launch) is left
    # out of the CPU build as it is of NVRTC's.
    toolkit_include()
    m = build_package("sample_vector_add_cpu", sources=[SAMPLE])
    a = np.ones(300, np.float32)
    np.testing.assert_allclose(np.asarray(m.vectorAdd(a, a)), 2 * a,
                               atol=1e-6)


def test_whole_file_with_an_error_in_its_kernel_reports_it(tmp_path):
    toolkit_include()
    src = tmp_path / "broken_sample.cu"
    src.write_text(SAMPLE.read_text().replace(
        "C[i] = axpb(", "C[i] = undeclared_helper(a) + axpb("))
    r = run_kernelc("build", src, "-o", tmp_path / "out", "--target", "cpu",
                    "-I", SOURCES)
    assert r.returncode == 1
    assert "broken_sample.cu:25:12: error: use of undeclared identifier " \
        "'undeclared_helper'" in r.stderr, r.stderr
