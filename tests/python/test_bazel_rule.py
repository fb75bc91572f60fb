"""kernelc_library from another workspace, with no .bazelrc: tests/
bazel_consumer pulls kernelc in with local_repository and
kernelc_dependencies(), builds three libraries (one for the GPU, built but
not run) and runs a py_test that imports the others, with the Python that
kernelc_python_toolchain() names. Building twice (after `bazel clean`) gives
byte-identical packages, editing one kernel re-runs only that library's
action, CUDA_HOME reaches kernelc through --action_env, and misplaced options
fail at analysis. With kernelc_dependencies(compiler = "kernelc") the same
workspace uses a prebuilt kernelc and builds no C++ at all; a missing set-up
step or a Python without jax fails with the command that provides it."""

import hashlib
import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys

import pytest

from conftest import KERNELC, ROOT

CONSUMER = ROOT / "tests" / "bazel_consumer"
# Bazel's disk cache for the consumer's build of kernelc itself, kept between
# runs (the kernelc actions below are never taken from it).
DISK_CACHE = ROOT / ".cache" / "bazel-consumer-disk-cache"
PACKAGES = ("scale_ops", "axpy_ops", "half_ops")
# The Python with jax: the consumer's WORKSPACE names "python3", found on
# PATH as a user's active virtual environment would have it.
VENV_BIN = pathlib.Path(sys.executable).parent
# kernelc finds NVRTC for the cuda target through these (README, "Bazel"):
# each is passed on to the actions when it is set where bazel runs.
ACTION_ENV = ["--action_env=CUDA_HOME", "--action_env=VIRTUAL_ENV"]

pytestmark = pytest.mark.skipif(shutil.which("bazel") is None,
                                reason="bazel is not installed")
# The real NVRTC, for a CUDA_HOME of the test's own.
CUDA_LIB64 = pathlib.Path("/usr/local/cuda/lib64")


class Workspace:
    def __init__(self, root, output_base, path=()):
        self.root = root
        self.output_base = output_base
        self.path = [str(p) for p in path] + [str(VENV_BIN)]
        self.logs = 0

    def bazel(self, *args, check=True, env_update=None):
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join(self.path + [env.get("PATH", "")])
        # NVRTC from NVIDIA's wheels in .venv, where there is no CUDA
        # toolkit.
        env.setdefault("VIRTUAL_ENV", str(ROOT / ".venv"))
        env.update(env_update or {})
        r = subprocess.run(
            ["bazel", f"--output_base={self.output_base}", "--max_idle_secs=120",
             *args], cwd=self.root, env=env, capture_output=True, text=True)
        if check:
            assert r.returncode == 0, r.stdout + r.stderr
        return r

    def spawns(self, command="build", target="//..."):
        """Runs bazel; returns every spawn it executed."""
        self.logs += 1
        log = self.output_base.parent / f"exec{self.logs}.json"
        self.bazel(command, target, *ACTION_ENV, f"--disk_cache={DISK_CACHE}",
                   # Bazel's own caches may serve kernelc's compile, never a
                   # kernelc_library action: those must really run here.
                   "--modify_execution_info=KernelcBuild=+no-cache",
                   f"--execution_log_json_file={log}")
        return read_exec_log(log)

    def build(self, command="build", target="//..."):
        """Runs bazel; returns the KernelcBuild spawns it executed."""
        return [s for s in self.spawns(command, target)
                if s.get("mnemonic") == "KernelcBuild"]

    def package_dir(self, name):
        bin_dir = self.bazel("info", "bazel-bin").stdout.strip()
        return pathlib.Path(bin_dir) / f"{name}_package" / name

    def close(self):
        self.bazel("shutdown", check=False)
        make_writable(self.output_base)
        shutil.rmtree(self.output_base, ignore_errors=True)


def consumer_copy(dest, kernelc=ROOT, dependencies=None, python=None):
    """tests/bazel_consumer copied to `dest`, pointing at the kernelc
    checkout `kernelc`; `dependencies` and `python` replace the arguments of
    kernelc_dependencies() and kernelc_python_toolchain()."""
    shutil.copytree(CONSUMER, dest, ignore=shutil.ignore_patterns("bazel-*"))
    ws = dest / "WORKSPACE"
    text = ws.read_text()
    for old, new in [('path = "../.."', f'path = "{kernelc}"'),
                     ("kernelc_dependencies()", dependencies),
                     ('interpreter = "python3"', python)]:
        if new is not None:
            assert old in text
            text = text.replace(old, new)
    ws.write_text(text)
    return dest


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
    w = Workspace(consumer_copy(tmp / "ws"), tmp / "output_base")
    yield w
    w.close()


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
    r = workspace.bazel("build", "//:half_ops_package", *ACTION_ENV,
                        check=False, env_update={"CUDA_HOME": str(home)})
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


def test_a_prebuilt_kernelc_builds_no_cpp(tmp_path):
    # The `kernelc` on PATH, as `pip install kernelc` would put it there: a
    # copy of the checkout's, elsewhere.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy2(KERNELC, bin_dir / "kernelc")
    w = Workspace(consumer_copy(tmp_path / "ws",
                                dependencies='kernelc_dependencies(compiler = "kernelc")'),
                  tmp_path / "output_base", path=[bin_dir])
    try:
        spawns = w.spawns("test")
        mnemonics = {s.get("mnemonic") for s in spawns}
        # Nothing of kernelc is compiled or linked: no C++ at all.
        assert not {m for m in mnemonics if m and m.startswith("Cpp")}, mnemonics
        built = [s for s in spawns if s.get("mnemonic") == "KernelcBuild"]
        assert sorted(built_package(s) for s in built) == sorted(PACKAGES)
        assert {s["commandArgs"][0] for s in built} == \
            {"external/kernelc_compiler/kernelc"}
        # The repositories that building kernelc needs were never fetched.
        external = w.output_base / "external"
        assert not any((external / r).exists()
                       for r in ("llvm", "system_include", "xla_ffi"))
        # The same packages as kernelc built from the checkout gives.
        for name in ("scale_ops", "axpy_ops"):
            files = sorted(p.name for p in w.package_dir(name).iterdir())
            assert "__init__.py" in files and "kernelc.json" in files
    finally:
        w.close()


def failed_build(tmp_path, target, env_update=None, **copy):
    """Builds `target` in a copy of the consumer workspace (consumer_copy's
    `copy` arguments), which must fail; returns bazel's stderr."""
    w = Workspace(consumer_copy(tmp_path / "ws", **copy),
                  tmp_path / "output_base")
    try:
        r = w.bazel("build", target, check=False, env_update=env_update)
    finally:
        w.close()
    assert r.returncode != 0
    return r.stderr


def test_a_prebuilt_kernelc_that_is_not_there_is_named(tmp_path):
    stderr = failed_build(
        tmp_path, "//:scale_ops_package", env_update={"PATH": "/usr/bin:/bin"},
        dependencies='kernelc_dependencies(compiler = "kernelc")')
    assert ('kernelc_dependencies(compiler = "kernelc"): no kernelc on PATH '
            "(/usr/bin:/bin): install kernelc (pip install kernelc, into the "
            "environment whose bin directory is on PATH), or give the "
            "compiler's absolute path") in stderr, stderr


def test_a_checkout_that_is_not_set_up_is_named(tmp_path):
    # A kernelc checkout where tools/setup.sh has not run: no .cache.
    checkout = tmp_path / "kernelc"
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(
        ".cache", ".venv", ".git", "bazel-*", "tests", "__pycache__"))
    stderr = failed_build(tmp_path, "//:scale_ops_package", kernelc=checkout)
    # Whichever of the two that set-up fetches Bazel misses first.
    messages = [
        f"kernelc's build needs {what} in {checkout}/.cache/{directory}, which "
        f"is missing: run `bash tools/setup.sh` in {checkout}, which provides "
        "it; or use a prebuilt kernelc, which needs none of this: "
        'kernelc_dependencies(compiler = "kernelc")'
        for what, directory in [
            ("the XLA FFI headers of the floor jaxlib", "xla_ffi"),
            ("auditwheel's manylinux policies", "manylinux_policy")]]
    assert any(m in stderr for m in messages), stderr


def test_a_python_without_jax_is_named(tmp_path):
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)],
                   check=True)
    python = venv / "bin" / "python3"
    stderr = failed_build(tmp_path, "//:ops_test",
                          python=f'interpreter = "{python}"')
    assert (f'kernelc_python_toolchain(interpreter = "{python}"): {python}: '
            "it cannot import jax (No module named 'jax'): "
            f"{python} -m pip install 'jax>=0.8.1'") in stderr, stderr
