"""PTX as a kernel's CUDA code, without a GPU: a spec whose kernels are
PTX written by hand (tests/golden/emit_ptx_spec) goes through `kernelc
build --target cuda`, which assembles it with ptxas for sm_80 and sm_90,
so PTX that does not assemble fails the build; and the fake-CUDA tier
(test_cuda_handlers.py) launches it with its ABI's parameter block. The
kernels run on a GPU in tests/gpu."""

import json
import shutil

from conftest import ROOT, run_kernelc
from cuda_tools import needs_ptxas
from fake_cuda_tier import Tier, arg, attr, f32_bits, ret

PTX_SPEC = ROOT / "tests" / "golden" / "emit_ptx_spec"
ARCHS = ["--cuda-arch", "sm_80,sm_90"]




def _copy_spec(tmp_path):
    for f in PTX_SPEC.iterdir():
        if f.is_file() and f.name != "cmd":
            shutil.copy(f, tmp_path / f.name)
    return tmp_path / "spec.json"


@needs_ptxas
def test_a_hand_written_ptx_spec_builds_for_cuda(tmp_path):
    spec = _copy_spec(tmp_path)
    r = run_kernelc("build", spec, "-o", tmp_path / "out", "--target", "cuda",
                    *ARCHS)
    assert r.returncode == 0, r.stderr
    manifest = json.loads(
        (tmp_path / "out" / "spec" / "kernelc.json").read_text())
    binaries = {b["source"]: b for b in manifest["cuda"]["binaries"]}
    assert sorted(binaries) == ["scale.ptx", "scale_numba.ptx"]
    for b in binaries.values():
        # A cubin per architecture, and the PTX for its own .target.
        assert [(i["arch"], i["format"]) for i in b["images"]] == [
            ("sm_80", "cubin"), ("sm_90", "cubin"), ("compute_80", "ptx")]
    assert binaries["scale_numba.ptx"]["kernels"] == ["scale_numba"]


@needs_ptxas
def test_ptx_that_does_not_assemble_fails_the_build(tmp_path):
    spec = _copy_spec(tmp_path)
    ptx = tmp_path / "scale.ptx"
    ptx.write_text(ptx.read_text().replace("st.global.f32", "st.global.f99"))
    r = run_kernelc("build", spec, "-o", tmp_path / "out", "--target", "cuda",
                    *ARCHS)
    assert r.returncode == 1
    line = next(i for i, t in enumerate(ptx.read_text().splitlines(), 1)
                if "st.global.f99" in t)
    assert f"scale.ptx:{line}:1: error:" in r.stderr, r.stderr
    assert not (tmp_path / "out" / "spec").exists()


def test_a_ptx_kernel_has_no_cpu_code(tmp_path):
    spec = _copy_spec(tmp_path)
    r = run_kernelc("build", spec, "-o", tmp_path / "out", "--target", "cpu")
    assert r.returncode == 1
    assert ("spec.json:4:15: error: kernel 'scale' is PTX and has no CPU "
            "code") in r.stderr


@needs_ptxas
def test_fake_driver_launches_a_ptx_kernel_with_its_abi(tmp_path):
    tier = Tier(tmp_path, sources=[_copy_spec(tmp_path)])
    n, x, out = 1000, 0x100000, 0x300000
    init, run = tier.run(
        tier.call("initialize", "scale", arg("f32", x, n),
                  attr("s", "f32", 3.0), ret("f32", out, n)),
        tier.call("execute", "scale", arg("f32", x, n),
                  attr("s", "f32", 3.0), ret("f32", out, n)))
    assert init.ok, init.message
    assert run.ok, run.message
    (launch,) = run.launches()
    assert launch.name == "scale"
    assert launch.params == [x, f32_bits(3.0), n, out]
    assert launch.grid == (4, 1, 1) and launch.block == (256, 1, 1)
