"""kernelc build's cache: a rebuild with nothing changed runs no compiler,
an edited header misses, --no-cache and the cache directory options, and
concurrent builds sharing one cache directory."""

import concurrent.futures
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import KERNELC

REAL_CXX = "/usr/lib/llvm-19/bin/clang++"

SOURCE = textwrap.dedent("""\
    #include <kernelc.h>
    #include "scale.h"

    KC_GRID("out.size")
    __global__ void scaled(KC_IN("n") const float* x,
                           KC_DERIVED("x.size") int64_t n,
                           KC_OUT("x") float* out) {
      int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
      if (i < n) out[i] = SCALE * x[i];
    }
    """)


@pytest.fixture
def project(tmp_path):
    """A kernel that includes a header, a counting clang++ and a private
    cache directory."""
    src = tmp_path / "src"
    (src / "inc").mkdir(parents=True)
    (src / "scaled.cu").write_text(SOURCE)
    (src / "inc" / "scale.h").write_text("#define SCALE 2.0f\n")
    count = tmp_path / "cxx_calls"
    count.write_text("")
    cxx = tmp_path / "clang++"
    cxx.write_text(f'#!/bin/sh\necho "$@" >> "{count}"\nexec {REAL_CXX} "$@"\n')
    cxx.chmod(0o755)
    env = dict(os.environ, KERNELC_CXX=str(cxx),
               KERNELC_CACHE_DIR=str(tmp_path / "cache"))

    class Project:
        root = tmp_path
        cache = tmp_path / "cache"

        def build(self, out, *extra, env_update=None, check=True,
                  kernelc=KERNELC):
            e = dict(env, **(env_update or {}))
            r = subprocess.run(
                [str(kernelc), "build", str(src / "scaled.cu"), "-I",
                 str(src / "inc"), "-o", str(tmp_path / out), *extra],
                env=e, capture_output=True, text=True)
            if check:
                assert r.returncode == 0, r.stderr
            return r

        def compiler_calls(self):
            return len(count.read_bytes().splitlines())

        def header(self, text):
            (src / "inc" / "scale.h").write_text(text)

        def run(self, out):
            """Imports OUT/scaled in a fresh interpreter; returns scaled(x)."""
            code = ("import json, sys, numpy as np, jax; sys.path.insert(0, sys.argv[1]);"
                    "import scaled; x = np.arange(5, dtype=np.float32);"
                    "print(json.dumps(np.asarray(jax.jit(scaled.scaled)(x)).tolist()))")
            r = subprocess.run([sys.executable, "-c", code, str(tmp_path / out)],
                               capture_output=True, text=True, check=True)
            return json.loads(r.stdout)

    return Project()


def digest(path):
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def entries(cache):
    return sorted(p.name for p in cache.rglob("*.kce"))


def test_warm_rebuild_runs_no_compiler(project):
    project.build("a")
    cold = project.compiler_calls()
    assert cold >= 3  # --version, the kernel, the shim, the link
    assert len(entries(project.cache)) == 1
    project.build("b")
    assert project.compiler_calls() == cold
    assert digest(project.root / "a") == digest(project.root / "b")
    assert project.run("b") == [0.0, 2.0, 4.0, 6.0, 8.0]
    # Into the same directory again: still a hit, files untouched.
    before = {p: p.stat().st_mtime_ns for p in (project.root / "a").rglob("*")}
    project.build("a")
    assert project.compiler_calls() == cold
    assert {p: p.stat().st_mtime_ns
            for p in (project.root / "a").rglob("*")} == before


def test_a_kernelc_with_other_embedded_files_misses(project, tmp_path):
    # The same kernelc version with one byte of one embedded file (the
    # packages' Python runtime) changed, as a rebuilt kernelc would have:
    # its entries are its own.
    binary = KERNELC.read_bytes()
    embedded = (pathlib.Path(__file__).resolve().parents[2] / "runtime" /
                "python" / "_kernelc.py").read_bytes()
    assert binary.count(embedded) == 1
    old = b"Every trace-time check"
    assert embedded.count(old) == 1
    other = tmp_path / "kernelc-other"
    other.write_bytes(binary.replace(
        embedded, embedded.replace(old, b"Every trace-time Check")))
    other.chmod(0o755)
    project.build("a")
    calls = project.compiler_calls()
    project.build("b", kernelc=other)
    assert project.compiler_calls() > calls
    assert "Every trace-time Check" in (
        project.root / "b" / "scaled" / "_kernelc.py").read_text()
    calls = project.compiler_calls()
    project.build("c")
    project.build("d", kernelc=other)
    assert project.compiler_calls() == calls
    assert len(entries(project.cache)) == 2


def test_header_edit_misses_and_reverting_hits(project):
    project.build("a")
    first = project.compiler_calls()
    project.header("#define SCALE 3.0f\n")
    project.build("b")
    second = project.compiler_calls()
    assert second > first
    assert project.run("b") == [0.0, 3.0, 6.0, 9.0, 12.0]
    assert len(entries(project.cache)) == 2
    project.header("#define SCALE 2.0f\n")
    project.build("c")
    assert project.compiler_calls() == second
    assert project.run("c") == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert digest(project.root / "a") == digest(project.root / "c")


def test_options_are_part_of_the_key(project):
    project.build("a")
    calls = project.compiler_calls()
    project.build("b", "-D", "UNUSED=1")
    assert project.compiler_calls() > calls
    calls = project.compiler_calls()
    project.build("c", "--name", "other")
    assert project.compiler_calls() > calls
    assert (project.root / "c" / "other" / "__init__.py").exists()


def test_no_cache_neither_reads_nor_writes(project):
    project.build("a", "--no-cache")
    calls = project.compiler_calls()
    assert calls > 0 and not project.cache.exists()
    project.build("b")
    calls = project.compiler_calls()
    project.build("c", "--no-cache")
    assert project.compiler_calls() > calls
    assert digest(project.root / "b") == digest(project.root / "c")


def test_cache_dir_option_and_environment(project, tmp_path):
    project.build("a", "--cache-dir", str(tmp_path / "explicit"))
    assert len(entries(tmp_path / "explicit")) == 1
    assert not project.cache.exists()
    env = {"KERNELC_CACHE_DIR": "", "XDG_CACHE_HOME": str(tmp_path / "xdg"),
           "HOME": str(tmp_path / "home")}
    project.build("b", env_update=env)
    assert len(entries(tmp_path / "xdg" / "kernelc")) == 1
    env["XDG_CACHE_HOME"] = ""
    project.build("c", env_update=env)
    assert len(entries(tmp_path / "home" / ".cache" / "kernelc")) == 1


def test_unwritable_cache_warns_and_builds(project, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    r = project.build("a", "--cache-dir", str(blocker / "cache"))
    assert "kernelc: warning: cannot create the build cache" in r.stderr
    assert "(build not cached)" in r.stderr
    assert project.run("a") == [0.0, 2.0, 4.0, 6.0, 8.0]


def test_concurrent_builds_share_one_cache(project):
    scales = [2, 3, 2, 3, 2, 3]
    sources = project.root / "many"
    for i, scale in enumerate(scales):
        d = sources / f"s{i}"
        (d / "inc").mkdir(parents=True)
        (d / "scaled.cu").write_text(SOURCE)
        (d / "inc" / "scale.h").write_text(f"#define SCALE {scale}.0f\n")

    def build(i):
        d = sources / f"s{i}"
        return subprocess.run(
            [str(KERNELC), "build", str(d / "scaled.cu"), "-I", str(d / "inc"),
             "-o", str(project.root / f"out{i}"), "--cache-dir",
             str(project.cache)], capture_output=True, text=True)

    with concurrent.futures.ThreadPoolExecutor(len(scales)) as pool:
        results = list(pool.map(build, range(len(scales))))
    for r in results:
        assert r.returncode == 0 and r.stderr == "", r.stderr
    for i, scale in enumerate(scales):
        assert project.run(f"out{i}") == [float(scale * v) for v in range(5)]
    # Each source directory's header is its own dependency: one entry per
    # build, all whole.
    assert len(entries(project.cache)) == len(scales)
    assert not list(project.cache.rglob(".tmp-*"))
    with concurrent.futures.ThreadPoolExecutor(len(scales)) as pool:
        again = list(pool.map(build, range(len(scales))))
    assert all(r.returncode == 0 for r in again)


def test_concurrent_builds_of_the_same_inputs(project):
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: project.build(f"same{i}"), range(4)))
    assert all(r.stderr == "" for r in results)
    assert len(entries(project.cache)) == 1
    digests = [digest(project.root / f"same{i}") for i in range(4)]
    assert all(d == digests[0] for d in digests)
    calls = project.compiler_calls()
    project.build("after")
    assert project.compiler_calls() == calls
    assert project.run("after") == [0.0, 2.0, 4.0, 6.0, 8.0]


def test_same_source_text_elsewhere_is_another_key(project, tmp_path):
    # Two copies of one source, each beside its own header, built by the
    # same relative path from their own directories: the first build's
    # recorded header must not answer for the second.
    for scale, d in ((2, "one"), (5, "two")):
        (tmp_path / d).mkdir()
        (tmp_path / d / "scaled.cu").write_text(
            SOURCE.replace('"scale.h"', '"local_scale.h"'))
        (tmp_path / d / "local_scale.h").write_text(f"#define SCALE {scale}.0f\n")
    for d in ("one", "two"):
        r = subprocess.run([str(KERNELC), "build", "scaled.cu", "-o", f"../{d}_out",
                            "--cache-dir", str(project.cache)],
                           cwd=tmp_path / d, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    assert project.run("one_out") == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert project.run("two_out") == [0.0, 5.0, 10.0, 15.0, 20.0]


def test_header_path_that_is_not_utf8_is_cached(project, tmp_path):
    # A file name need not be UTF-8, and the cache records it all the same.
    inc = os.fsencode(tmp_path) + b"/inc\xff"
    os.mkdir(inc)
    with open(inc + b"/scale.h", "w") as f:
        f.write("#define SCALE 4.0f\n")
    (project.root / "src" / "inc" / "scale.h").unlink()
    out = project.root / "out"

    def build(name):
        r = subprocess.run(
            [KERNELC, "build", project.root / "src" / "scaled.cu", b"-I", inc,
             "-o", out / name], env=dict(os.environ,
                                         KERNELC_CXX=str(tmp_path / "clang++"),
                                         KERNELC_CACHE_DIR=str(project.cache)),
            capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert r.stderr == ""

    build("a")
    calls = project.compiler_calls()
    assert len(entries(project.cache)) == 1
    assert sorted(p.name for p in out.iterdir()) == ["a"]  # no scratch left
    build("b")
    assert project.compiler_calls() == calls
    assert project.run("out/b") == [0.0, 4.0, 8.0, 12.0, 16.0]
    with open(inc + b"/scale.h", "w") as f:
        f.write("#define SCALE 5.0f\n")
    build("c")
    assert project.compiler_calls() > calls
    assert project.run("out/c") == [0.0, 5.0, 10.0, 15.0, 20.0]


def test_entry_with_a_file_outside_the_package_is_a_miss(project):
    project.build("a")
    calls = project.compiler_calls()
    (entry,) = project.cache.rglob("*.kce")
    data = entry.read_bytes()
    nl = data.index(b"\n")
    size = int(data[5:nl])
    header = json.loads(data[nl + 1:nl + 1 + size])
    body = data[nl + 1 + size:]
    payload = b"escaped\n"
    header["files"].append(["../../escaped.txt", len(payload),
                            hashlib.sha256(payload).hexdigest()])
    text = json.dumps(header).encode()
    entry.write_bytes(b"kce1 %d\n" % len(text) + text + body + payload)
    project.build("b")
    assert project.compiler_calls() > calls  # a miss: built again
    assert not (project.root / "escaped.txt").exists()
    assert not list(project.root.rglob("escaped.txt"))
    assert project.run("b") == [0.0, 2.0, 4.0, 6.0, 8.0]


def cuda_image_hashes(package):
    manifest = json.loads((package / "kernelc.json").read_text())
    return sorted(im["sha256"] for b in manifest["cuda"]["binaries"]
                  for im in b["images"])


def test_cuda_only_build_rechecks_the_headers_nvrtc_reads(project):
    # No CPU compile runs for --target cuda, so the headers come from the
    # frontend's reading of the sources.
    project.build("a", "--target", "cuda", "--cuda-arch", "sm_80")
    first = cuda_image_hashes(project.root / "a" / "scaled")
    project.build("b", "--target", "cuda", "--cuda-arch", "sm_80")
    assert cuda_image_hashes(project.root / "b" / "scaled") == first
    assert len(entries(project.cache)) == 1
    project.header("#define SCALE 3.0f\n")
    project.build("c", "--target", "cuda", "--cuda-arch", "sm_80")
    assert cuda_image_hashes(project.root / "c" / "scaled") != first
    assert len(entries(project.cache)) == 2


CUDA = pathlib.Path("/usr/local/cuda")
needs_toolkit = pytest.mark.skipif(
    not list((CUDA / "lib64").glob("libnvrtc.so*")) or
    not (CUDA / "include" / "cuda_fp16.h").exists(),
    reason="needs the CUDA toolkit's NVRTC and headers in /usr/local/cuda")

TOOLKIT_SOURCE = textwrap.dedent("""\
    #include <kernelc.h>
    #include <cuda_fp16.h>

    #ifndef KC_TOOLKIT_SCALE  // the test's copy of cuda_fp16.h defines it
    #define KC_TOOLKIT_SCALE 2.0f
    #endif

    KC_GRID("out.size")
    __global__ void scaled(KC_IN("n") const float* x,
                           KC_DERIVED("x.size") int64_t n,
                           KC_OUT("x") float* out) {
      int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
      if (i < n) out[i] = KC_TOOLKIT_SCALE * x[i];
    }
    """)


@needs_toolkit
def test_cuda_toolkit_header_edit_misses(project, tmp_path):
    # A toolkit of its own: the real libraries, a copy of the headers.
    home = tmp_path / "cuda"
    home.mkdir()
    (home / "lib64").symlink_to(CUDA / "lib64")
    shutil.copytree(CUDA / "include", home / "include", symlinks=True)
    src = tmp_path / "fp16" / "scaled.cu"
    src.parent.mkdir()
    src.write_text(TOOLKIT_SOURCE)
    env = dict(os.environ, CUDA_HOME=str(home),
               KERNELC_CACHE_DIR=str(project.cache))

    def build(out):
        r = subprocess.run(
            [str(KERNELC), "build", str(src), "-o", str(tmp_path / out),
             "--target", "cuda", "--cuda-arch", "sm_80"],
            env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return cuda_image_hashes(tmp_path / out / "scaled")

    first = build("a")
    assert build("b") == first
    assert len(entries(project.cache)) == 1
    header = home / "include" / "cuda_fp16.h"
    header.write_text(header.read_text() +
                      "\n#define KC_TOOLKIT_SCALE 3.0f\n")
    assert build("c") != first
    assert len(entries(project.cache)) == 2


@needs_toolkit
def test_warm_cuda_build_does_not_load_nvrtc(project):
    env = {"LD_DEBUG": "files", "CUDA_HOME": str(CUDA)}
    cold = project.build("a", "--target", "cuda", "--cuda-arch", "sm_80",
                         env_update=env)
    assert "libnvrtc.so" in cold.stderr
    warm = project.build("b", "--target", "cuda", "--cuda-arch", "sm_80",
                         env_update=env)
    assert "libnvrtc" not in warm.stderr
    assert cuda_image_hashes(project.root / "b" / "scaled") == \
        cuda_image_hashes(project.root / "a" / "scaled")
