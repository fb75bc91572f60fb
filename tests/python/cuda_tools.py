"""The CUDA toolkit's pieces that the end-to-end tests use without a GPU:
its headers, ptxas, and a cuda build whose PTX ptxas must accept. A test
that needs a piece this machine lacks skips, saying which."""

import pathlib
import shutil
import subprocess

import pytest

from conftest import ROOT, run_kernelc

CUDA_HOME = pathlib.Path("/usr/local/cuda")

# A build of PTX kernels runs the CUDA toolkit's ptxas, or one on PATH.
needs_ptxas = pytest.mark.skipif(
    not ((CUDA_HOME / "bin" / "ptxas").exists() or shutil.which("ptxas")),
    reason="no ptxas (the CUDA toolkit) to assemble PTX")


def toolkit_include():
    """The CUDA toolkit's include directory (cuda_fp16.h, cccl/), as kernelc
    finds it; skips the test where there is none."""
    candidates = [CUDA_HOME / "include"] + sorted((ROOT / ".venv").glob(
        "lib/python*/site-packages/nvidia/cu13/include"))
    for c in candidates:
        if (c / "cuda_fp16.h").exists() and (c / "cccl").is_dir():
            return c
    pytest.skip("no CUDA toolkit headers (with CCCL) on this machine")


def ptxas():
    """ptxas of the CUDA toolkit, or of NVIDIA's nvcc wheel in .venv."""
    candidates = [shutil.which("ptxas"), CUDA_HOME / "bin" / "ptxas"]
    candidates += sorted((ROOT / ".venv").glob(
        "lib/python*/site-packages/nvidia/cu13/bin/ptxas"))
    for c in candidates:
        if c and pathlib.Path(c).exists():
            return pathlib.Path(c)
    return None


def check_cuda_build(source, tmp_path, targets="cpu,cuda"):
    """Builds `source` for `targets`, which include cuda (sm_80, sm_90; cpu
    too by default, which host kernels need), and has ptxas accept every
    PTX file; returns the build directory."""
    toolkit_include()
    r = run_kernelc("emit", source, "-o", tmp_path, "--target", targets,
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
