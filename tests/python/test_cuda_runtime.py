"""kernelc's CUDA runtime (runtime/include/kernelc/cuda.h) against a fake
libcuda.so.1 (tests/fake_cuda), so that its Driver API use is checked
without a GPU: entry points resolved through cuGetProcAddress_v2 with the
CUDA 12.0 ABI, the image chosen per compute capability, the module loaded
once per context (with the capture mode relaxed while a graph is being
captured, and unloaded again when a kernel is missing), launch parameters,
the dynamic shared memory opt-in (only when it grows), the fill chosen per
element width, the driver's version against NVRTC's, and every failure as a
message. The generated handlers run against the same fake in
test_cuda_handlers.py. The fake and the driver (runtime_driver.cc) are built
by Bazel (tests/fake_cuda/BUILD.bazel)."""

import subprocess

import pytest

from conftest import fake_cuda


@pytest.fixture(scope="module")
def driver():
    drv = fake_cuda("runtime_driver")
    libcuda_dir = fake_cuda("libcuda.so.1").parent

    def run(*args, fake=True, **env):
        e = {"PATH": "/usr/bin:/bin",
             "LD_LIBRARY_PATH": str(libcuda_dir) if fake else ""}
        e.update(env)
        return subprocess.run([str(drv), *args], capture_output=True,
                              text=True, env=e)
    return run


EXPECTED_SM90 = """\
cuStreamGetCtx(0x5)
cuCtxPushCurrent(0xc0)
cuModuleLoadData(\x7fELF cubin sm_90)
cuModuleGetFunction(_Z4saxpyPKf)
cuModuleGetFunction(kc_fill_u64)
cuCtxPopCurrent
get -> ok
cuStreamGetCtx(0x5)
get again -> ok
cuLaunchKernel(_Z4saxpyPKf, grid 4 2 1, block 256 1 1, shared 0, 0x5, first param abcdef, extra (nil))
launch -> ok
cuFuncSetAttribute(_Z4saxpyPKf, 8, 65536)
cuLaunchKernel(_Z4saxpyPKf, grid 4 2 1, block 256 1 1, shared 65536, 0x5, first param abcdef, extra (nil))
launch 64k -> ok
cuLaunchKernel(_Z4saxpyPKf, grid 4 2 1, block 256 1 1, shared 65536, 0x5, first param abcdef, extra (nil))
launch 64k again -> ok
cuLaunchKernel(_Z4saxpyPKf, grid 4 2 1, block 256 1 1, shared 50000, 0x5, first param abcdef, extra (nil))
launch 50k -> ok
cuFuncSetAttribute(_Z4saxpyPKf, 8, 81920)
cuLaunchKernel(_Z4saxpyPKf, grid 4 2 1, block 256 1 1, shared 81920, 0x5, first param abcdef, extra (nil))
launch 80k -> ok
launch 2048 -> a block of 64x32x1 threads exceeds CUDA's limit of 1024
cuMemsetD8Async(1000, fd, 10, 0x5)
fill i8 -> ok
cuMemsetD16Async(1000, 3e00, 10, 0x5)
fill f16 -> ok
cuMemsetD32Async(1000, 40100000, 10, 0x5)
fill f32 -> ok
cuMemsetD32Async(1000, ffffffff, 20, 0x5)
fill i64 -1 -> ok
cuLaunchKernel(kc_fill_u64, grid 4 1 1, block 256 1 1, shared 0, 0x5, first param 1000, extra (nil))
fill f64 0.1 -> ok
fill empty -> ok
cuMemcpyDtoDAsync(1000, 2000, 64, 0x5)
copy -> ok
view 0x1000 3 4 size 24
"""


def test_every_runtime_call_on_sm90(driver):
    r = driver(FAKE_CUDA_CC="90")
    assert r.returncode == 0, r.stderr
    assert r.stdout == EXPECTED_SM90


@pytest.mark.parametrize("cc, image", [
    ("80", "\x7fELF cubin sm_80"),
    ("86", "\x7fELF cubin sm_80"),   # same major version, lower minor
    ("89", "\x7fELF cubin sm_80"),
    ("90", "\x7fELF cubin sm_90"),
    ("100", ".version ptx compute_9"),  # newer major: the PTX, JIT-compiled
    ("120", ".version ptx compute_9"),
])
def test_image_choice(driver, cc, image):
    r = driver(FAKE_CUDA_CC=cc)
    assert r.returncode == 0, r.stderr
    assert f"cuModuleLoadData({image}" in r.stdout


@pytest.mark.parametrize("cc, image", [
    ("80", ".version ptx compute_80"),  # the sm_86 cubin is newer: the PTX
    ("86", "\x7fELF cubin sm_86"),
    ("89", "\x7fELF cubin sm_86"),
    ("90", ".version ptx compute_80"),
])
def test_a_cubin_newer_than_the_gpu_falls_back_to_ptx(driver, cc, image):
    r = driver("choose", FAKE_CUDA_CC=cc)
    assert r.returncode == 0, r.stderr
    assert f"cuModuleLoadData({image})\nc" in r.stdout
    assert r.stdout.endswith("get -> ok\n")


def test_no_image_for_an_older_gpu(driver):
    r = driver(FAKE_CUDA_CC="75")
    assert "get -> no binary of saxpy.cu runs on this GPU (sm_75); built for " \
        "sm_80, sm_90, compute_90: rebuild with --cuda-arch\n" in r.stdout
    assert "cuModuleLoadData" not in r.stdout
    assert "cuCtxPopCurrent" in r.stdout  # the context is restored


def test_first_load_while_capturing_relaxes_the_capture_mode(driver):
    r = driver(FAKE_CUDA_CAPTURING="1")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:8] == [
        "cuCtxGetCurrent",
        "cuThreadExchangeStreamCaptureMode(2)",
        "cuCtxPushCurrent(0xc1)",
        "cuModuleLoadData(\x7fELF cubin sm_90)",
        "cuModuleGetFunction(_Z4saxpyPKf)",
        "cuModuleGetFunction(kc_fill_u64)",
        "cuCtxPopCurrent",
        "cuThreadExchangeStreamCaptureMode(1)",
    ]
    # Once loaded, a call under capture only looks the function up.
    assert lines[8:10] == ["get -> ok", "cuCtxGetCurrent"]
    assert "cuStreamGetCtx" not in r.stdout


@pytest.mark.parametrize("fail, message", [
    ("cuModuleLoadData", "get -> cannot load the cubin of saxpy.cu for sm_90: "
     "CUDA_ERROR_INVALID_VALUE (invalid argument)"),
    ("cuModuleGetFunction", "get -> no kernel '_Z4saxpyPKf' in saxpy.cu: "
     "CUDA_ERROR_INVALID_VALUE (invalid argument)"),
    ("cuStreamGetCtx", "get -> cannot find the stream's context: "
     "CUDA_ERROR_INVALID_VALUE (invalid argument)"),
    ("cuInit", "get -> cuInit failed with CUresult 1"),
])
def test_failures_become_messages(driver, fail, message):
    r = driver(FAKE_CUDA_FAIL=fail)
    assert r.returncode == 1
    assert message + "\n" in r.stdout


def test_a_module_without_its_kernel_is_unloaded(driver):
    # Failures are not cached: each try loads the module again, and unloads
    # it again, so nothing leaks.
    r = driver(FAKE_CUDA_FAIL="cuModuleGetFunction")
    assert r.returncode == 1
    assert r.stdout.count("cuModuleLoadData(") == 2
    assert r.stdout.count("cuModuleUnload(") == 2
    assert ", 0 loaded\ncuCtxPopCurrent\nget again -> no kernel" in r.stdout


def test_a_driver_of_an_older_major_version_is_named_before_loading(driver):
    r = driver(FAKE_CUDA_DRIVER="12080")
    assert r.returncode == 1
    assert "cuModuleLoadData" not in r.stdout
    assert "get -> the CUDA driver supports CUDA 12.8, older than the NVRTC " \
        "13.0 that compiled saxpy.cu: install an NVIDIA driver for CUDA 13.0 " \
        "or newer, or rebuild the package with a CUDA toolkit no newer than " \
        "CUDA 12.8 (kernelc finds it through CUDA_HOME)\n" in r.stdout


@pytest.mark.parametrize("code, name", [
    (222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"),
    (218, "CUDA_ERROR_INVALID_PTX"),
    (209, "CUDA_ERROR_NO_BINARY_FOR_GPU"),
    (200, "CUDA_ERROR_INVALID_IMAGE"),
])
def test_an_image_a_newer_minor_version_made_names_the_driver(driver, code,
                                                              name):
    # NVRTC 13.1's images on a driver for CUDA 13.0: loaded (same major
    # version), and when that fails, the versions and the ways out are said.
    r = driver("13010", FAKE_CUDA_DRIVER="13000",
               FAKE_CUDA_FAIL=f"cuModuleLoadData={code}")
    assert r.returncode == 1
    assert f"get -> cannot load the cubin of saxpy.cu for sm_90: {name} " \
        "(fake error): the CUDA driver supports CUDA 13.0, older than the " \
        "NVRTC 13.1 that compiled saxpy.cu: install an NVIDIA driver for " \
        "CUDA 13.1 or newer, or rebuild the package with a CUDA toolkit no " \
        "newer than CUDA 13.0 (kernelc finds it through CUDA_HOME)\n" \
        in r.stdout


def test_an_image_error_on_a_new_enough_driver_says_the_versions(driver):
    r = driver("13000", FAKE_CUDA_DRIVER="13020",
               FAKE_CUDA_FAIL="cuModuleLoadData=200")
    assert "get -> cannot load the cubin of saxpy.cu for sm_90: " \
        "CUDA_ERROR_INVALID_IMAGE (fake error) (the driver supports CUDA " \
        "13.2; NVRTC 13.0 compiled it)\n" in r.stdout
    # Other load errors are not about versions.
    r = driver("13010", FAKE_CUDA_DRIVER="13000",
               FAKE_CUDA_FAIL="cuModuleLoadData")
    assert "get -> cannot load the cubin of saxpy.cu for sm_90: " \
        "CUDA_ERROR_INVALID_VALUE (invalid argument)\n" in r.stdout


def test_launch_failure_becomes_a_message(driver):
    r = driver(FAKE_CUDA_FAIL="cuLaunchKernel")
    assert r.returncode == 0
    assert "launch -> cuLaunchKernel: CUDA_ERROR_INVALID_VALUE (invalid " \
        "argument)\n" in r.stdout


def test_no_driver(driver):
    r = driver(fake=False)
    if "get -> ok" in r.stdout:
        pytest.skip("a real libcuda.so.1 is installed on this machine")
    assert r.returncode == 1
    assert r.stdout.startswith(
        "get -> cannot load the CUDA driver (libcuda.so.1): libcuda.so.1: "
        "cannot open shared object file")
