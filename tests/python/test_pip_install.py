"""The kernelc distribution as a user gets it: the wheel that `pip wheel .`
builds at the repository root (slow: Bazel builds the compiler with LLVM
linked statically, and auditwheel repairs the wheel), installed into a
fresh virtual environment outside the repository, where load_inline and
load run kernels under jax.jit, hit the cache the second time and give a
new module after an edit, and the `kernelc` command builds.

The fresh environment reaches jax and numpy through a .pth file naming the
development environment's site-packages, so that the test downloads
nothing; pip installs the wheel with --no-index, its dependencies satisfied
by those. tools/clean_root_check.sh does the same on a machine without a
compiler, with jax from PyPI.
"""

import json
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import textwrap
import zipfile

import pytest

from conftest import EXAMPLES, ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    dist = tmp_path_factory.mktemp("dist")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                        "-q", "-w", str(dist), str(ROOT)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    [built] = dist.glob("kernelc-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh virtual environment with the wheel installed."""
    env_dir = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    pathlib.Path(purelib, "development_packages.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n")
    r = subprocess.run([str(python), "-m", "pip", "install", "-q",
                        "--no-index", str(wheel)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return env_dir


def test_the_wheel_is_tagged_manylinux_for_any_python_3(wheel):
    version = re.search(r'kVersion = "([^"]+)"',
                        (ROOT / "compiler/driver/version.h").read_text())[1]
    assert re.fullmatch(rf"kernelc-{re.escape(version)}-py3-none-"
                        r"manylinux_2_\d+_x86_64\.whl", wheel.name), wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        tags = [line.split(": ", 1)[1] for line in
                z.read(f"kernelc-{version}.dist-info/WHEEL").decode().splitlines()
                if line.startswith("Tag: ")]
        metadata = z.read(f"kernelc-{version}.dist-info/METADATA").decode()
        entry_points = z.read(
            f"kernelc-{version}.dist-info/entry_points.txt").decode()
        compiler = z.getinfo("kernelc/bin/kernelc")
        manifest = json.loads(z.read("kernelc/toolchain/manifest.json"))
    assert tags == [wheel.name[:-len(".whl")].split("-", 2)[2]]
    assert "Requires-Python: >=3.11" in metadata
    assert "Requires-Dist: jax>=0.8.1" in metadata
    assert "kernelc = kernelc._cli:main" in entry_points
    assert compiler.external_attr >> 16 & 0o111  # executable
    # The toolchain: each package with its licence and copyright file.
    packages = {p["name"]: p for p in manifest["packages"]}
    assert set(packages) == {"libc6-dev", "linux-libc-dev", "libstdc++-12-dev",
                             "libgcc-12-dev", "libclang-common-19-dev"}
    for name in packages:
        assert packages[name]["license"]
        assert f"kernelc/toolchain/licenses/{name}.copyright" in names
    for header in ("sysroot/usr/include/stdio.h", "sysroot/usr/include/c++/12/cmath",
                   "clang/include/immintrin.h"):
        assert f"kernelc/toolchain/{header}" in names
    # The machine's shared runtime libraries are not in it: a wheel with
    # them would be no manylinux wheel.
    assert not [n for n in names if re.search(r"/lib(c|m|stdc\+\+|gcc_s)\.so\.\d", n)]


def test_auditwheel_agrees_with_the_tag(wheel):
    try:
        import auditwheel  # noqa: F401
    except ImportError:
        pytest.skip("auditwheel is not installed here (pip wheel used its own)")
    r = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    tag = wheel.name[:-len(".whl")].split("-")[-1]
    assert f'platform tag: "{tag}"' in " ".join(r.stdout.split())


CHECK = textwrap.dedent("""\
    import os, re, subprocess, sys
    import jax, numpy as np
    import kernelc

    assert kernelc.__file__.startswith(sys.prefix), kernelc.__file__
    assert kernelc.compiler_path().startswith(sys.prefix)
    source = open(sys.argv[1]).read()
    x = np.arange(1000, dtype=np.float32)

    ops = kernelc.load_inline(source, name="ops", verbose=True)
    assert not ops.__kernelc_build__.cache_hit
    np.testing.assert_allclose(jax.jit(lambda x: ops.saxpy(x, x, 2.0))(x), 3 * x)
    again = kernelc.load_inline(source, name="ops")
    assert again is ops and again.__kernelc_build__.cache_hit
    edited = kernelc.load_inline(
        source.replace("a * x[i] + y[i]", "a * x[i] - y[i]"), name="ops")
    assert edited is not ops and not edited.__kernelc_build__.cache_hit
    np.testing.assert_allclose(jax.jit(lambda x: edited.saxpy(x, x, 2.0))(x), x)
    np.testing.assert_allclose(jax.jit(lambda x: ops.saxpy(x, x, 2.0))(x), 3 * x)

    saxpy = kernelc.load(sys.argv[1])
    np.testing.assert_allclose(jax.jit(lambda x: saxpy.saxpy(x, x, 2.0))(x), 3 * x)

    try:
        kernelc.load_inline(source.replace('KC_IN("n") const float* y',
                                           "const float* y"), name="bad")
    except kernelc.BuildError as e:
        assert re.match(r"bad.cu:\\d+:\\d+: error: pointer parameter 'y'", str(e))
    else:
        raise AssertionError("no BuildError")
    print("api: ok")
    """)


def test_load_inline_and_load_from_the_installed_wheel(venv, tmp_path):
    env = dict(os.environ, KERNELC_CACHE_DIR=str(tmp_path / "cache"))
    (tmp_path / "check.py").write_text(CHECK)
    r = subprocess.run([str(venv / "bin" / "python"), "check.py",
                        str(EXAMPLES / "saxpy.cu")],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "api: ok"
    # verbose=True: the stages of the first build, as they finished.
    lines = r.stderr.splitlines()
    assert lines[0].startswith("kernelc: frontend ")
    assert any(line.startswith("kernelc: link ") for line in lines)


def test_the_kernelc_command_builds(venv, tmp_path):
    env = dict(os.environ, KERNELC_CACHE_DIR=str(tmp_path / "cache"))
    command = venv / "bin" / "kernelc"
    r = subprocess.run([str(command), "build", str(EXAMPLES / "histogram.cc"),
                        "-o", "out"], cwd=tmp_path, env=env, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    code = ("import sys, numpy as np; sys.path.insert(0, 'out'); import histogram; "
            "v = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4); "
            "print(int(np.asarray(histogram.histogram(v, 0.0, 1.0, 4)).sum()))")
    r = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "11"  # 1.0 is past the last bin
    r = subprocess.run([str(command), "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("kernelc ")
