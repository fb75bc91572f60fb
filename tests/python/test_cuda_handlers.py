"""The generated CUDA handlers without a GPU: a package built with
`--target cuda` is loaded by a small C++ driver (tests/fake_cuda/
handler_driver.cc) that calls its exported XLA FFI handlers with call frames
made as XLA makes them, while the fake libcuda (tests/fake_cuda/
fake_libcuda.cc) logs every driver call, launch parameters included. So the
shim's use of the runtime is checked end to end: the batch plan's launches
and pointer offsets, folding (into dimension 0, or into the grid's z axis
through the fold entries of kernelc/fold.h), fills, copies, shared memory,
module loads per context, and errors that name the kernel (the tier:
fake_cuda_tier.py). The kernels run on a GPU in tests/gpu."""

import os
import re
import shutil
import struct
import subprocess

import pytest

from conftest import EXAMPLES, ROOT, run_kernelc
from fake_cuda_tier import S, Launch, Tier, arg, attr, f32_bits, f64_bits, ret

FAKE = ROOT / "tests" / "fake_cuda"
SOURCES = [EXAMPLES / "saxpy.cu", EXAMPLES / "polar.cu", EXAMPLES / "matmul.cu",
           ROOT / "tests" / "gpu" / "kernels" / "gpu_features.cu"]
# How the package names SOURCES[0]: relative to the directory that holds
# all the sources (the checkout).
SAXPY_NAME = "examples/saxpy.cu"

INVALID_ARGUMENT, INTERNAL = 3, 13


def cxx():
    # For fold_host_driver.cc, which includes fold programs that kernelc
    # generates at test time, so it is compiled here (the rest of the tier
    # is built by Bazel: tests/fake_cuda/BUILD.bazel).
    c = os.environ.get("KERNELC_CXX") or shutil.which("clang++-19") or \
        shutil.which("clang++")
    if not c:
        pytest.fail("no clang++ to build the fold driver")
    return c


@pytest.fixture(scope="module")
def tier(tmp_path_factory):
    return Tier(tmp_path_factory.mktemp("cuda_handlers"), SOURCES)


def saxpy(tier, stage, n, *batch, stream=S, x=0x100000, y=0x200000,
          out=0x300000, a=2.0):
    dims = (*batch, n)
    return tier.call(stage, "saxpy", arg("f32", x, *dims), arg("f32", y, *dims),
                     attr("a", "f32", a), ret("f32", out, *dims),
                     stream=stream)


def test_execute_is_command_buffer_compatible_and_initialize_is_not(tier):
    ex, init = tier.run(tier.call("metadata", "saxpy"),
                        tier.call("metadata_init", "saxpy"))
    assert ex.message == "api 0.2, traits 1"  # COMMAND_BUFFER_COMPATIBLE
    assert init.message == "api 0.2, traits 0"


def test_initialize_loads_the_module_and_execute_only_launches(tier):
    init, *runs = tier.run(saxpy(tier, "initialize", 1000),
                           *[saxpy(tier, "execute", 1000)] * 3)
    assert init.ok, init.message
    assert init.count("cuModuleLoadData(") == 1
    # The module of saxpy.cu: its two kernels, and the fill kernel.
    assert [line for line in init.log
            if line.startswith("cuModuleGetFunction")] == [
        f"cuModuleGetFunction({tier.lowered['saxpy']})",
        f"cuModuleGetFunction({tier.lowered['saxpy_bwd']})",
        "cuModuleGetFunction(kc_fill_u64)"]
    assert init.launches() == []
    for r in runs:
        assert r.ok, r.message
        assert r.log[0] == f"cuStreamGetCtx({S:#x})"
        assert r.count("cuModuleLoadData") == 0
        (launch,) = r.launches()
        assert launch.name == tier.lowered["saxpy"]
        assert launch.grid == (4, 1, 1) and launch.block == (256, 1, 1)
        assert launch.shared == 0 and launch.stream == S
        assert launch.params == [0x100000, 0x200000, f32_bits(2.0), 1000,
                                 0x300000]


def test_two_contexts_get_one_module_load_each(tier):
    s1, s2 = 0x1000, 0x2000  # contexts 0xc1 and 0xc2 to the fake
    calls = tier.run(*[saxpy(tier, stage, 100, stream=s)
                       for _ in range(2) for s in (s1, s2)
                       for stage in ("initialize", "execute")])
    assert all(c.ok for c in calls)
    log = [line for c in calls for line in c.log]
    assert sum(line.startswith("cuModuleLoadData(") for line in log) == 2
    assert [line for line in log if line.startswith("cuCtxPushCurrent")] == [
        "cuCtxPushCurrent(0xc1)", "cuCtxPushCurrent(0xc2)"]
    assert [l.stream for c in calls for l in c.launches()] == [s1, s2] * 2


def test_elementwise_batch_folds_into_one_launch(tier):
    (r,) = tier.run(saxpy(tier, "execute", 300, 4))
    assert r.ok, r.message
    (launch,) = r.launches()
    assert launch.grid == (5, 1, 1)  # 1200 threads
    assert launch.params == [0x100000, 0x200000, f32_bits(2.0), 1200, 0x300000]


def fold_batch(words, tensors):
    """A kc::fold::Batch as the fake logs it (its 8-byte words): (base,
    shape, steps of each of the first `tensors` tensor parameters)."""
    base, rank = words[0], words[1]
    shape = list(words[2:2 + rank])
    steps = [list(words[6 + 4 * t:6 + 4 * t + rank]) for t in range(tensors)]
    assert len(words) == 6 + 4 * 24
    return base, shape, steps


def test_batch_folds_into_the_grid_z_axis_with_offsets_and_broadcasts(tier):
    # polar: x batched (3), y broadcast (a batch dimension of 1: step 0).
    (r,) = tier.run(tier.call("execute", "polar", arg("f32", 0x100000, 3, 5),
                              arg("f32", 0x200000, 1, 5),
                              ret("f32", 0x300000, 3, 5),
                              ret("f32", 0x400000, 3, 5)))
    assert r.ok, r.message
    # The kernel is looked up once per call, not once per element.
    assert r.count("cuStreamGetCtx") == 2  # the kernel's module, the fold's
    (launch,) = r.launches()
    assert launch.name == "kc_fold_polar"
    assert launch.grid == (1, 1, 3) and launch.block == (256, 1, 1)
    *params, batch = launch.params
    assert params == [0x100000, 0x200000, 5, 0x300000, 0x400000]
    assert fold_batch(batch, 4) == (0, [3], [[20], [0], [20], [20]])


def test_batch_of_too_many_dimensions_launches_per_element(tier):
    # Five batch dimensions: more than a fold entry decomposes, so one launch
    # of the kernel itself per element, each at its offset.
    (r,) = tier.run(tier.call("execute", "polar",
                              arg("f32", 0x100000, 3, 1, 1, 1, 1, 5),
                              arg("f32", 0x200000, 1, 1, 1, 1, 1, 5),
                              ret("f32", 0x300000, 3, 1, 1, 1, 1, 5),
                              ret("f32", 0x400000, 3, 1, 1, 1, 1, 5)))
    assert r.ok, r.message
    assert r.count("cuStreamGetCtx") == 1
    launches = r.launches()
    assert [l.name for l in launches] == [tier.lowered["polar"]] * 3
    assert [l.params for l in launches] == [
        [0x100000 + 20 * i, 0x200000, 5, 0x300000 + 20 * i, 0x400000 + 20 * i]
        for i in range(3)]


def test_long_batches_fold_in_launches_of_at_most_65535(tier):
    (r,) = tier.run(tier.call("execute", "polar", arg("f32", 0x100000, 70000, 2),
                              arg("f32", 0x200000, 70000, 2),
                              ret("f32", 0x300000, 70000, 2),
                              ret("f32", 0x400000, 70000, 2)))
    assert r.ok, r.message
    first, second = r.launches()
    assert (first.grid, second.grid) == ((1, 1, 65535), (1, 1, 4465))
    assert [fold_batch(l.params[-1], 4) for l in (first, second)] == [
        (base, [70000], [[8], [8], [8], [8]]) for base in (0, 65535)]
    assert first.params[:-1] == second.params[:-1] == [
        0x100000, 0x200000, 2, 0x300000, 0x400000]


def test_views_of_a_folded_batch_carry_one_elements_shape(tier):
    # matmul over two batch dimensions (2, 3), `a` broadcast along the first.
    (r,) = tier.run(tier.call("execute", "matmul",
                              arg("f32", 0x100000, 1, 3, 4, 6),
                              arg("f32", 0x200000, 2, 3, 6, 5),
                              ret("f32", 0x300000, 2, 3, 4, 5)))
    assert r.ok, r.message
    (launch,) = r.launches()
    assert launch.name == "kc_fold_matmul"
    assert launch.grid == (1, 1, 6) and launch.block == (16, 16, 1)
    *views, batch = launch.params
    assert views == [(0x100000, 4, 6), (0x200000, 6, 5), (0x300000, 4, 5)]
    assert fold_batch(batch, 3) == (
        0, [2, 3], [[0, 4 * 24], [4 * 30 * 3, 4 * 30], [4 * 20 * 3, 4 * 20]])


def test_in_place_operand_under_vmap(tier):
    # accumulate's InMut: aliased by XLA (the same buffer), nothing to copy;
    # given distinct buffers, the whole batch's values are copied first.
    _, aliased, distinct = tier.run(
        tier.call("initialize", "accumulate", arg("f32", 0x100000, 5),
                  arg("f32", 0x200000, 5), ret("f32", 0x100000, 5)),
        tier.call("execute", "accumulate", arg("f32", 0x100000, 3, 5),
                  arg("f32", 0x200000, 3, 5), ret("f32", 0x100000, 3, 5)),
        tier.call("execute", "accumulate", arg("f32", 0x100000, 3, 5),
                  arg("f32", 0x200000, 1, 5), ret("f32", 0x500000, 3, 5)))
    assert aliased.ok and distinct.ok
    assert aliased.count("cuMemcpy") == 0
    (launch,) = aliased.launches()
    assert launch.name == "kc_fold_accumulate"
    assert launch.params[:-1] == [0x100000, 0x200000, 5]
    assert fold_batch(launch.params[-1], 2) == (0, [3], [[20], [20]])
    log = [line for line in distinct.log if not line.startswith("cuStream")
           and not line.startswith(("cuCtx", "cuModule"))]
    assert log[0] == f"cuMemcpyDtoDAsync(500000, 100000, 60, {S:#x})"
    (launch,) = [Launch(line) for line in log[1:]]
    assert launch.params[:-1] == [0x500000, 0x200000, 5]
    assert fold_batch(launch.params[-1], 2) == (0, [3], [[20], [0]])


def test_empty_outputs_launch_nothing(tier):
    calls = tier.run(
        saxpy(tier, "execute", 0, x=0, y=0, out=0),
        tier.call("execute", "polar", arg("f32", 0, 0, 5),
                  arg("f32", 0x200000, 1, 5), ret("f32", 0, 0, 5),
                  ret("f32", 0, 0, 5)),
        tier.call("execute", "fills", arg("f32", 0, 0), ret("s8", 0, 0),
                  ret("s16", 0, 0), ret("f16", 0, 0), ret("f32", 0, 0),
                  ret("s64", 0, 0), ret("f64", 0, 0)),
        tier.call("execute", "matmul", arg("f32", 0, 0, 3),
                  arg("f32", 0x200000, 3, 5), ret("f32", 0, 0, 5)))
    for c in calls:
        assert c.ok, c.message
        assert c.launches() == [] and c.count("cuMemset") == 0


FILLS = {"i8": ("s8", 0x10000), "i16": ("s16", 0x20000),
         "f16": ("f16", 0x30000), "f32": ("f32", 0x40000),
         "i64": ("s64", 0x50000), "f64": ("f64", 0x60000)}


def fills_call(tier, *batch, n=7, stage="execute"):
    return tier.call(stage, "fills", arg("f32", 0x1000, *batch, n),
                     *[ret(d, a, *batch, n) for d, a in FILLS.values()])


def expected_fills(n, offset):
    def at(name, size):
        return FILLS[name][1] + offset * size
    return [
        f"cuMemsetD8Async({at('i8', 1):x}, 3, {n}, {S:#x})",
        f"cuMemsetD16Async({at('i16', 2):x}, fffe, {n}, {S:#x})",
        f"cuMemsetD16Async({at('f16', 2):x}, 3e00, {n}, {S:#x})",  # 1.5
        f"cuMemsetD32Async({at('f32', 4):x}, 40100000, {n}, {S:#x})",
        # -1 as int64: both halves alike, so a 32-bit memset of 2n words.
        f"cuMemsetD32Async({at('i64', 8):x}, ffffffff, {2 * n}, {S:#x})",
        # 0.1 as double: the halves differ, so the fill kernel.
        ("kc_fill_u64", [at("f64", 8), f64_bits(0.1), n]),
        ("fills", [0x1000 + 4 * offset, n] + [at(k, s) for k, s in
                   (("i8", 1), ("i16", 2), ("f16", 2), ("f32", 4),
                    ("i64", 8), ("f64", 8))]),
    ]


def check_log(tier, log, want):
    log = [line for line in log if not line.startswith("cuStream")]
    assert len(log) == len(want), log
    for line, w in zip(log, want):
        if isinstance(w, tuple):
            launch = Launch(line)
            name = "kc_fill_u64" if w[0] == "kc_fill_u64" else \
                tier.lowered[w[0]]
            assert (launch.name, launch.params, launch.stream) == (name, w[1],
                                                                   S)
        else:
            assert line == w


def test_init_fills_every_width_before_the_launch_on_its_stream(tier):
    _, r = tier.run(fills_call(tier, stage="initialize"), fills_call(tier))
    assert r.ok, r.message
    check_log(tier, r.log, expected_fills(7, 0))
    (fill64, kernel) = r.launches()
    assert fill64.grid == (1, 1, 1) and fill64.block == (256, 1, 1)


def test_init_fills_a_folded_batch_at_once(tier):
    _, r = tier.run(fills_call(tier, 2, n=300, stage="initialize"),
                    fills_call(tier, 2, n=300))
    assert r.ok, r.message
    # The fills cover both elements (600 each), then one launch for both.
    *fills, _ = expected_fills(600, 0)
    log = [line for line in r.log if not line.startswith("cuStream")]
    check_log(tier, log[:-1], fills)
    kernel = expected_fills(300, 0)[-1]  # as for element 0
    fill64, launch = r.launches()
    assert fill64.grid == (3, 1, 1)  # 600 elements, 256 a block
    assert launch.name == "kc_fold_fills"
    assert launch.grid == (2, 1, 2)  # 300 threads per element, 2 elements
    assert launch.params[:-1] == kernel[1]
    assert fold_batch(launch.params[-1], 7) == (
        0, [2], [[4 * 300], [300], [2 * 300], [2 * 300], [4 * 300],
                 [8 * 300], [8 * 300]])


def big_shared(tier, words, stream=S):
    return tier.call("execute", "big_shared", arg("f32", 0x1000, 3000),
                     attr("words", "s64", words), ret("f32", 0x2000, 3000),
                     stream=stream)


def test_dynamic_shared_memory(tier):
    calls = tier.run(
        tier.call("execute", "block_reverse", arg("f32", 0x1000, 1000),
                  ret("f32", 0x2000, 1000)),
        big_shared(tier, 16),         # 64 B
        big_shared(tier, 16384),      # 64 KiB: opts in
        big_shared(tier, 16384),      # already allowed
        big_shared(tier, 12288),      # 48 KiB: allowed anyway
        big_shared(tier, 20000),      # more: opts in again
        big_shared(tier, 16384, stream=0x3000),  # another context's kernel
        big_shared(tier, -1))
    assert [c.ok for c in calls] == [True] * 7 + [False]
    assert [l.shared for c in calls[:7] for l in c.launches()] == [
        1024, 64, 65536, 65536, 49152, 80000, 65536]
    big = tier.lowered["big_shared"]
    assert [[line for line in c.log if line.startswith("cuFuncSetAttribute")]
            for c in calls[:7]] == [
        [], [], [f"cuFuncSetAttribute({big}, 8, 65536)"], [], [],
        [f"cuFuncSetAttribute({big}, 8, 80000)"],
        [f"cuFuncSetAttribute({big}, 8, 65536)"]]
    assert calls[-1].code == INTERNAL
    assert calls[-1].message == ("big_shared: dynamic shared memory of -4 "
                                 "bytes is out of range")


def test_grid_limit_is_an_error_naming_the_kernel(tier):
    (r,) = tier.run(tier.call("execute", "transpose",
                              arg("f32", 0x1000, 65536 * 8, 1),
                              ret("f32", 0x2000, 1, 65536 * 8)))
    assert (r.ok, r.code) == (False, INVALID_ARGUMENT)
    assert r.message == ("transpose: the grid needs 65536 blocks along y, "
                         "more than the limit of 65535")
    assert r.launches() == []


def test_wrong_element_type_is_an_error_naming_the_parameter(tier):
    (r,) = tier.run(tier.call("execute", "polar", arg("f64", 0x1000, 5),
                              arg("f32", 0x2000, 5), ret("f32", 0x3000, 5),
                              ret("f32", 0x4000, 5)))
    assert (r.ok, r.code) == (False, INVALID_ARGUMENT)
    assert r.message == "polar: parameter 'x' expects float32 elements"


@pytest.mark.parametrize("fail, message", [
    ("cuLaunchKernel", "saxpy: cuLaunchKernel: CUDA_ERROR_INVALID_VALUE "
     "(invalid argument)"),
    ("cuStreamGetCtx", "saxpy: cannot find the stream's context: "
     "CUDA_ERROR_INVALID_VALUE (invalid argument)"),
])
def test_driver_failures_are_errors_naming_the_kernel(tier, fail, message):
    (r,) = tier.run(saxpy(tier, "execute", 10), FAKE_CUDA_FAIL=fail)
    assert (r.ok, r.code, r.message) == (False, INTERNAL, message)


def test_a_module_that_fails_to_load_is_unloaded_every_time(tier):
    calls = tier.run(*[saxpy(tier, "initialize", 10)] * 3,
                     saxpy(tier, "execute", 10),
                     FAKE_CUDA_FAIL="cuModuleGetFunction")
    src = SAXPY_NAME
    for c in calls:
        assert (c.ok, c.code) == (False, INTERNAL)
        assert c.message == (f"saxpy: no kernel '{tier.lowered['saxpy']}' in "
                             f"{src}: CUDA_ERROR_INVALID_VALUE (invalid "
                             "argument)")
        assert c.count("cuModuleLoadData(") == 1
        (unload,) = [line for line in c.log
                     if line.startswith("cuModuleUnload(")]
        assert unload.endswith(", 0 loaded")
        assert c.launches() == []


def test_a_driver_older_than_nvrtc_is_named(tier):
    nvrtc = tier.manifest["cuda"]["nvrtc"]
    major = int(nvrtc.split(".")[0])
    (r,) = tier.run(saxpy(tier, "initialize", 10),
                    FAKE_CUDA_DRIVER=str((major - 1) * 1000 + 80))
    assert (r.ok, r.code) == (False, INTERNAL)
    assert r.message == (
        f"saxpy: the CUDA driver supports CUDA {major - 1}.8, older than the "
        f"NVRTC {nvrtc} that compiled {SAXPY_NAME}: install an NVIDIA driver "
        f"for CUDA {nvrtc} or newer, or rebuild the package with a CUDA "
        f"toolkit no newer than CUDA {major - 1}.8 (kernelc finds it through "
        "CUDA_HOME)")
    assert r.count("cuModuleLoadData") == 0


def e_flags(path):
    return struct.unpack_from("<I", path.read_bytes(), 48)[0]


@pytest.mark.parametrize("cc, image", [
    ("80", "sm_80"), ("86", "sm_80"), ("90", "sm_90"), ("100", "ptx"),
    ("75", None)])
def test_the_image_loaded_suits_the_device(tier, cc, image):
    (r,) = tier.run(saxpy(tier, "initialize", 10), FAKE_CUDA_CC=cc)
    if image is None:
        assert r.message == (
            f"saxpy: no binary of {SAXPY_NAME} runs on this GPU (sm_75); "
            "built for sm_80, sm_90, compute_90: rebuild with --cuda-arch")
        return
    assert r.ok, r.message
    (load,) = [line for line in r.log if line.startswith("cuModuleLoadData(")]
    if image == "ptx":
        m = re.fullmatch(r"cuModuleLoadData\(PTX \.target sm_90 at (\w+)\)",
                         load)
    else:
        flags = e_flags(tier.cuda / f"0_saxpy.{image}.cubin")
        m = re.fullmatch(rf"cuModuleLoadData\(cubin e_flags {flags:x} at "
                         r"(\w+)\)", load)
    assert m, load
    # Embedded images are 64-byte aligned (the driver needs 8 for ELF).
    assert int(m.group(1), 16) % 64 == 0


def test_under_capture_execute_only_launches(tier):
    # While the stream is captured into a CUDA graph the context comes from
    # the capturing thread. A first call then loads the module with the
    # capture mode relaxed around it; the execute after it only launches.
    calls = tier.run(saxpy(tier, "initialize", 10),
                     saxpy(tier, "execute", 10), FAKE_CUDA_CAPTURING="1")
    assert all(c.ok for c in calls)
    assert [line for line in calls[0].log if "Capture" in line] == [
        "cuThreadExchangeStreamCaptureMode(2)",
        "cuThreadExchangeStreamCaptureMode(1)"]
    assert calls[1].log[0] == "cuCtxGetCurrent"
    assert calls[1].count("cuStreamGetCtx") == 0
    assert calls[1].count("cuModuleLoadData") == 0
    assert len(calls[1].launches()) == 1


def test_fold_entries_compute_every_batch_element(tmp_path):
    """The fold entries NVRTC compiles, run on the CPU: the fold programs
    kernelc generates, compiled with kernelc's host definitions of CUDA and
    launched (emulated) over gridDim.z = the batch, give NumPy's results for
    batches of two dimensions with broadcast operands, views, an in-place
    operand, and a batch launched in two parts (tests/fake_cuda/
    fold_host_driver.cc)."""
    import numpy as np
    r = run_kernelc("emit", EXAMPLES / "polar.cu", EXAMPLES / "matmul.cu",
                    "-o", tmp_path / "emit", "--name", "fold_ops",
                    "--target", "cuda")
    assert r.returncode == 0, r.stderr
    cuda = tmp_path / "emit" / "build" / "cuda"
    driver = tmp_path / "fold_host_driver"
    subprocess.run([cxx(), "-std=c++17", "-O1", "-w", "-D__KERNELC_HOST__",
                    f"-I{ROOT / 'runtime' / 'include'}",
                    f"-I{ROOT / 'runtime' / 'host_include'}",
                    f'-DFOLD_POLAR="{cuda / "0_polar.fold.cu"}"',
                    f'-DFOLD_MATMUL="{cuda / "1_matmul.fold.cu"}"',
                    str(FAKE / "fold_host_driver.cc"), "-o", str(driver)],
                   check=True)
    rng = np.random.default_rng(0)

    def put(name, a):
        a.astype(np.float32).tofile(tmp_path / f"{name}.bin")
        return a.astype(np.float32)

    def get(name, shape):
        return np.fromfile(tmp_path / f"{name}.bin", np.float32).reshape(shape)

    x = put("polar_x", rng.standard_normal((2, 3, 7)))
    y = put("polar_y", rng.standard_normal((1, 3, 7)))
    total = put("acc_total", rng.standard_normal((4, 5)))
    delta = put("acc_delta", rng.standard_normal((1, 5)))
    a = put("mm_a", rng.standard_normal((1, 2, 20, 6)))
    b = put("mm_b", rng.standard_normal((3, 2, 6, 17)))
    subprocess.run([str(driver), str(tmp_path)], check=True)

    for suffix in ("", "_chunked"):
        np.testing.assert_allclose(get("polar_radius" + suffix, (2, 3, 7)),
                                   np.hypot(x, y), rtol=1e-6)
        np.testing.assert_allclose(get("polar_angle" + suffix, (2, 3, 7)),
                                   np.arctan2(y, x), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(get("acc_result", (4, 5)), total + delta,
                               rtol=1e-6)
    np.testing.assert_allclose(get("mm_c", (3, 2, 20, 17)), a @ b,
                               rtol=1e-5, atol=1e-5)


def test_broadcast_in_place_argument_does_not_fold(tier):
    # An in-place argument broadcast along the batch (which the generated
    # Python never passes, broadcasting it first) cannot be copied into its
    # result as one piece: each element is copied and launched on its own.
    (r,) = tier.run(tier.call("execute", "accumulate",
                              arg("f32", 0x100000, 1, 5),
                              arg("f32", 0x200000, 3, 5),
                              ret("f32", 0x500000, 3, 5)))
    assert r.ok, r.message
    log = [line for line in r.log if line.startswith(("cuMemcpy",
                                                      "cuLaunchKernel"))]
    assert [line.split("(")[0] for line in log] == [
        "cuMemcpyDtoDAsync", "cuLaunchKernel"] * 3
    for i in range(3):
        assert log[2 * i] == (f"cuMemcpyDtoDAsync({0x500000 + 20 * i:x}, "
                              f"100000, 20, {S:#x})")
        launch = Launch(log[2 * i + 1])
        assert launch.name == tier.lowered["accumulate"]
        assert launch.params == [0x500000 + 20 * i, 0x200000 + 20 * i, 5]


@pytest.fixture(scope="module")
def features_tier(tmp_path_factory):
    """The package of tests/cuda_sources/annotation_features.cu alone."""
    return Tier(tmp_path_factory.mktemp("cuda_features"),
                [ROOT / "tests" / "cuda_sources" / "annotation_features.cu"])


def test_traced_scalars_are_read_on_the_device_by_an_entry(features_tier):
    # The handler launches the fold program's entry with the scalars'
    # device pointers; nothing is copied to the host.
    t = features_tier
    (call,) = t.run(t.call(
        "execute", "sgd_step", arg("f32", 0x100000, 300),
        arg("f32", 0x200000, 300), arg("f32", 0x300000),
        arg("f32", 0x400000), attr("weight_decay", "f32", 0.5),
        ret("f32", 0x100000, 300)))
    assert call.ok, call.message
    assert call.count("cuMemcpy") == 0
    (launch,) = call.launches()
    assert launch.name == "kc_entry_sgd_step"
    assert launch.grid == (2, 1, 1)
    assert launch.params[:5] == [0x100000, 0x200000, 0x300000, 0x400000,
                                 f32_bits(0.5)]


def test_batched_traced_scalar_reads_each_elements_value(features_tier):
    # Under vmap (expand_dims) an unbatched operand has batch dimensions of
    # size 1: here the correction, while the learning rate is batched.
    t = features_tier
    (call,) = t.run(t.call(
        "execute", "sgd_step", arg("f32", 0x100000, 3, 300),
        arg("f32", 0x200000, 3, 300), arg("f32", 0x300000, 3),
        arg("f32", 0x400000, 1), attr("weight_decay", "f32", 0.5),
        ret("f32", 0x100000, 3, 300)))
    assert call.ok, call.message
    assert call.count("cuMemcpy") == 0
    # Not folded into dimension 0 (the scalars differ along the batch): one
    # launch over the grid's z axis, the learning rate stepping 4 bytes per
    # batch element, the correction broadcast.
    (launch,) = call.launches()
    assert launch.name == "kc_fold_sgd_step"
    assert launch.grid == (2, 1, 3)
    assert launch.params[:6] == [0x100000, 0x200000, 0x300000, 0x400000,
                                 f32_bits(0.5), 300]
    assert fold_batch(launch.params[-1], 4) == (
        0, [3], [[1200], [1200], [4], [0]])


@pytest.mark.parametrize("present", [True, False])
def test_absent_optional_input_is_a_null_pointer(features_tier, present):
    t = features_tier
    bias = arg("f32", 0x300000, 23) if present else arg("f32", 0x300000, 0)
    (call,) = t.run(t.call(
        "execute", "linear", arg("f32", 0x100000, 37, 19),
        arg("f32", 0x200000, 19, 23), bias,
        attr("kc_present_bias", "pred", int(present)),
        ret("f32", 0x500000, 37, 23)))
    assert call.ok, call.message
    (launch,) = call.launches()
    assert launch.grid == (2, 3, 1) and launch.block == (16, 16, 1)
    assert launch.params[:3] == [0x100000, 0x200000,
                                 0x300000 if present else 0]
