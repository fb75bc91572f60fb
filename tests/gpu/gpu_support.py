"""Where the GPU tests find the GPU and the prebuilt packages.

The packages are built on a development machine by tools/prebuild_gpu.sh
(into out/gpu_packages, or $KERNELC_GPU_PACKAGES) and imported from there, so
a GPU machine needs neither kernelc nor a compiler: see DEVELOPERS.md."""

import os
import pathlib
import sys

import jax
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = pathlib.Path(
    os.environ.get("KERNELC_GPU_PACKAGES", ROOT / "out" / "gpu_packages"))


def gpu_device():
    """The first CUDA device; skips the test (with the reason) without one."""
    try:
        devices = jax.devices("cuda")
    except RuntimeError as e:
        pytest.skip(f"no CUDA GPU visible to jax {jax.__version__}: {e}")
    if not devices:
        pytest.skip("no CUDA GPU visible to jax")
    return devices[0]


def package(name):
    """Imports a prebuilt package; fails (on a GPU machine) when missing."""
    if not (PACKAGES / name / "__init__.py").exists():
        pytest.fail(f"prebuilt package {name} is missing from {PACKAGES}: run "
                    "`bash tools/prebuild_gpu.sh` on a machine with kernelc "
                    "and copy out/gpu_packages along (DEVELOPERS.md)")
    if str(PACKAGES) not in sys.path:
        sys.path.insert(0, str(PACKAGES))
    import importlib
    return importlib.import_module(name)
