"""The kernelc command line: exit codes, the JSON round trip, deterministic
and all-or-nothing output, and the code the CPU backend generates."""

import concurrent.futures
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from conftest import EXAMPLES, run_kernelc


def tree_digest(path):
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def test_version_and_help():
    r = run_kernelc("--version")
    assert r.returncode == 0
    # kernelc's version, then the NVRTC the cuda target uses (or why none).
    version, nvrtc = r.stdout.splitlines()
    assert version == "kernelc 0.1.0"
    assert nvrtc.startswith(("NVRTC ", "no usable NVRTC for the cuda target"))
    r = run_kernelc("--help")
    assert r.returncode == 0
    for sub in ("build", "inspect", "emit"):
        assert sub in r.stdout


@pytest.mark.parametrize("args, message", [
    (["build", "nope.cu", "-o", "x"], "kernelc: error: no such file: 'nope.cu'"),
    (["build", str(EXAMPLES / "saxpy.cu"), "-o", "x", "--name", "2bad"],
     "kernelc: error: '2bad' is not a valid Python package name: use --name"),
    (["build", str(EXAMPLES / "saxpy.cu"), "-o", "x", "--target", "tpu"],
     "kernelc: error: unknown target 'tpu' (expected cpu or cuda)"),
    (["build", str(EXAMPLES / "saxpy.cu")],
     "kernelc: error: -o is required; see --help"),
    (["build", "-o", "x"], "kernelc: error: SRC is required; see --help"),
    (["frobnicate"], "kernelc: error: unknown command 'frobnicate'"),
    (["build", str(EXAMPLES / "saxpy.cu"), "-o", "x", "--name", ""],
     "kernelc: error: --name is empty: give the package a name, or leave "
     "--name out to name it after the first source"),
    (["build", str(EXAMPLES / "saxpy.cu"), "-o", "x", "--name", "os"],
     "kernelc: error: package name 'os' is the name of a module of Python's "
     "standard library (Python "),
    (["build", str(EXAMPLES / "saxpy.cu"), "-o", "x", "--name", "jax"],
     "kernelc: error: package name 'jax' is the name of 'jax', which a JAX "
     "program imports: importing one would find the other; choose another "
     "with --name (e.g. --name jax_ops)"),
    (["build", "saxpy.txt", "-o", "x"],
     "kernelc: error: 'saxpy.txt' is not a kernel source: kernelc reads "
     "annotated .cu and .cc sources, and JSON specs (.json)"),
])
def test_usage_errors_exit_1(tmp_path, args, message):
    r = run_kernelc(*args, cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert message in r.stderr
    # Every line kernelc writes for a usage error is a diagnostic.
    assert all(line.startswith("kernelc: error: ")
               for line in r.stderr.splitlines()), r.stderr


def test_package_names_that_shadow_modules_are_refused(tmp_path):
    # The standard library's list comes from the Python that built kernelc:
    # every module this Python lists is refused, whatever it is.
    for name in sorted(sys.stdlib_module_names)[::25] + ["numpy", "scipy"]:
        if not name.isidentifier() or name.startswith("_"):
            continue
        r = run_kernelc("build", str(EXAMPLES / "saxpy.cu"), "-o", "x",
                        "--name", name, cwd=tmp_path)
        assert r.returncode == 1, name
        assert f"package name '{name}' is the name of" in r.stderr
    assert not (tmp_path / "x").exists()


def test_toolchain_failure_exits_2(tmp_path):
    env = dict(os.environ, KERNELC_CXX=str(tmp_path / "no-such-compiler"))
    r = subprocess.run([str(pathlib.Path(__file__).parents[2] / "bazel-bin/tools/kernelc"),
                        "build", str(EXAMPLES / "saxpy.cu"), "-o", str(tmp_path)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 2
    assert "internal error" in r.stderr and "no-such-compiler" in r.stderr
    assert not (tmp_path / "saxpy").exists()


def test_inspect_output_builds_the_same_kernel(tmp_path):
    shutil.copy(EXAMPLES / "saxpy.cu", tmp_path)
    r = run_kernelc("inspect", "saxpy.cu", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (tmp_path / "spec.json").write_text(r.stdout)
    # The spec prints back unchanged, and builds a working package.
    again = run_kernelc("inspect", "spec.json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == r.stdout
    got = built_spec_call(tmp_path, "cli_from_spec", "np.arange(5, dtype=np.float32)",
                          "saxpy(x, x, 3.0)")
    assert got == "[0.0, 4.0, 8.0, 12.0, 16.0]"


def built_spec_call(tmp_path, name, x, call):
    """Builds tmp_path/spec.json as package `name` and prints, in a process
    of its own, what `call` of the package gives for `x` (a NumPy
    expression), as a list."""
    b = run_kernelc("build", "spec.json", "-o", "out", "--name", name, cwd=tmp_path)
    assert b.returncode == 0, b.stderr
    code = (f"import numpy as np, {name} as m; x = {x}; "
            f"print(np.asarray(m.{call}).tolist())")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path / "out",
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_a_spec_takes_the_block_features_of_its_source(tmp_path):
    # A spec that states no block-level features for a kernel whose body
    # uses __shared__ and __syncthreads: the source decides, so the kernel
    # runs under the block executor (and links) as the annotated one does.
    (tmp_path / "k.cu").write_text(r"""
#include <kernelc.h>
__global__ void block_sums(const float* x, float* sums) {
  __shared__ float buf[64];
  buf[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int i = 0; i < 64; ++i) s += buf[i];
    sums[blockIdx.x] = s;
  }
}
""")
    (tmp_path / "spec.json").write_text(json.dumps({"kernels": [{
        "name": "block_sums", "kind": "global", "source": "k.cu",
        "grid": ["n"], "block": [64],
        "params": [
            {"name": "x", "role": "in", "dtype": "float32", "shape": "n"},
            {"name": "sums", "role": "out", "dtype": "float32", "shape": "n / 64"}],
    }]}))
    got = built_spec_call(tmp_path, "spec_blocks", "np.arange(192, dtype=np.float32)",
                          "block_sums(x)")
    assert got == str([float(sum(range(b * 64, b * 64 + 64))) for b in range(3)])

def test_build_is_deterministic(tmp_path):
    for d in ("a", "b"):
        r = run_kernelc("build", EXAMPLES / "polar.cu", "-o", tmp_path / d)
        assert r.returncode == 0, r.stderr
    a, b = tree_digest(tmp_path / "a"), tree_digest(tmp_path / "b")
    assert a == b
    assert any(name.endswith(".so") for name in a)


def test_rebuild_keeps_unchanged_files_and_drops_stale_library(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text((EXAMPLES / "saxpy.cu").read_text())
    out = tmp_path / "out"
    assert run_kernelc("build", src, "-o", out).returncode == 0
    pkg = out / "k"
    before = {p.name: p.stat().st_mtime_ns for p in pkg.iterdir()}
    assert run_kernelc("build", src, "-o", out).returncode == 0
    assert {p.name: p.stat().st_mtime_ns for p in pkg.iterdir()} == before

    src.write_text(src.read_text().replace("a * x[i] + y[i]", "a * x[i] - y[i]"))
    assert run_kernelc("build", src, "-o", out).returncode == 0
    libs = sorted(p.name for p in pkg.glob("*.so"))
    assert len(libs) == 1 and libs[0] not in before
    assert sorted(p.name for p in out.iterdir()) == ["k"]  # no scratch left


def test_failed_build_leaves_previous_package_intact(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text((EXAMPLES / "saxpy.cu").read_text())
    out = tmp_path / "out"
    assert run_kernelc("build", src, "-o", out).returncode == 0
    before = tree_digest(out)
    src.write_text(src.read_text().replace("KC_IN(\"n\") const float* y",
                                           "const float* y"))
    r = run_kernelc("build", src, "-o", out)
    assert r.returncode == 1
    assert "pointer parameter 'y' of kernel 'saxpy' needs a role" in r.stderr
    assert tree_digest(out) == before


def all_files(path):
    """Every file under path, dot files included."""
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")
                  if not p.is_dir())


def test_failed_install_leaves_previous_package_intact(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text((EXAMPLES / "saxpy.cu").read_text())
    out = tmp_path / "out"
    assert run_kernelc("build", src, "-o", out, "--no-cache").returncode == 0
    before = tree_digest(out)
    # The next version's library name, from a build elsewhere; then a
    # directory where that library must go makes its install fail after
    # the other files are ready.
    src.write_text(src.read_text() + "// version 2\n")
    assert run_kernelc("build", src, "-o", tmp_path / "probe",
                       "--no-cache").returncode == 0
    (lib,) = (tmp_path / "probe" / "k").glob("_kernelc_*.so")
    (out / "k" / lib.name).mkdir()
    r = run_kernelc("build", src, "-o", out, "--no-cache")
    assert r.returncode == 1, r.stderr
    assert f"cannot write '{out}/k/{lib.name}': it is a directory" in r.stderr
    assert tree_digest(out) == before
    assert all_files(out) == sorted(before)  # no temporary or scratch files
    (out / "k" / lib.name).rmdir()
    assert run_kernelc("build", src, "-o", out, "--no-cache").returncode == 0
    assert tree_digest(out) == tree_digest(tmp_path / "probe")


def test_concurrent_installs_into_one_directory(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text((EXAMPLES / "saxpy.cu").read_text())
    assert run_kernelc("build", src, "-o", tmp_path / "first").returncode == 0
    out = tmp_path / "out"
    # From the build cache, each build only installs: eight writers of the
    # same files at once.
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(
            lambda i: run_kernelc("build", src, "-o", out), range(8)))
    for r in results:
        assert r.returncode == 0 and r.stderr == "", r.stderr
    assert tree_digest(out) == tree_digest(tmp_path / "first")
    assert all_files(out) == all_files(tmp_path / "first")


def test_compile_error_in_host_code_is_reported_and_writes_nothing(tmp_path):
    # Valid for the frontend, but the kernel calls a function that only
    # exists on the GPU; the CPU compile fails with the compiler's message.
    src = tmp_path / "gpuonly.cu"
    src.write_text('#include <kernelc.h>\n'
                   '__device__ float gpu_only(float);\n'
                   'KC_GRID("n")\n'
                   '__global__ void k(KC_IN("n") const float* x, '
                   'KC_DERIVED("x.size") int64_t n, KC_OUT("x") float* out) {\n'
                   '  out[0] = gpu_only(x[0]);\n}\n')
    r = run_kernelc("build", src, "-o", tmp_path / "out")
    assert r.returncode == 1, r.stderr
    assert "linking the kernels for the CPU failed" in r.stderr
    assert "gpu_only" in r.stderr
    assert not (tmp_path / "out" / "gpuonly").exists()
    leftovers = [p.name for p in (tmp_path / "out").iterdir()] if (tmp_path / "out").exists() else []
    assert leftovers == []


def test_elementwise_grid_loop_vectorizes(tmp_path):
    """The saxpy grid loop, compiled for x86-64-v3, uses 256-bit FMA."""
    if os.uname().machine != "x86_64":
        pytest.skip("x86-64 only: the check reads AVX2 instructions")
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) is not installed")
    assert run_kernelc("build", EXAMPLES / "saxpy.cu", "-o", tmp_path).returncode == 0
    lib = next((tmp_path / "saxpy").glob("*.so"))
    asm = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(lib)],
                         capture_output=True, text=True, check=True).stdout
    funcs = re.split(r"\n(?=[0-9a-f]+ <)", asm)
    v3 = [f for f in funcs
          if re.match(r"[0-9a-f]+ <kc_saxpy_saxpy_\w+_cpu_entry\.arch_x86-64-v3", f)]
    assert v3, "no x86-64-v3 clone of the saxpy grid loop"
    assert re.search(r"vfmadd\w*ps\s+.*%ymm", v3[0]), "the x86-64-v3 loop is not vectorized"


# What /proc/cpuinfo calls the features of x86-64-v3 (and of v2 below it).
X86_64_V3_FLAGS = {"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2",
                   "ssse3", "avx", "avx2", "bmi1", "bmi2", "f16c", "fma",
                   "abm", "movbe", "xsave"}


def test_the_cpu_runs_the_clone_it_has(tmp_path):
    """On a CPU with x86-64-v3 the library runs the AVX2/FMA clone, where
    a * x + y is one fused multiply-add, rounded once; elsewhere the baseline
    clone rounds the product first. With a = x = 1 + 2^-12 and
    y = -(1 + 2^-11) the exact result is 2^-24, and the product alone
    rounds to -y."""
    if os.uname().machine != "x86_64":
        pytest.skip("x86-64 only: the clones are x86-64's")
    try:
        flags = set(re.search(r"^flags\s*:(.*)$",
                              pathlib.Path("/proc/cpuinfo").read_text(),
                              re.M).group(1).split())
    except (OSError, AttributeError):
        pytest.skip("no CPU flags in /proc/cpuinfo")
    r = run_kernelc("build", EXAMPLES / "saxpy.cu", "-o", tmp_path, "--name",
                    "clones")
    assert r.returncode == 0, r.stderr
    code = ("import numpy as np, clones; a = np.float32(1 + 2**-12); "
            "print(float(np.asarray(clones.saxpy(np.array([a]), "
            "np.array([-(1 + 2**-11)], np.float32), float(a)))[0]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    fused = X86_64_V3_FLAGS <= flags
    assert float(out.stdout) == (2.0**-24 if fused else 0.0)


def test_source_name_that_is_not_utf8_is_a_user_error(tmp_path):
    # The generated Python and JSON name the sources, and hold UTF-8 only.
    src = os.fsencode(tmp_path) + b"/s\xffx.cu"
    with open(src, "wb") as f:
        f.write((EXAMPLES / "saxpy.cu").read_bytes())
    out = tmp_path / "out"
    kernelc = os.fsencode(pathlib.Path(__file__).parents[2] / "bazel-bin/tools/kernelc")
    for args in ([b"build", src, b"-o", os.fsencode(out), b"--name", b"sx"],
                 [b"build", src, b"-o", os.fsencode(out), b"--name", b"sx",
                  b"--no-cache"],
                 [b"inspect", src],
                 [b"emit", src, b"-o", os.fsencode(out), b"--name", b"sx"]):
        r = subprocess.run([kernelc, *args], capture_output=True)
        assert r.returncode == 1, r.stderr
        assert b"kernelc: error: the file name '" in r.stderr
        assert b"s\\xffx.cu' is not valid UTF-8" in r.stderr
        assert not out.exists()
