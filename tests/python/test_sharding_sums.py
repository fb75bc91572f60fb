"""KC_SUM: an output that sums over a KC_PARALLEL dimension is, under
sharding, the psum of each device's partial sum (sharding_sums_check.py, its
own process with 4 CPU devices); kernelc rejects a KC_SUM that names no
parallel dimension or sits on an output that has the dimension."""

import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def test_sums_over_a_sharded_dimension_are_all_reduced(build_package):
    module = build_package("sharding_sums", sources=[HERE / "sharding_sums.cu"])
    pkg_dir = pathlib.Path(module.__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-W", "error::DeprecationWarning",
                        str(HERE / "sharding_sums_check.py"), str(pkg_dir),
                        module.__name__], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr


SUM_ERRORS = r"""#include <kernelc.h>
KC_KERNEL
KC_PARALLEL("n")
void a(KC_SHAPE("n, m") kc::In<float, 2> x,
       KC_SHAPE("n") KC_SUM("m") kc::Out<float, 1> s) {}
KC_KERNEL
KC_PARALLEL("n")
void b(KC_SHAPE("n, m") kc::In<float, 2> x,
       KC_SHAPE("n") KC_SUM("n") kc::Out<float, 1> s) {}
KC_KERNEL
KC_PARALLEL("n")
void c(KC_SHAPE("n") KC_SUM("n") kc::InMut<float, 1> x) {}
KC_KERNEL
KC_PARALLEL("n")
void d(KC_SHAPE("n") kc::In<float, 1> x,
       KC_SHAPE("") KC_SUM("n") kc::Out<bool, 0> s) {}
"""


def test_sum_annotations_are_checked_at_build_time(tmp_path):
    from conftest import run_kernelc
    src = tmp_path / "s.cu"
    src.write_text(SUM_ERRORS)
    r = run_kernelc("build", src, "-o", tmp_path / "out")
    assert r.returncode == 1, r.stderr
    errors = [line for line in r.stderr.splitlines() if ": error: " in line]
    assert errors == [
        f"{src}:5:30: error: KC_SUM(\"m\") on parameter 's' of kernel 'a' names no "
        "parallel dimension: 'm' is not in the kernel's KC_PARALLEL",
        f"{src}:9:30: error: KC_SUM(\"n\") on parameter 's' of kernel 'b': 's' has "
        "dimension 'n', so it is a slice along it, not a sum over it; drop KC_SUM "
        "or the dimension",
        f"{src}:12:30: error: KC_SUM on parameter 'x' of kernel 'c': only an output "
        "can be a sum over a parallel dimension, and 'x' is an in-place output",
        f"{src}:16:29: error: KC_SUM on parameter 's' of kernel 'd': a sum needs a "
        "floating or integer dtype, and 's' has dtype bool",
    ], r.stderr
