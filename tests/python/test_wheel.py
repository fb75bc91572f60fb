"""kernelc wheel: PEP 427 contents, platform tags that auditwheel agrees
with, core metadata that packaging reads, reproducible bytes, an install with
pip into a fresh virtual environment (pip check, Requires-Python), stubs
that mypy checks calls with, and the import-time jaxlib check."""

import base64
import email.parser
import hashlib
import importlib.resources
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile

import pytest
from packaging.metadata import Metadata
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import parse_wheel_filename

from conftest import EXAMPLES, KERNELC, ROOT, run_kernelc

VENV_BIN = os.path.dirname(sys.executable)


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


def policies():
    """auditwheel's manylinux policies, by name."""
    text = (importlib.resources.files("auditwheel.policy") /
            "manylinux-policy.json").read_text()
    return {p["name"]: p for p in json.loads(text)}


def auditwheel_show(path):
    r = subprocess.run([os.path.join(VENV_BIN, "auditwheel"), "show", "--json",
                        path], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def auditwheel_tags(path):
    """The platform tags auditwheel gives the wheel at `path`: its policy's
    name, then its aliases (as `auditwheel repair` writes them)."""
    show = auditwheel_show(path)
    # Nothing to graft in: the tag holds for the wheel as it is.
    assert show["external_libs"] == {}
    tag = show["overall_tag"]
    name, arch = re.fullmatch(r"(manylinux_\d+_\d+|linux)_(.+)", tag).groups()
    aliases = policies()[name]["aliases"] if name in policies() else []
    return [tag] + [f"{a}_{arch}" for a in aliases]


def wheel_tags(z):
    info = next(n for n in z.namelist() if n.endswith(".dist-info/WHEEL"))
    lines = z.read(info).decode().splitlines()
    return [line.split("-", 2)[2] for line in lines if line.startswith("Tag: ")]


def test_wheel_contents(saxpy_pkg, tmp_path):
    path = wheel_of([saxpy_pkg, "--version", "1.2.0"], tmp_path)
    tags = auditwheel_tags(path)
    assert os.path.basename(path) == \
        f"saxpy-1.2.0-py3-none-{'.'.join(sorted(tags))}.whl"
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
        assert z.read("saxpy/py.typed") == b""
        assert z.read("saxpy-1.2.0.dist-info/WHEEL").decode() == (
            "Wheel-Version: 1.0\nGenerator: kernelc 0.1.0\n"
            "Root-Is-Purelib: false\n" +
            "".join(f"Tag: py3-none-{t}\n" for t in tags))
        metadata = z.read("saxpy-1.2.0.dist-info/METADATA").decode()
        head = metadata.split("\n\n")[0].splitlines()
        assert head == ["Metadata-Version: 2.1", "Name: saxpy",
                        "Version: 1.2.0",
                        "Summary: JAX ops compiled by kernelc 0.1.0: saxpy, "
                        "saxpy_bwd",
                        "Requires-Python: >=3.11",
                        "Requires-Dist: jax>=0.8.1",
                        "Requires-Dist: jaxlib>=0.8.1",
                        "Requires-Dist: numpy",
                        "Description-Content-Type: text/plain"]
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


@pytest.mark.parametrize("source, extra", [
    ("saxpy.cu", []),
    ("saxpy.cu", ["--target", "cpu,cuda", "--cuda-arch", "sm_80"]),
    ("histogram.cc", []),
])
def test_platform_tags_agree_with_auditwheel(tmp_path, source, extra):
    path = wheel_of([EXAMPLES / source, *extra], tmp_path)
    tags = auditwheel_tags(path)
    # A library that jaxlib's own wheels would run beside: a manylinux tag,
    # which PyPI accepts.
    assert tags[0].startswith("manylinux_")
    with zipfile.ZipFile(path) as z:
        assert wheel_tags(z) == tags
    _, _, _, file_tags = parse_wheel_filename(os.path.basename(path))
    assert file_tags == {Tag("py3", "none", t) for t in tags}


def test_an_older_platform_names_the_symbol_versions(saxpy_pkg, tmp_path):
    # manylinux2014 (glibc 2.17, GCC 4.8's libstdc++), older than the
    # library's toolchain: the error lists what the policy lacks.
    path = wheel_of([saxpy_pkg], tmp_path / "auto")
    arch = auditwheel_tags(path)[0].split("_", 3)[3]
    with zipfile.ZipFile(path) as z:
        lib = os.path.basename(next(n for n in z.namelist()
                                    if n.endswith(".so")))
    provided = policies()["manylinux_2_17"]["symbol_versions"][arch]
    missing = []
    for soname, versions in sorted(
            auditwheel_show(path)["versioned_symbols"].items()):
        lacking = sorted(v for v in versions
                         if v.split("_")[0] in provided and
                         v.split("_", 1)[1] not in provided[v.split("_")[0]])
        if lacking:
            missing.append(f"kernelc: note: '{lib}' needs {', '.join(lacking)} "
                           f"from {soname}\n")
    assert missing, "the library's toolchain is not newer than manylinux2014"
    r = run_kernelc("wheel", saxpy_pkg, "--platform", f"manylinux2014_{arch}",
                    "-o", tmp_path / "dist")
    assert r.returncode == 1
    assert r.stderr == (
        f"kernelc: error: '{lib}' cannot be tagged manylinux2014_{arch}\n" +
        "".join(missing) +
        f"kernelc: note: the widest tag it can have is "
        f"{auditwheel_tags(path)[0]}\n")
    assert not (tmp_path / "dist").exists()


def test_a_newer_platform_and_linux_are_accepted(saxpy_pkg, tmp_path):
    path = wheel_of([saxpy_pkg], tmp_path / "auto")
    arch = auditwheel_tags(path)[0].split("_", 3)[3]
    for tag in [f"manylinux_2_41_{arch}", f"linux_{arch}"]:
        path = wheel_of([saxpy_pkg, "--platform", tag], tmp_path / tag)
        assert path.endswith(f"-py3-none-{tag}.whl")
        with zipfile.ZipFile(path) as z:
            assert wheel_tags(z) == [tag]


@pytest.mark.parametrize("tag, message", [
    ("win_amd64", "'win_amd64' is not a Linux platform tag: "),
    ("macosx_11_0_arm64", "'macosx_11_0_arm64' is not a Linux platform tag: "),
    ("any", "'any' is not a Linux platform tag: "),
    ("musllinux_1_2_{arch}", "'musllinux_1_2_{arch}' is a platform tag for "
                             "musl libc: "),
    ("manylinux_2_17_{other}", "'manylinux_2_17_{other}' is a platform tag "
                               "for {other}: "),
    ("manylinux_2_99_{arch}", "'manylinux_2_99_{arch}' is not a manylinux "
                              "policy that kernelc knows (auditwheel 6.8.2's "
                              "for {arch}: manylinux_2_41_{arch}, "),
])
def test_platforms_that_do_not_fit_the_library(saxpy_pkg, tmp_path, tag,
                                               message):
    path = wheel_of([saxpy_pkg], tmp_path / "auto")
    arch = auditwheel_tags(path)[0].split("_", 3)[3]
    other = "aarch64" if arch != "aarch64" else "x86_64"
    tag, message = (t.format(arch=arch, other=other) for t in (tag, message))
    r = run_kernelc("wheel", saxpy_pkg, "--platform", tag, "-o",
                    tmp_path / "dist")
    assert r.returncode == 1
    assert r.stderr.startswith("kernelc: error: " + message), r.stderr
    assert not (tmp_path / "dist").exists()


def test_metadata_reads_as_packaging_reads_it(saxpy_pkg, tmp_path):
    path = wheel_of([saxpy_pkg, "--version", "v2.0-RC1", "--dist-name",
                     "Fast.Saxpy", "--summary", "SAXPY, fast",
                     "--requires", "scipy >= 1.11",
                     "--requires", "optax; python_version >= '3.12'"],
                    tmp_path)
    name, version, _, _ = parse_wheel_filename(os.path.basename(path))
    assert (name, str(version)) == ("fast-saxpy", "2.0rc1")
    assert os.path.basename(path).startswith("fast_saxpy-2.0rc1-py3-none-")
    with zipfile.ZipFile(path) as z:
        text = z.read("fast_saxpy-2.0rc1.dist-info/METADATA").decode()
        wheel = email.parser.Parser().parsestr(
            z.read("fast_saxpy-2.0rc1.dist-info/WHEEL").decode())
        assert {n.split("/")[0] for n in z.namelist()} == \
            {"saxpy", "fast_saxpy-2.0rc1.dist-info"}
    assert wheel["Root-Is-Purelib"] == "false"
    headers = email.parser.Parser().parsestr(text)
    assert headers["Name"] == "Fast.Saxpy"
    assert headers.get_all("Requires-Dist") == [
        "jax>=0.8.1", "jaxlib>=0.8.1", "numpy", "scipy >= 1.11",
        "optax; python_version >= '3.12'"]
    m = Metadata.from_email(text, validate=True)
    assert (m.name, str(m.version), m.summary) == \
        ("Fast.Saxpy", "2.0rc1", "SAXPY, fast")
    assert m.requires_python == SpecifierSet(">=3.11")
    assert [str(r) for r in m.requires_dist] == [
        str(Requirement(r)) for r in headers.get_all("Requires-Dist")]
    assert m.description_content_type == "text/plain"


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
     "kernelc: error: '1.0-x' is not a valid version (PEP 440, e.g. 1.2.0, "
     "1.2rc1, 1.2.post1, 1.2.dev3, 1!1.2+local.7)"),
    (["{pkg}", "--dist-name", "my ops"],
     "kernelc: error: 'my ops' is not a valid distribution name: letters, "
     "digits, '.', '-' and '_', starting and ending with a letter or digit"),
    (["{pkg}", "--requires", "scipy>=1.11,"],
     None),
    (["{pkg}", "--requires", "scipy=1.11"],
     "kernelc: error: 'scipy=1.11' is not a valid requirement (PEP 508, e.g. "
     "'scipy>=1.11' or 'cupy-cuda12x; sys_platform == \"linux\"'): expected "
     "semicolon (after name with no version specifier) or end at column 6"),
])
def test_wheel_errors(saxpy_pkg, tmp_path, args, message):
    args = [a.format(tmp=tmp_path, pkg=saxpy_pkg) for a in args]
    r = run_kernelc("wheel", *args, "-o", tmp_path / "dist")
    if message is None:  # packaging accepts it too
        assert r.returncode == 0, r.stderr
        return
    assert r.returncode == 1
    assert r.stderr.strip() == message.format(tmp=tmp_path)
    assert not (tmp_path / "dist").exists() or not os.listdir(tmp_path / "dist")


def test_metadata_is_checked_before_sources_are_built(tmp_path):
    # A build would leave its entry in the cache.
    cache = tmp_path / "cache"
    r = run_kernelc("wheel", EXAMPLES / "saxpy.cu", "--version", "one",
                    "--cache-dir", cache, "-o", tmp_path / "dist")
    assert r.returncode == 1
    assert r.stderr.startswith("kernelc: error: 'one' is not a valid version")
    assert not cache.exists()


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


def fresh_venv(path):
    """A new virtual environment at `path` that sees this environment's
    packages (jax, numpy) through a .pth file, since nothing can be
    downloaded; returns its Python."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    py = path / "bin" / "python"
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(site, "project_env.pth"), "w") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    return py


def pip_install(py, *wheels):
    r = subprocess.run([str(py), "-m", "pip", "install", "--no-index",
                        "--disable-pip-version-check", *map(str, wheels)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_pip_installs_the_wheel_into_a_fresh_venv(tmp_path):
    path = wheel_of([EXAMPLES / "polar.cu", "--version", "0.3.0",
                     "--dist-name", "polar-ops", "--requires", "numpy>=1.20"],
                    tmp_path / "dist")
    venv = tmp_path / "venv"
    py = fresh_venv(venv)
    pip_install(py, path)
    code = textwrap.dedent("""\
        import os, jax, numpy as np, polar
        assert os.path.dirname(polar.__file__).startswith(os.environ["VENV"])
        assert os.path.exists(os.path.join(os.path.dirname(polar.__file__),
                                           "py.typed"))
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
    r = subprocess.run([str(py), "-m", "pip", "show", "polar-ops"],
                       capture_output=True, text=True, check=True)
    assert "Version: 0.3.0" in r.stdout
    assert "Requires: jax, jaxlib, numpy" in r.stdout
    # Every requirement of every installed distribution is met.
    r = subprocess.run([str(py), "-m", "pip", "check",
                        "--disable-pip-version-check"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "No broken requirements found.\n", \
        r.stdout + r.stderr


def older_python():
    """A Python older than 3.11 (pyenv's, say), or None."""
    candidates = [shutil.which(f"python3.{m}") for m in (10, 9)]
    pyenv = os.path.expanduser("~/.pyenv/versions")
    if os.path.isdir(pyenv):
        candidates += [os.path.join(pyenv, v, "bin", "python3")
                       for v in sorted(os.listdir(pyenv))
                       if re.fullmatch(r"3\.(9|10)\.\d+", v)]
    for c in candidates:
        if c and subprocess.run([c, "-m", "pip", "--version"],
                                capture_output=True).returncode == 0:
            return c
    return None


def test_an_older_python_refuses_the_wheel(saxpy_pkg, tmp_path):
    # jax 0.8.1, the oldest the package works with, needs Python 3.11; pip
    # says so instead of failing to find jaxlib.
    python = older_python()
    if python is None:
        pytest.skip("needs a Python older than 3.11 (with pip)")
    path = wheel_of([saxpy_pkg], tmp_path)
    r = subprocess.run([python, "-m", "pip", "install", "--dry-run",
                        "--no-deps", "--no-index", "--disable-pip-version-check",
                        path], capture_output=True, text=True)
    assert r.returncode != 0
    version = subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"],
        capture_output=True, text=True, check=True).stdout.strip()
    assert (f"ERROR: Package 'saxpy' requires a different Python: {version} "
            "not in '>=3.11'") in r.stderr, r.stderr


TYPED_OPS = """\
#include <kernelc.h>

KC_GRID("out.size")
__global__ void affine(KC_IN("n") const float* x, float a, int32_t shift,
                       bool negate, KC_DERIVED("x.size") int64_t n,
                       KC_OUT("x") float* out, KC_OUT("x") float* twice) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = a * x[i] + shift;
    out[i] = negate ? -v : v;
    twice[i] = 2 * out[i];
  }
}
"""

# Calls that the runtime accepts: arrays and array-likes for tensors; Python
# and NumPy numbers and concrete 0-d NumPy and JAX arrays for scalars. The
# script runs too, and checks the numbers.
TYPED_CALLS = """\
import jax
import jax.numpy as jnp
import numpy as np

import typed_ops
from typed_ops import *  # noqa: F403

x = np.arange(4, dtype=np.float32)
want = 2 * x + 1
calls: list[tuple[jax.Array, jax.Array]] = [
    typed_ops.affine(x, 2.0, 1, False),
    typed_ops.affine(jnp.asarray(x), 2, np.int32(1), np.bool_(False)),
    typed_ops.affine(x, np.float32(2), np.int64(1), False),
    typed_ops.affine(x, np.asarray(2.0, np.float32), np.asarray(1, np.int32),
                     np.asarray(False)),
    typed_ops.affine(x, jnp.float32(2), jnp.asarray(1, jnp.int32),
                     jnp.asarray(False)),
    affine(x, np.float64(2), 1, negate=False),  # noqa: F405
]
out, twice = jax.jit(lambda v: typed_ops.affine(v, 2.0, 1, True))(x)
np.testing.assert_array_equal(out, -want)
for out, twice in calls:
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(twice, 2 * want)
print("ok")
"""

# Calls that the runtime refuses, each on its own line, with the error code
# mypy gives it.
WRONG_CALLS = [
    ('typed_ops.affine(x, "2.0", 1, False)', "arg-type"),
    ("typed_ops.affine(x, 2.0, 1.5, False)", "arg-type"),
    ('typed_ops.affine(x, 2.0, 1, "yes")', "arg-type"),
    ('typed_ops.affine("x", 2.0, 1, False)', "arg-type"),
    ("typed_ops.affine(x, matrix, 1, False)", "arg-type"),
    ("typed_ops.affine(x)", "call-arg"),
    ("typed_ops.affine(x, 2.0, 1, False, 3)", "call-arg"),
    ("typed_ops.affine(x, 2.0, 1, False, n=4)", "call-arg"),
    ("y: jax.Array = typed_ops.affine(x, 2.0, 1, False)", "assignment"),
    ("typed_ops.scale(x)", "attr-defined"),
]


def test_mypy_checks_calls_against_the_installed_stubs(tmp_path):
    src = tmp_path / "typed_ops.cu"
    src.write_text(TYPED_OPS)
    path = wheel_of([src], tmp_path / "dist")
    venv = tmp_path / "venv"
    py = fresh_venv(venv)
    pip_install(py, path)
    good = tmp_path / "good.py"
    good.write_text(TYPED_CALLS)
    bad = tmp_path / "bad.py"
    head = "import jax\nimport numpy as np\n\nimport typed_ops\n\n" \
        "x = np.arange(4, dtype=np.float32)\n" \
        "matrix = np.zeros((2, 2), np.float32)\n"
    bad.write_text(head + "".join(call + "\n" for call, _ in WRONG_CALLS))
    # The installed package (with py.typed), as a user's mypy finds it.
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-executable",
         str(py), "--cache-dir", str(ROOT / ".cache" / "mypy"),
         "--no-error-summary", "--hide-error-context", str(good), str(bad)],
        capture_output=True, text=True, cwd=tmp_path)
    errors = sorted(
        (int(m.group(1)), m.group(2))
        for m in re.finditer(r"^bad\.py:(\d+): error: .*\[([a-z-]+)\]$",
                             r.stdout, re.M))
    first = head.count("\n") + 1
    assert errors == [(first + i, code) for i, (_, code) in enumerate(WRONG_CALLS)], \
        r.stdout + r.stderr
    assert "good.py" not in r.stdout, r.stdout
    # The accepted calls run.
    r = subprocess.run([str(py), str(good)], capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == "ok\n", r.stderr


def test_stubs_match_the_runtime(tmp_path):
    # mypy's stubtest imports each package and holds its stub to it: the
    # same functions, parameters and __all__.
    out = tmp_path / "out"
    for args in ([EXAMPLES / "saxpy.cu", "--target", "cpu,cuda"],
                 [EXAMPLES / "histogram.cc"],
                 [ROOT / "tests" / "python" / "autodiff_kernels.cu",
                  "--name", "autodiff"]):
        run_kernelc("build", *args, "-o", out, check=True)
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\ncache_dir = {ROOT / '.cache' / 'mypy'}\n")
    r = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "--mypy-config-file",
         str(config), "saxpy", "histogram", "autodiff"],
        capture_output=True, text=True, cwd=out,
        env=dict(os.environ, PYTHONPATH=str(out)))
    assert r.returncode == 0, r.stdout + r.stderr


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
