"""kernelc wheel: PEP 427 contents, reproducible bytes, an install with pip
into a fresh virtual environment, and the import-time jaxlib check."""

import base64
import hashlib
import os
import subprocess
import sys
import sysconfig
import textwrap
import zipfile

import pytest

from conftest import EXAMPLES, KERNELC, run_kernelc


def wheel_of(args, dist, env=None):
    r = subprocess.run([str(KERNELC), "wheel", *map(str, args), "-o", str(dist)],
                       capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})))
    assert r.returncode == 0, r.stderr
    path = r.stdout.strip()
    assert os.path.dirname(path) == str(dist)
    return path


@pytest.fixture(scope="module")
def saxpy_pkg(tmp_path_factory):
    out = tmp_path_factory.mktemp("built")
    run_kernelc("build", EXAMPLES / "saxpy.cu", "-o", out, check=True)
    return out / "saxpy"


def test_wheel_contents(saxpy_pkg, tmp_path):
    path = wheel_of([saxpy_pkg, "--version", "1.2.0"], tmp_path)
    assert os.path.basename(path) == "saxpy-1.2.0-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        lib = next(n for n in names if n.endswith(".so"))
        assert names == ["saxpy/__init__.py", "saxpy/__init__.pyi",
                         "saxpy/_kernelc.py", lib, "saxpy/kernelc.json",
                         "saxpy/py.typed",
                         "saxpy-1.2.0.dist-info/METADATA",
                         "saxpy-1.2.0.dist-info/WHEEL",
                         "saxpy-1.2.0.dist-info/RECORD"]
        for info in z.infolist():
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert info.external_attr >> 16 == 0o100644
        assert z.read("saxpy-1.2.0.dist-info/WHEEL").decode() == (
            "Wheel-Version: 1.0\nGenerator: kernelc 0.1.0\n"
            "Root-Is-Purelib: false\nTag: py3-none-linux_x86_64\n")
        metadata = z.read("saxpy-1.2.0.dist-info/METADATA").decode()
        head = metadata.split("\n\n")[0].splitlines()
        assert head[:3] == ["Metadata-Version: 2.1", "Name: saxpy",
                            "Version: 1.2.0"]
        assert "Requires-Dist: jax>=0.8.1" in head
        assert "Requires-Dist: jaxlib>=0.8.1" in head
        assert "Built against XLA FFI API 0.2" in metadata
        record = z.read("saxpy-1.2.0.dist-info/RECORD").decode().splitlines()
        assert record[-1] == "saxpy-1.2.0.dist-info/RECORD,,"
        assert [line.split(",")[0] for line in record] == names
        for line in record[:-1]:
            name, digest, size = line.split(",")
            data = z.read(name)
            expected = base64.urlsafe_b64encode(
                hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == "sha256=" + expected and int(size) == len(data)
        assert z.read(f"saxpy/{os.path.basename(lib)}") == \
            (saxpy_pkg / os.path.basename(lib)).read_bytes()


def test_wheel_is_reproducible(saxpy_pkg, tmp_path):
    a = wheel_of([saxpy_pkg], tmp_path / "a")
    # From the sources, without the cache: the same bytes.
    b = wheel_of([EXAMPLES / "saxpy.cu", "--no-cache"], tmp_path / "b")
    assert open(a, "rb").read() == open(b, "rb").read()
    epoch = {"SOURCE_DATE_EPOCH": "1700000000"}
    c = wheel_of([saxpy_pkg], tmp_path / "c", env=epoch)
    d = wheel_of([saxpy_pkg], tmp_path / "d", env=dict(epoch, TZ="Asia/Tokyo"))
    assert open(c, "rb").read() == open(d, "rb").read()
    assert open(a, "rb").read() != open(c, "rb").read()
    with zipfile.ZipFile(c) as z:
        assert {i.date_time for i in z.infolist()} == {(2023, 11, 14, 22, 13, 20)}


@pytest.mark.parametrize("args, message", [
    (["{tmp}"], "kernelc: error: '{tmp}' is not a package that kernelc built: "
                "it has no kernelc.json and __init__.py"),
    (["{pkg}", "--version", "1.0-x"],
     "kernelc: error: '1.0-x' is not a valid version (PEP 440, e.g. 1.2.0)"),
    (["{pkg}", "--platform", "linux x86"],
     "kernelc: error: 'linux x86' is not a platform tag (e.g. linux_x86_64)"),
])
def test_wheel_errors(saxpy_pkg, tmp_path, args, message):
    args = [a.format(tmp=tmp_path, pkg=saxpy_pkg) for a in args]
    r = run_kernelc("wheel", *args, "-o", tmp_path / "dist")
    assert r.returncode == 1
    assert r.stderr.strip() == message.format(tmp=tmp_path)
    assert not (tmp_path / "dist").exists() or not os.listdir(tmp_path / "dist")


def test_source_date_epoch_must_be_a_number(saxpy_pkg, tmp_path):
    r = subprocess.run([str(KERNELC), "wheel", str(saxpy_pkg), "-o",
                        str(tmp_path)], capture_output=True, text=True,
                       env=dict(os.environ, SOURCE_DATE_EPOCH="soon"))
    assert r.returncode == 1
    assert r.stderr.strip() == ("kernelc: error: SOURCE_DATE_EPOCH='soon' is "
                                "not a number of seconds")


def test_same_sources_elsewhere_give_the_same_bytes(tmp_path):
    # One source and its header, copied to two directories at different
    # depths and built by absolute path from different working directories:
    # nothing in the output may depend on where they are.
    source = (EXAMPLES / "saxpy.cu").read_text().replace(
        "#include <kernelc.h>", '#include <kernelc.h>\n#include "inc/extra.h"')
    trees = [tmp_path / "one", tmp_path / "two" / "deeper"]
    for t in trees:
        (t / "src" / "inc").mkdir(parents=True)
        (t / "src" / "saxpy.cu").write_text(source)
        (t / "src" / "inc" / "extra.h").write_text("// nothing\n")
    wheels = []
    for t, cwd in zip(trees, [tmp_path, trees[1] / "src"]):
        r = subprocess.run(
            [str(KERNELC), "build", str(t / "src" / "saxpy.cu"), "-o",
             str(t / "out"), "--no-cache"], cwd=cwd, capture_output=True,
            text=True)
        assert r.returncode == 0, r.stderr
        wheels.append(wheel_of([t / "out" / "saxpy"], t / "dist"))
    files = [{str(p.relative_to(t / "out")): p.read_bytes()
              for p in sorted((t / "out").rglob("*")) if p.is_file()}
             for t in trees]
    assert files[0] == files[1]
    for name, data in files[0].items():
        assert str(tmp_path).encode() not in data, name
    assert b"from saxpy.cu; do not edit" in files[0]["saxpy/__init__.py"]
    with open(wheels[0], "rb") as a, open(wheels[1], "rb") as b:
        assert a.read() == b.read()


@pytest.fixture(scope="module")
def polar_venv(tmp_path_factory):
    """A fresh virtual environment with the polar example's wheel installed
    by pip; its directory."""
    tmp_path = tmp_path_factory.mktemp("polar_venv")
    path = wheel_of([EXAMPLES / "polar.cu", "--version", "0.3.0"],
                    tmp_path / "dist")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    # jax from the project's environment, without a network: a .pth file.
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(site, "project_env.pth"), "w") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    r = subprocess.run([str(py), "-m", "pip", "install", "--no-index",
                        "--disable-pip-version-check", path],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return venv


def test_pip_installs_the_wheel_into_a_fresh_venv(polar_venv, tmp_path):
    venv = polar_venv
    py = venv / "bin" / "python"
    code = textwrap.dedent("""\
        import os, jax, numpy as np, polar
        assert os.path.dirname(polar.__file__).startswith(os.environ["VENV"])
        rng = np.random.default_rng(0)
        x = rng.standard_normal(33).astype(np.float32)
        y = rng.standard_normal(33).astype(np.float32)
        r, theta = jax.jit(polar.polar)(x, y)
        np.testing.assert_allclose(r, np.hypot(x, y), rtol=1e-6)
        np.testing.assert_allclose(theta, np.arctan2(y, x), rtol=1e-6)
        print("ok")
        """)
    r = subprocess.run([str(py), "-c", code], capture_output=True, text=True,
                       cwd=tmp_path, env=dict(os.environ, VENV=str(venv)))
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr
    r = subprocess.run([str(py), "-m", "pip", "show", "polar"],
                       capture_output=True, text=True, check=True)
    assert "Version: 0.3.0" in r.stdout


def test_type_checkers_read_the_installed_stubs(polar_venv, tmp_path):
    # The package carries PEP 561's py.typed, so mypy reads its
    # __init__.pyi where pip installed it: a wrong call is an error in the
    # user's code, not a package mypy skips. jax and numpy are left
    # unchecked, for speed.
    (tmp_path / "use_polar.py").write_text(textwrap.dedent("""\
        import polar
        r, theta = polar.polar([1.0], [2.0])
        polar.polar([1.0], [2.0], 3.0)
        """))
    (tmp_path / "mypy.ini").write_text(textwrap.dedent("""\
        [mypy]
        cache_dir = mypy_cache
        [mypy-jax.*,numpy.*]
        follow_imports = skip
        """))
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini",
         "--python-executable", str(polar_venv / "bin" / "python"),
         "use_polar.py"],
        capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == (
        'use_polar.py:3: error: Too many arguments for "polar"  [call-arg]')
    assert "py.typed" not in r.stdout


def import_saxpy(saxpy_pkg, setup, after=""):
    """Imports the package in a new Python process after `setup` (code);
    returns what it printed: the ImportError's message or "imported", then
    what `after` (code) prints."""
    code = textwrap.dedent(setup) + textwrap.dedent("""\
        sys.path.insert(0, sys.argv[1])
        try:
            import saxpy
        except ImportError as e:
            print(e)
        else:
            print("imported")
        """) + textwrap.dedent(after)
    r = subprocess.run([sys.executable, "-c", code, str(saxpy_pkg.parent)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("fake, ok", [("0.7.2", False), ("0.8.0", False),
                                      ("0.8.0rc1", False), ("0.8.1", True),
                                      ("0.11.2", True), ("1.0.0", True),
                                      ("0.8", False), ("1.0", True), ("1", True)])
def test_import_checks_the_jaxlib_version(saxpy_pkg, fake, ok):
    out = import_saxpy(saxpy_pkg, f"""\
        import sys
        # jax checks its own jaxlib when first imported: import it with the
        # real version, then fake the version the package sees.
        import jax
        import jaxlib.version
        jaxlib.version.__version__ = "{fake}"
        """)
    if ok:
        assert out == "imported\n"
    else:
        assert out == (
            "saxpy was built against XLA FFI API 0.2 (the headers of jaxlib "
            "0.8.1) and works with jax and jaxlib 0.8.1 or newer; this "
            f"environment has jaxlib {fake}. Upgrade with: pip install "
            "'jax>=0.8.1' 'jaxlib>=0.8.1'\n")


def test_import_without_jaxlib_says_so_before_importing_jax(saxpy_pkg):
    out = import_saxpy(saxpy_pkg, """\
        import sys
        sys.modules["jaxlib"] = None  # as if not installed
        """, after="""\
        print(sorted(m for m in ("jax", "numpy") if m in sys.modules))
        """)
    assert out == (
        "saxpy needs jax and jaxlib 0.8.1 or newer (built against XLA FFI API "
        "0.2), and jaxlib is not installed: pip install 'jax>=0.8.1' "
        "'jaxlib>=0.8.1'\n[]\n")


def test_an_unreadable_jaxlib_version_warns_and_imports(saxpy_pkg):
    code = textwrap.dedent("""\
        import sys, warnings
        import jax
        import jaxlib.version
        jaxlib.version.__version__ = "nightly"
        sys.path.insert(0, sys.argv[1])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import saxpy
        print([(w.category.__name__, str(w.message)) for w in caught])
        """)
    r = subprocess.run([sys.executable, "-c", code, str(saxpy_pkg.parent)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == str([(
        "RuntimeWarning",
        "saxpy cannot read the version of jaxlib ('nightly') to check it; it "
        "needs jax and jaxlib 0.8.1 or newer (built against XLA FFI API 0.2)")]) + "\n"


def test_a_registration_failure_names_package_target_and_api(saxpy_pkg):
    # A jaxlib that no longer accepts the library's FFI API rejects the
    # handler when it is registered, at import.
    code = textwrap.dedent("""\
        import json, os, sys
        import jax
        import jaxlib.version
        def reject(name, *args, **kwargs):
            raise ValueError("unsupported XLA FFI API version 0.2")
        jax.ffi.register_ffi_target = reject
        sys.path.insert(0, sys.argv[1])
        try:
            import saxpy
        except ImportError as e:
            print(e)
            print(isinstance(e.__cause__, ValueError))
        with open(os.path.join(sys.argv[1], "saxpy", "kernelc.json")) as f:
            print(json.load(f)["kernels"][0]["ffi_target"])
        print(jaxlib.version.__version__)
        """)
    r = subprocess.run([sys.executable, "-c", code, str(saxpy_pkg.parent)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    message, cause, target, version = r.stdout.splitlines()
    assert message == (
        f"saxpy: jax could not register the XLA FFI handler of target '{target}' "
        "(cpu): ValueError: unsupported XLA FFI API version 0.2. The package's "
        "library was built against XLA FFI API 0.2 (the headers of jaxlib 0.8.1) "
        "and needs a jaxlib that accepts handlers of that API; this environment "
        f"has jaxlib {version}. Rebuild the package with kernelc for this jaxlib, "
        "or install a jaxlib that supports XLA FFI API 0.2")
    assert cause == "True"
