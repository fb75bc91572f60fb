"""Shared fixtures for the end-to-end tests: the real kernelc binary (built by
tools/setup.sh) and a helper that builds a package and imports it."""

import atexit
import json
import importlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import jax
import pytest

# 64-bit dtypes (int64, uint64, float64) need x64; 32-bit behaviour is the
# same with it on.
jax.config.update("jax_enable_x64", True)

# kernelc's build cache: one private directory for the whole test session,
# never the user's (~/.cache/kernelc). Tests of the cache use their own.
_CACHE_DIR = tempfile.mkdtemp(prefix="kernelc-test-cache-")
atexit.register(shutil.rmtree, _CACHE_DIR, ignore_errors=True)
os.environ["KERNELC_CACHE_DIR"] = _CACHE_DIR


def pytest_configure(config):
    # Generated packages must use no API that jax deprecates (jax 0.12
    # deprecated several that older packages used): such a warning fails the
    # test that triggers it. The tests' subprocesses run with -W for the same.
    config.addinivalue_line("filterwarnings", "error::DeprecationWarning")
    config.addinivalue_line(
        "markers", "bench: runs the benchmark suite in its quick mode (slow)")


ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNELC = ROOT / "bazel-bin" / "tools" / "kernelc"
EXAMPLES = ROOT / "examples"
# The fake-CUDA tier (tests/fake_cuda), built by Bazel.
FAKE_CUDA = ROOT / "bazel-bin" / "tests" / "fake_cuda"


def fake_cuda(name):
    """The path of a Bazel-built artifact of the fake-CUDA tier:
    "libcuda.so.1" (its directory goes on LD_LIBRARY_PATH),
    "runtime_driver" or "handler_driver"."""
    path = FAKE_CUDA / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `bazel build //tests/fake_cuda/...` "
                    "(tools/test.sh does)")
    return path


def run_kernelc(*args, cwd=None, check=False):
    """Runs kernelc; returns the CompletedProcess (text stdout/stderr)."""
    if not KERNELC.exists():
        pytest.fail(f"{KERNELC} is missing: run tools/setup.sh first")
    env = dict(os.environ)
    # NVRTC from NVIDIA's wheels in .venv, where there is no CUDA toolkit.
    env.setdefault("VIRTUAL_ENV", str(ROOT / ".venv"))
    return subprocess.run([str(KERNELC), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, check=check,
                          env=env)


def run_check(script, module, *args, timeout=600):
    """Runs tests/python/<script> in a process of its own (where it sets the
    number of host devices before jax starts) on the built package `module`,
    with jax's deprecations as errors; the script prints OK last when every
    check holds."""
    pkg_dir = pathlib.Path(module.__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-W", "error::DeprecationWarning",
                        str(pathlib.Path(__file__).resolve().parent / script),
                        str(pkg_dir), module.__name__, *args],
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr


def direct_call(module, kernel, body):
    """Runs `body` in a subprocess with `target` bound to the FFI target of
    `kernel` and the package imported; returns the CompletedProcess."""
    pkg = pathlib.Path(module.__file__).resolve().parent
    manifest = json.loads((pkg / "kernelc.json").read_text())
    target = next(k["ffi_target"] for k in manifest["kernels"] if k["name"] == kernel)
    code = "\n".join([
        "import sys",
        f"sys.path.insert(0, {str(pkg.parent)!r})",
        "import jax, numpy as np",
        "jax.config.update('jax_enable_x64', True)",
        f"import {module.__name__}",
        f"target = {target!r}",
        body,
    ])
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="session")
def build_package(tmp_path_factory):
    """build_package(name, source_text=None, sources=None, extra=()) builds a
    package with kernelc and returns the imported module. Give either the
    text of one source (written to <name>.cu) or paths of existing sources."""
    out = tmp_path_factory.mktemp("packages")
    src_dir = tmp_path_factory.mktemp("sources")
    if str(out) not in sys.path:
        sys.path.insert(0, str(out))
    built = {}

    def build(name, source_text=None, sources=None, extra=(), suffix=".cu"):
        if name in built:
            return built[name]
        if source_text is not None:
            path = src_dir / f"{name}{suffix}"
            path.write_text(source_text)
            sources = [path]
        r = run_kernelc("build", *sources, "-o", out, "--name", name, *extra)
        if r.returncode != 0:
            pytest.fail(f"kernelc build {name} failed ({r.returncode}):\n{r.stderr}")
        module = importlib.import_module(name)
        built[name] = module
        return module

    return build
