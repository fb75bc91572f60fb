"""kernelc_library from another workspace: tests/bazel_consumer pulls kernelc
in with local_repository and kernelc_dependencies(), builds three libraries
(one for the GPU, built but not run) and runs a py_test that imports the
others. Building twice (after `bazel clean`) gives byte-identical packages,
editing one kernel re-runs only that library's action, CUDA_HOME reaches
kernelc through --action_env, and misplaced options fail at analysis."""

import hashlib
import json
import os
import pathlib
import shutil
import stat
import subprocess

import pytest

from conftest import ROOT

CONSUMER = ROOT / "tests" / "bazel_consumer"
# Bazel's disk cache for the consumer's build of kernelc itself, kept between
# runs (the kernelc actions below are never taken from it).
DISK_CACHE = ROOT / ".cache" / "bazel-consumer-disk-cache"
PACKAGES = ("scale_ops", "axpy_ops", "half_ops")

pytestmark = pytest.mark.skipif(shutil.which("bazel") is None,
                                reason="bazel is not installed")
# The real NVRTC, for a CUDA_HOME of the test's own.
CUDA_LIB64 = pathlib.Path("/usr/local/cuda/lib64")


class Workspace:
    def __init__(self, root, output_base):
        self.root = root
        self.output_base = output_base
        self.logs = 0

    def bazel(self, *args, check=True, env_update=None):
        env = dict(os.environ, KERNELC_PYTHON=str(ROOT / ".venv" / "bin" / "python3"))
        # NVRTC from NVIDIA's wheels in .venv, where there is no CUDA
        # toolkit (the consumer's .bazelrc passes VIRTUAL_ENV on).
        env.setdefault("VIRTUAL_ENV", str(ROOT / ".venv"))
        env.update(env_update or {})
        r = subprocess.run(
            ["bazel", f"--output_base={self.output_base}", "--max_idle_secs=120",
             *args], cwd=self.root, env=env, capture_output=True, text=True)
        if check:
            assert r.returncode == 0, r.stdout + r.stderr
        return r

    def build(self, command="build", target="//..."):
        """Runs bazel; returns the KernelcBuild spawns it executed."""
        self.logs += 1
        log = self.output_base.parent / f"exec{self.logs}.json"
        self.bazel(command, target, f"--disk_cache={DISK_CACHE}",
                   # Bazel's own caches may serve kernelc's compile, never a
                   # kernelc_library action: those must really run here.
                   "--modify_execution_info=KernelcBuild=+no-cache",
                   f"--execution_log_json_file={log}")
        return [s for s in read_exec_log(log) if s.get("mnemonic") == "KernelcBuild"]

    def package_dir(self, name):
        bin_dir = self.bazel("info", "bazel-bin").stdout.strip()
        return pathlib.Path(bin_dir) / f"{name}_package" / name


def read_exec_log(path):
    text = path.read_text()
    decoder = json.JSONDecoder()
    spawns, i = [], 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            break
        obj, i = decoder.raw_decode(text, i)
        spawns.append(obj)
    return spawns


def built_package(spawn):
    args = spawn["commandArgs"]
    return args[args.index("--name") + 1]


def snapshot(path):
    return {str(p.relative_to(path)): (hashlib.sha256(p.read_bytes()).hexdigest(),
                                       p.stat().st_ino, p.stat().st_mtime_ns)
            for p in sorted(path.rglob("*")) if p.is_file()}


def digests(path):
    return {k: v[0] for k, v in snapshot(path).items()}


def make_writable(path):
    for dirpath, dirnames, filenames in os.walk(path):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | stat.S_IWUSR)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bazel_consumer")
    root = tmp / "ws"
    shutil.copytree(CONSUMER, root, ignore=shutil.ignore_patterns("bazel-*"))
    # The copy lives elsewhere: point it at this checkout.
    ws = root / "WORKSPACE"
    text = ws.read_text()
    assert 'path = "../.."' in text
    ws.write_text(text.replace('path = "../.."', f'path = "{ROOT}"'))
    w = Workspace(root, tmp / "output_base")
    yield w
    w.bazel("shutdown", check=False)
    make_writable(w.output_base)
    shutil.rmtree(w.output_base, ignore_errors=True)


def test_py_test_imports_and_runs_the_ops(workspace):
    spawns = workspace.build("test")
    assert sorted(built_package(s) for s in spawns) == sorted(PACKAGES)
    for name in PACKAGES:
        files = sorted(p.name for p in workspace.package_dir(name).iterdir())
        lib = [f for f in files if f.endswith(".so")]
        assert len(lib) == 1 and lib[0].startswith("_kernelc_")
        assert files == sorted(["__init__.py", "__init__.pyi", "_kernelc.py",
                                "kernelc.json", "py.typed", lib[0]])


def test_building_twice_is_byte_identical(workspace):
    workspace.build()
    first = {n: digests(workspace.package_dir(n)) for n in PACKAGES}
    workspace.bazel("clean")
    spawns = workspace.build()
    assert sorted(built_package(s) for s in spawns) == sorted(PACKAGES)
    assert all(not s.get("remoteCacheHit") for s in spawns)
    second = {n: digests(workspace.package_dir(n)) for n in PACKAGES}
    assert first == second


def test_editing_one_kernel_rebuilds_only_its_library(workspace):
    workspace.build()
    before = {n: snapshot(workspace.package_dir(n)) for n in PACKAGES}
    src = workspace.root / "kernels" / "scale.cu"
    original = src.read_text()
    src.write_text(original + "// edited\n")
    try:
        spawns = workspace.build("test")
    finally:
        src.write_text(original)
    assert [built_package(s) for s in spawns] == ["scale_ops"]
    after = {n: snapshot(workspace.package_dir(n)) for n in PACKAGES}
    assert after["axpy_ops"] == before["axpy_ops"]  # same bytes, same files
    assert digests(workspace.package_dir("scale_ops")) != \
        {k: v[0] for k, v in before["scale_ops"].items()}
    # A header is an input too.
    header = workspace.root / "kernels" / "factor.h"
    original = header.read_text()
    header.write_text(original + "// edited\n")
    try:
        spawns = workspace.build()
    finally:
        header.write_text(original)
    assert [built_package(s) for s in spawns] == ["scale_ops"]


def test_cuda_library_is_built_for_its_target(workspace):
    workspace.build()
    manifest = json.loads(
        (workspace.package_dir("half_ops") / "kernelc.json").read_text())
    assert manifest["targets"] == ["cuda"]
    assert manifest["cuda"]["archs"] == ["sm_80"]
    formats = sorted(im["format"] for b in manifest["cuda"]["binaries"]
                     for im in b["images"])
    assert formats == ["cubin", "ptx"]


@pytest.mark.skipif(not list(CUDA_LIB64.glob("libnvrtc.so*")),
                    reason="needs the CUDA toolkit's NVRTC in /usr/local/cuda")
def test_cuda_home_reaches_kernelc(workspace, tmp_path):
    # A toolkit whose cuda_fp16.h refuses to compile: the action fails with
    # its message only if kernelc looked there.
    home = tmp_path / "cuda"
    (home / "include").mkdir(parents=True)
    (home / "lib64").symlink_to(CUDA_LIB64)
    (home / "include" / "cuda_fp16.h").write_text(
        "#error kernelc-test-toolkit\n")
    r = workspace.bazel("build", "//:half_ops_package", check=False,
                        env_update={"CUDA_HOME": str(home)})
    assert r.returncode != 0
    assert "kernelc-test-toolkit" in r.stderr


MISPLACED = """\
load("@kernelc//tools:defs.bzl", "kernelc_library")

kernelc_library(name = "archs", srcs = ["k.cu"],
                cuda_archs = ["sm_80"])
kernelc_library(name = "fast", srcs = ["k.cu"],
                use_fast_math = True)
kernelc_library(name = "tpu", srcs = ["k.cu"],
                targets = ["cpu", "tpu"])
"""


def test_misplaced_options_fail_at_analysis(workspace):
    bad = workspace.root / "bad"
    bad.mkdir()
    (bad / "BUILD.bazel").write_text(MISPLACED)
    (bad / "k.cu").write_text("// never compiled\n")
    try:
        r = workspace.bazel("build", "--nobuild", "--keep_going", "//bad:all",
                            check=False)
    finally:
        shutil.rmtree(bad)
    assert r.returncode != 0
    for message in ['attribute cuda_archs: needs "cuda" in targets',
                    'attribute use_fast_math: needs "cuda" in targets',
                    'attribute targets: unknown target "tpu"']:
        assert message in r.stderr, r.stderr
