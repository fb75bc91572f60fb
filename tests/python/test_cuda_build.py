"""The cuda target without a GPU: every CUDA source (examples and the GPU
test kernels) compiles with NVRTC for sm_80 and sm_90, ptxas accepts the PTX,
the manifest records the binaries, the library links with no libcuda, and a
cpu,cuda package runs its CPU ops in a process where libcuda cannot be
loaded. Options and their errors are checked too. The kernels themselves run
on a GPU in tests/gpu."""

import hashlib
import json
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import EXAMPLES, KERNELC, ROOT, run_kernelc
from cuda_tools import CUDA_HOME, ptxas, toolkit_include

GPU_KERNELS = ROOT / "tests" / "gpu" / "kernels"
CUDA_SOURCES = (sorted(EXAMPLES.glob("*.cu")) + sorted(GPU_KERNELS.glob("*.cu"))
                + sorted((ROOT / "bench" / "kernels").glob("*.cu")))
TOOLKIT_HEADERS = ROOT / "tests" / "cuda_sources" / "toolkit_headers.cu"
WARP_STATS = ROOT / "tests" / "cuda_sources" / "warp_stats.cu"
# Sources that only a CUDA compiler reads (toolkit headers, intrinsics that
# kernelc's CPU stand-ins lack): they build for the cuda target alone.
CUDA_ONLY_SOURCES = [TOOLKIT_HEADERS, WARP_STATS]


@pytest.mark.parametrize("source", CUDA_SOURCES + CUDA_ONLY_SOURCES,
                         ids=lambda p: p.name)
def test_every_cuda_source_compiles_for_sm80_sm90(source, tmp_path):
    if source in CUDA_ONLY_SOURCES:
        toolkit_include()
    r = run_kernelc("emit", source, "-o", tmp_path, "--target", "cuda",
                    "--cuda-arch", "sm_90,sm_80")
    assert r.returncode == 0, r.stderr
    cuda = tmp_path / "build" / "cuda"
    stem = source.name.split(".")[0]
    manifest = json.loads(
        (tmp_path / "package" / "kernelc.json").read_text())
    assert manifest["targets"] == ["cuda"]
    assert manifest["cuda"]["archs"] == ["sm_80", "sm_90"]
    (binary,) = manifest["cuda"]["binaries"]
    # Named relative to the sources' directory, not by the absolute path
    # the source was given by.
    assert binary["source"] == source.name
    # The fold program (kernelc/fold.h), for kernels whose batch can run
    # along the grid's z axis.
    programs = [""] + (["fold."] if "fold" in binary else [])
    names = sorted(p.name for p in cuda.iterdir())
    assert names == sorted(
        [f"0_{stem}.{f}{suffix}" for f in programs
         for suffix in ("compute_90.ptx", "sm_80.cubin", "sm_90.cubin")]
        + ([f"0_{stem}.fold.cu"] if "fold" in binary else []))
    for f in programs:
        for arch in (80, 90):
            cubin = (cuda / f"0_{stem}.{f}sm_{arch}.cubin").read_bytes()
            assert cubin[:4] == b"\x7fELF"
        ptx = (cuda / f"0_{stem}.{f}compute_90.ptx").read_text()
        assert ".target sm_90" in ptx
    assert ".entry kc_fill_u64" in (cuda / f"0_{stem}.compute_90.ptx").read_text()
    for f, images in [("", binary["images"])] + (
            [("fold.", binary["fold"]["images"])] if "fold" in binary else []):
        for image in images:
            suffix = "ptx" if image["format"] == "ptx" else "cubin"
            data = (cuda / f"0_{stem}.{f}{image['arch']}.{suffix}").read_bytes()
            assert image["sha256"] == hashlib.sha256(data).hexdigest()
            assert image["bytes"] == len(data)
    if "fold" in binary:
        ptx = (cuda / f"0_{stem}.fold.compute_90.ptx").read_text()
        # A template's variants (examples/rms_norm.cu) fold as
        # kc_fold_<template>__<variant index>.
        variants = {}
        for kernel in binary["fold"]["kernels"]:
            template, _, args = kernel.partition("<")
            entry = template
            if args:
                entry = f"{template}__{variants.get(template, 0)}"
                variants[template] = variants.get(template, 0) + 1
            assert f".entry kc_fold_{entry}(" in ptx


@pytest.mark.parametrize("source", CUDA_SOURCES + CUDA_ONLY_SOURCES,
                         ids=lambda p: p.name)
def test_ptxas_accepts_the_ptx(source, tmp_path):
    if source in CUDA_ONLY_SOURCES:
        toolkit_include()
    tool = ptxas()
    if tool is None:
        pytest.skip("no ptxas (CUDA toolkit) on this machine")
    r = run_kernelc("emit", source, "-o", tmp_path, "--target", "cuda",
                    "--cuda-arch", "sm_80,sm_90")
    assert r.returncode == 0, r.stderr
    ptxs = sorted((tmp_path / "build" / "cuda").glob("*.ptx"))
    assert ptxs
    for ptx in ptxs:
        p = subprocess.run([str(tool), "-arch=sm_90", str(ptx), "-o",
                            str(tmp_path / "out.cubin")],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr


def test_library_has_no_libcuda_dependency_and_cpu_ops_run_without_it(
        tmp_path):
    sources = [EXAMPLES / "saxpy.cu", EXAMPLES / "polar.cu",
               EXAMPLES / "matmul.cu", EXAMPLES / "histogram.cc"]
    r = run_kernelc("build", *sources, "-o", tmp_path, "--name", "both",
                    "--target", "cpu,cuda", "--cuda-arch", "sm_80,sm_90")
    assert r.returncode == 0, r.stderr
    pkg = tmp_path / "both"
    manifest = json.loads((pkg / "kernelc.json").read_text())
    assert manifest["targets"] == ["cpu", "cuda"]
    by_name = {k["name"]: k for k in manifest["kernels"]}
    assert set(by_name["saxpy"]["handlers"]) == {"cpu", "cuda"}
    assert set(by_name["histogram"]["handlers"]) == {"cpu"}
    lib = pkg / manifest["library"]
    dynamic = subprocess.run(["readelf", "-d", str(lib)], capture_output=True,
                             text=True, check=True).stdout
    needed = [l for l in dynamic.splitlines() if "NEEDED" in l]
    assert needed and not any("libcuda" in l or "libnvrtc" in l
                               for l in needed), needed
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(lib)],
                             capture_output=True, text=True,
                             check=True).stdout
    # The handlers and nothing else: not the runtime's symbols, nor the
    # resolvers of the entry points compiled in clones.
    names = [line.split()[-1] for line in symbols.splitlines()]
    assert names and all(re.fullmatch(r"kc_both_\w+_[0-9a-f]{12}_(cpu|cuda|cuda_init)", n)
                         for n in names), names
    for kernel in ("saxpy", "polar", "accumulate", "matmul"):
        for stage in ("cuda", "cuda_init"):
            assert f"kc_both_{kernel}_" in symbols
            assert any(s.endswith(f"_{stage}") and f"_{kernel}_" in s
                       for s in symbols.split()), (kernel, stage)

    # A fresh process with no way to load libcuda: no library path, and a
    # check that dlopen really fails there. The package imports, registers
    # its CUDA handlers (kept by jax for a CUDA backend that never comes),
    # and its CPU ops match NumPy, eagerly, under jit and under vmap.
    script = textwrap.dedent(f"""
        import ctypes, sys
        try:
            ctypes.CDLL("libcuda.so.1")
            print("LIBCUDA-LOADABLE")
            sys.exit(0)
        except OSError:
            pass
        sys.path.insert(0, {str(tmp_path)!r})
        import jax, numpy as np
        import both
        assert [d.platform for d in jax.devices()] == ["cpu"]
        x = np.arange(7, dtype=np.float32)
        y = np.ones(7, np.float32)
        np.testing.assert_allclose(both.saxpy(x, y, 2.0), 2 * x + y)
        np.testing.assert_allclose(jax.jit(both.saxpy, static_argnums=2)(x, y, 3.0),
                                   3 * x + y)
        xs = np.stack([x, 2 * x])
        np.testing.assert_allclose(
            jax.vmap(lambda a: both.saxpy(a, y, 1.0))(xs), xs + y)
        r, a = both.polar(x, y)
        np.testing.assert_allclose(r, np.hypot(x, y), rtol=1e-6)
        np.testing.assert_allclose(a, np.arctan2(y, x), rtol=1e-6)
        np.testing.assert_allclose(both.accumulate(x, y), x + y)
        m = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.testing.assert_allclose(both.matmul(m, m.T), m @ m.T)
        counts = both.histogram(m, 0.0, 6.0, 3)
        np.testing.assert_array_equal(counts, [[2, 1, 0], [0, 1, 2]])
        print("CPU-OPS-OK")
        """)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "LD_LIBRARY_PATH": "", "JAX_PLATFORMS": ""}
    p = subprocess.run([sys.executable, "-c", script], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 0, p.stderr
    if "LIBCUDA-LOADABLE" in p.stdout:
        pytest.skip("libcuda.so.1 is installed on this machine, so a process "
                    "without it cannot be made here")
    assert "CPU-OPS-OK" in p.stdout, p.stdout + p.stderr


def emit_polar_for_sm_80(out, *flags):
    """Emits examples/polar.cu for the cuda target (sm_80) into out; returns
    the manifest and the PTX."""
    r = run_kernelc("emit", EXAMPLES / "polar.cu", "-o", out, "--target",
                    "cuda", "--cuda-arch", "sm_80", *flags)
    assert r.returncode == 0, r.stderr
    return (json.loads((out / "package/kernelc.json").read_text()),
            (out / "build/cuda/0_polar.compute_80.ptx").read_text())


def test_fast_math_changes_the_binaries_and_is_recorded(tmp_path):
    m_plain, ptx_plain = emit_polar_for_sm_80(tmp_path / "plain")
    m_fast, ptx_fast = emit_polar_for_sm_80(tmp_path / "fast", "--use-fast-math")
    assert m_plain["cuda"]["fast_math"] is False
    assert m_fast["cuda"]["fast_math"] is True
    assert m_plain["content_hash"] != m_fast["content_hash"]
    assert ptx_plain != ptx_fast
    assert "sqrt.approx" in ptx_fast and "sqrt.approx" not in ptx_plain


def test_lineinfo_maps_the_binaries_to_source_lines(tmp_path):
    m_plain, ptx_plain = emit_polar_for_sm_80(tmp_path / "plain")
    m_lines, ptx_lines = emit_polar_for_sm_80(tmp_path / "lines", "--lineinfo")
    assert "\t.loc\t" not in ptx_plain and "\t.file\t" not in ptx_plain
    assert "\t.loc\t" in ptx_lines
    assert re.search(r'\t\.file\t\d+ ".*polar\.cu"', ptx_lines)
    assert m_plain["content_hash"] != m_lines["content_hash"]


def test_include_dirs_and_defines_reach_nvrtc(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "scale.h").write_text(
        "#pragma once\n__device__ __host__ inline float scale(float v) "
        "{ return SCALE * v; }\n")
    src = tmp_path / "k.cu"
    src.write_text(textwrap.dedent("""
        #include <kernelc.h>
        #include "scale.h"
        KC_GRID("n")
        __global__ void k(KC_IN("n") const float* x,
                          KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") float* out) {
          int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
          if (i < n) out[i] = scale(x[i]);
        }
        """))
    r = run_kernelc("emit", src, "-o", tmp_path / "o", "--target", "cuda",
                    "--cuda-arch", "sm_80", "-I", inc, "-D", "SCALE=3.5f")
    assert r.returncode == 0, r.stderr
    ptx = (tmp_path / "o/build/cuda/0_k.compute_80.ptx").read_text()
    assert "0f40600000" in ptx  # 3.5f


@pytest.mark.parametrize("args, message", [
    (["--target", "gpu"], "unknown target 'gpu' (expected cpu or cuda)"),
    (["--cuda-arch", "sm_80"], "--cuda-arch needs the cuda target"),
    (["--use-fast-math"], "--use-fast-math needs the cuda target"),
    (["--lineinfo"], "--lineinfo needs the cuda target"),
    (["--target", "cuda", "--cuda-arch", "80"],
     "--cuda-arch: '80' is not an architecture like sm_80"),
    (["--target", "cuda", "--cuda-arch", "sm_80,compute_90"],
     "--cuda-arch: 'compute_90' is not an architecture like sm_80"),
])
def test_option_errors(args, message, tmp_path):
    r = run_kernelc("build", EXAMPLES / "saxpy.cu", "-o", tmp_path, *args)
    assert r.returncode == 1
    assert r.stderr == f"kernelc: error: {message}\n"
    assert not (tmp_path / "saxpy").exists()


def test_unsupported_arch_names_what_nvrtc_supports(tmp_path):
    r = run_kernelc("build", EXAMPLES / "saxpy.cu", "-o", tmp_path,
                    "--target", "cuda", "--cuda-arch", "sm_20")
    assert r.returncode == 1
    assert r.stderr.startswith(
        "kernelc: error: --cuda-arch: NVRTC 13.0 cannot compile for sm_20 "
        "(it supports sm_75, sm_80")


def test_host_kernel_needs_the_cpu_target(tmp_path):
    r = run_kernelc("build", EXAMPLES / "histogram.cc", "-o", tmp_path,
                    "--target", "cuda")
    assert r.returncode == 1
    assert r.stderr.startswith(
        f"{EXAMPLES / 'histogram.cc'}:7:16: error: host kernel 'histogram' "
        "(KC_KERNEL) runs only on the CPU: build with --target cpu,cuda\n")


def test_cuda_build_is_deterministic(tmp_path):
    outs = []
    for i in range(2):
        r = run_kernelc("build", EXAMPLES / "saxpy.cu", "-o", tmp_path / str(i),
                        "--target", "cpu,cuda", "--cuda-arch", "sm_80,sm_90")
        assert r.returncode == 0, r.stderr
        outs.append({p.name: p.read_bytes()
                     for p in (tmp_path / str(i) / "saxpy").iterdir()})
    assert outs[0] == outs[1]


@pytest.mark.parametrize("annotation, message", [
    ('KC_SHARED_BYTES("m * 4")',
     "k.cu:3:18: error: in KC_SHARED_BYTES of 'k': unknown name 'm'"),
    ('KC_SHARED_BYTES("4 *")',
     "k.cu:3:21: error: in KC_SHARED_BYTES of 'k': "),
    ("KC_SHARED_BYTES(64)",
     "k.cu:3:1: error: KC_SHARED_BYTES of kernel 'k' takes one string: the "
     "bytes of dynamic shared memory per block"),
])
def test_shared_bytes_diagnostics(annotation, message, tmp_path):
    (tmp_path / "k.cu").write_text(textwrap.dedent(f"""\
        #include <kernelc.h>
        KC_GRID("n")
        {annotation}
        __global__ void k(KC_IN("n") const float* x, KC_DERIVED("x.size") int64_t n,
                          KC_OUT("x") float* out) {{}}
        """))
    r = run_kernelc("inspect", "k.cu", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.startswith(message), r.stderr


def test_shared_bytes_in_the_model(tmp_path):
    r = run_kernelc("inspect", GPU_KERNELS / "gpu_features.cu")
    assert r.returncode == 0, r.stderr
    kernels = {k["name"]: k for k in json.loads(r.stdout)["kernels"]}
    assert kernels["big_shared"]["shared_bytes"]["text"] == "words * 4"
    assert "shared_bytes" not in kernels["transpose"]


def test_cuda_intrinsics_run_on_the_cpu(build_package):
    """One source with CUDA intrinsics (16-bit float ops, half2, bit
    intrinsics, min/max) builds for cpu,cuda and matches NumPy on the CPU;
    tests/gpu runs the same checks on the GPU."""
    sys.path.insert(0, str(ROOT / "tests" / "gpu"))
    import intrinsics_expect
    mod = build_package("cuda_intrinsics",
                        sources=[GPU_KERNELS / "intrinsics.cu"],
                        extra=("--target", "cpu,cuda", "--cuda-arch", "sm_80"))
    intrinsics_expect.check(mod, *intrinsics_expect.inputs())


def test_frontend_reads_cuda_features(tmp_path):
    """The frontend reads a source written against CUDA's own headers:
    intrinsics, warp functions, __constant__, __launch_bounds__, templates,
    static and dynamic shared memory, atomics; NVRTC compiles the same
    source with the real headers."""
    src = ROOT / "tests" / "cuda_sources" / "cuda_features.cu"
    r = run_kernelc("inspect", src)
    assert r.returncode == 0, r.stderr
    (k,) = json.loads(r.stdout)["kernels"]
    assert k["shared_bytes"]["text"] == "8 * 4"
    assert sorted({f["what"] for f in k["block_features"]}) == [
        "__activemask", "__ballot_sync", "__shared__", "__shfl_down_sync",
        "__syncthreads", "__syncwarp"]
    r = run_kernelc("emit", src, "-o", tmp_path, "--target", "cuda",
                    "--cuda-arch", "sm_80,sm_90")
    assert r.returncode == 0, r.stderr


def test_inspect_a_built_package_shows_targets_archs_and_hashes(tmp_path):
    r = run_kernelc("build", EXAMPLES / "saxpy.cu", "-o", tmp_path,
                    "--target", "cpu,cuda", "--cuda-arch", "sm_80,sm_90")
    assert r.returncode == 0, r.stderr
    r = run_kernelc("inspect", tmp_path / "saxpy")
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m == json.loads((tmp_path / "saxpy" / "kernelc.json").read_text())
    assert m["targets"] == ["cpu", "cuda"]
    assert m["cuda"]["archs"] == ["sm_80", "sm_90"]
    images = m["cuda"]["binaries"][0]["images"]
    assert [(i["arch"], i["format"]) for i in images] == [
        ("sm_80", "cubin"), ("sm_90", "cubin"), ("compute_90", "ptx")]
    assert all(len(i["sha256"]) == 64 for i in images)
    # The NVRTC that compiled them, as `kernelc --version` names it.
    version = run_kernelc("--version").stdout.splitlines()[1]
    assert version.startswith(f"NVRTC {m['cuda']['nvrtc']} (")
    r = run_kernelc("inspect", tmp_path)
    assert r.returncode == 1
    assert "is a directory but not a package built by kernelc" in r.stderr


@pytest.mark.parametrize("source", CUDA_SOURCES, ids=lambda p: p.name)
def test_both_readings_of_a_source_give_one_model(source):
    """A source read as the CPU sees it (kernelc's stand-ins for CUDA) and
    as CUDA device code against the toolkit's headers (--target cuda alone)
    gives the same model, byte for byte."""
    toolkit_include()
    host = run_kernelc("inspect", source)
    device = run_kernelc("inspect", source, "--target", "cuda")
    assert host.returncode == 0, host.stderr
    assert device.returncode == 0, device.stderr
    assert device.stdout == host.stdout


def test_cuda_target_reads_the_toolkits_own_headers(tmp_path):
    """Cooperative groups, CUB and cuda::std: the cuda target alone reads the
    source as CUDA device code, NVRTC compiles it with CCCL on its include
    path, and the block-level features found inside the toolkit's headers
    are placed at the user's calls."""
    toolkit_include()
    r = run_kernelc("inspect", TOOLKIT_HEADERS, "--target", "cuda")
    assert r.returncode == 0, r.stderr
    (k,) = json.loads(r.stdout)["kernels"]
    assert [(p["name"], p["dtype"]) for p in k["params"]] == [
        ("x", "float16"), ("scale", "bfloat16"), ("n", "int64"),
        ("sums", "float16")]
    assert [(f["what"], f["loc"]) for f in k["block_features"]] == [
        ("__shared__", f"{TOOLKIT_HEADERS}:24:43"),
        ("__syncthreads", f"{TOOLKIT_HEADERS}:28:23"),
        ("__barrier_sync", f"{TOOLKIT_HEADERS}:29:3")]

    r = run_kernelc("emit", TOOLKIT_HEADERS, "-o", tmp_path, "--target",
                    "cuda", "--cuda-arch", "sm_80,sm_90")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    tool = ptxas()
    ptxs = sorted((tmp_path / "build" / "cuda").glob("*.ptx"))
    assert [p.name for p in ptxs] == ["0_toolkit_headers.compute_90.ptx",
                                      "0_toolkit_headers.fold.compute_90.ptx"]
    if tool is not None:
        for ptx in ptxs:
            p = subprocess.run([str(tool), "-arch=sm_90", str(ptx), "-o",
                                str(tmp_path / "out.cubin")],
                               capture_output=True, text=True)
            assert p.returncode == 0, p.stderr
    r = run_kernelc("build", TOOLKIT_HEADERS, "-o", tmp_path / "pkg",
                    "--target", "cuda")
    assert r.returncode == 0, r.stderr


def test_cuda_target_reads_cooperative_groups_and_cache_hints(tmp_path):
    """Warp tiles and cg::reduce, __reduce_add_sync and the cache-hinted
    loads and stores on float: the frontend reads them in Clang's CUDA mode
    with nothing to say (not that the toolkit is newer than Clang knows),
    and NVRTC compiles them to the instructions they name."""
    toolkit_include()
    r = run_kernelc("inspect", WARP_STATS, "--target", "cuda")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    (k,) = json.loads(r.stdout)["kernels"]
    assert [(p["name"], p["dtype"]) for p in k["params"]] == [
        ("x", "float32"), ("flags", "int32"), ("n", "int64"),
        ("sums", "float32"), ("mins", "float32"), ("maxs", "float32"),
        ("counts", "int32"), ("copy", "float32")]
    assert [f["what"] for f in k["block_features"]] == ["__shfl_xor_sync"]

    r = run_kernelc("emit", WARP_STATS, "-o", tmp_path, "--target", "cuda",
                    "--cuda-arch", "sm_80")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    ptx = (tmp_path / "build" / "cuda" / "0_warp_stats.compute_80.ptx").read_text()
    for instruction in ("ld.global.cs.f32", "ld.global.cs.s32",
                        "st.global.cs.f32", "st.global.cg.f32",
                        "st.global.wt.f32", "redux.sync.add.u32"):
        assert instruction in ptx, instruction


def test_cpu_target_names_the_toolkit_header_it_cannot_read(tmp_path):
    """Read as the CPU sees it, a source that includes a device-only header
    of the toolkit (CUB, found through -I as a CUB user passes it) fails to
    parse; the last error names the header and the way out. Its
    <cooperative_groups.h> is kernelc's own, which the CPU reads."""
    include = toolkit_include()
    r = run_kernelc("build", TOOLKIT_HEADERS, "-o", tmp_path, "--target",
                    "cpu,cuda", "-I", include, "-I", include / "cccl")
    assert r.returncode == 1
    assert (f"{TOOLKIT_HEADERS}:5:10: error: 'cub/block/block_reduce.cuh' is a "
            "header of the CUDA toolkit, likely the cause of these errors: "
            "for the cpu target kernelc reads sources with its own "
            "<cuda_runtime.h>, <cuda_fp16.h>, <cuda_bf16.h> and "
            "<cooperative_groups.h>, and other CUDA headers may need a CUDA "
            "compiler; build with --target cuda alone to read the source as "
            "CUDA device code\n"
            "#include <cub/block/block_reduce.cuh>\n"
            "         ^\n") in r.stderr
    assert "cooperative_groups.h:" not in r.stderr
    assert not (tmp_path / "toolkit_headers").exists()


HALF_VECTORS = textwrap.dedent("""\
    #include <cuda_runtime.h>
    #include <vector_types.h>
    #include <cuda_fp16.h>
    #include <kernelc.h>

    // out = x * 2 + (y.x + y.y), through half and float2.
    KC_GRID("n")
    __global__ void half_vec(KC_IN("n") const __half* x,
                             KC_IN("") const float* y,
                             KC_DERIVED("x.size") int64_t n,
                             KC_OUT("x") __half* out) {
      int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
      float2 v = make_float2(y[0], 2.0f * y[0]);
      if (i < n) out[i] = __float2half(__half2float(x[i]) * 2.0f + v.x + v.y);
    }
    """)


def test_toolkit_include_dir_on_the_path_keeps_the_cpu_stand_ins(
        build_package):
    """-I naming the toolkit's include directory does not replace kernelc's
    stand-ins when the source is compiled for the CPU: the types stay
    kernelc's and the kernel runs."""
    include = toolkit_include()
    mod = build_package("half_vec_with_toolkit_dir", HALF_VECTORS,
                        extra=("-I", include, "--target", "cpu,cuda",
                               "--cuda-arch", "sm_80"))
    x = np.linspace(-2, 2, 37).astype(np.float16)
    y = np.float32(0.25)
    got = np.asarray(mod.half_vec(x, y))
    want = (x.astype(np.float32) * 2 + 0.75).astype(np.float16)
    np.testing.assert_array_equal(got, want)


# --- Finding NVRTC ---------------------------------------------------------


def nvrtc_version_line(env):
    """The NVRTC line of `kernelc --version` in exactly `env`."""
    r = subprocess.run([str(KERNELC), "--version"], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    assert first == "kernelc 0.1.0"
    return second


@pytest.fixture(scope="module")
def real_nvrtc():
    """(library, include directory) of the NVRTC found as the tests run."""
    line = run_kernelc("--version").stdout.splitlines()[1]
    m = re.fullmatch(r"NVRTC \d+\.\d+ \((.+)\)", line)
    assert m, line
    lib = pathlib.Path(m.group(1))
    include = lib.parent.parent / "include"
    assert (include / "cuda_fp16.h").exists(), include
    return lib, include


def toolkit_like(root, real_nvrtc, lib_dir="lib64"):
    """A directory laid out like a CUDA toolkit: its library and include
    directories are links to the real NVRTC's."""
    lib, include = real_nvrtc
    root.mkdir(parents=True)
    (root / lib_dir).symlink_to(lib.parent)
    (root / "include").symlink_to(include)
    return root / lib_dir / lib.name


def test_cuda_home_is_used_for_nvrtc_and_its_headers(tmp_path, real_nvrtc):
    found = toolkit_like(tmp_path / "cuda", real_nvrtc)
    env = {"PATH": "/usr/bin:/bin", "CUDA_HOME": str(tmp_path / "cuda")}
    assert nvrtc_version_line(env).endswith(f" ({found})")
    # A kernel that includes cuda_fp16.h compiles with the headers beside it.
    r = subprocess.run([str(KERNELC), "emit", str(GPU_KERNELS / "dtypes.cu"),
                        "-o", str(tmp_path / "out"), "--target", "cuda"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "out" / "package" / "kernelc.json")
                          .read_text())
    assert manifest["cuda"]["nvrtc"] == \
        nvrtc_version_line(env).split()[1]


def test_nvrtc_search_order(tmp_path, real_nvrtc):
    # Every place kernelc looks, each with an NVRTC: it takes the first, and
    # the next one when that has none.
    home = toolkit_like(tmp_path / "home", real_nvrtc)
    site = tmp_path / "venv" / "lib" / "python3.12" / "site-packages"
    venv = toolkit_like(site / "nvidia" / "cu13", real_nvrtc, "lib")
    conda = toolkit_like(tmp_path / "conda", real_nvrtc, "lib")
    nvcc_root = toolkit_like(tmp_path / "toolkit", real_nvrtc)
    (tmp_path / "toolkit" / "bin").mkdir()
    nvcc = tmp_path / "toolkit" / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\n")
    nvcc.chmod(0o755)
    (tmp_path / "empty").mkdir()

    env = {"PATH": f"{nvcc.parent}:/usr/bin:/bin",
           "CUDA_HOME": str(tmp_path / "home"),
           "VIRTUAL_ENV": str(tmp_path / "venv"),
           "CONDA_PREFIX": str(tmp_path / "conda")}
    assert nvrtc_version_line(env).endswith(f" ({home})")
    env["CUDA_HOME"] = str(tmp_path / "empty")  # no NVRTC there
    assert nvrtc_version_line(env).endswith(f" ({venv})")
    del env["VIRTUAL_ENV"]
    assert nvrtc_version_line(env).endswith(f" ({conda})")
    del env["CONDA_PREFIX"]
    assert nvrtc_version_line(env).endswith(f" ({nvcc_root})")
    env["PATH"] = "/usr/bin:/bin"
    last = nvrtc_version_line(env)
    assert str(tmp_path) not in last
    if list(CUDA_HOME.glob("lib*/libnvrtc.so*")):
        assert f" ({CUDA_HOME}/lib" in last
    else:
        assert last.startswith("no usable NVRTC for the cuda target")


def test_the_library_embeds_every_image_byte_for_byte(tmp_path):
    """The CUDA binaries reach the library as string literals: every byte
    of every cubin and PTX image (rms_norm's are hundreds of kilobytes, with
    every byte value, quotes, backslashes and '$' among them) is in the
    library as NVRTC wrote it, PTX followed by its terminating NUL."""
    src = EXAMPLES / "rms_norm.cu"
    args = ["--target", "cuda", "--cuda-arch", "sm_80,sm_90", "--name", "rms"]
    r = run_kernelc("emit", src, "-o", tmp_path / "emit", *args)
    assert r.returncode == 0, r.stderr
    r = run_kernelc("build", src, "-o", tmp_path / "out", "--no-cache", *args)
    assert r.returncode == 0, r.stderr
    (library,) = (tmp_path / "out" / "rms").glob("_kernelc_*.so")
    data = library.read_bytes()
    images = sorted((tmp_path / "emit" / "build" / "cuda").glob("*.*[nx]"))
    assert len(images) == 6, images  # a cubin per arch and PTX, twice
    for image in images:
        content = image.read_bytes()
        if image.suffix == ".cubin":
            assert all(c in content for c in (b'"', b"\\", b"?", b"$", b"\0", b"\xff"))
        else:
            content += b"\0"
        assert content in data, image.name


def test_only_kernels_that_leave_the_grid_z_axis_free_fold(tmp_path):
    """Under vmap, a kernel's batch runs as one launch along the grid's z
    axis only where the kernel leaves it free: a grid of one or two
    dimensions, and no use of blockIdx.z or gridDim.z in the PTX. The
    manifest names the kernels that fold; the CPU runs the others alike."""
    src = ROOT / "tests" / "cuda_sources" / "grid_z.cu"
    r = run_kernelc("build", src, "-o", tmp_path, "--target", "cpu,cuda",
                    "--cuda-arch", "sm_80")
    assert r.returncode == 0, r.stderr
    (binary,) = json.loads(
        (tmp_path / "grid_z" / "kernelc.json").read_text())["cuda"]["binaries"]
    assert binary["fold"]["kernels"] == ["plane"]
    sys.path.insert(0, str(tmp_path))
    try:
        import grid_z
        import jax
        x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
        np.testing.assert_array_equal(
            np.asarray(jax.vmap(grid_z.plane)(x[0])), 2 * x[0])
        np.testing.assert_array_equal(
            np.asarray(jax.vmap(grid_z.volume)(x)), x + 1)
        np.testing.assert_array_equal(
            np.asarray(jax.vmap(grid_z.plane_z)(x[0])), x[0])
    finally:
        sys.path.remove(str(tmp_path))
