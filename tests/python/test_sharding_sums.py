"""KC_SUM: an output that sums over a KC_PARALLEL dimension is, under
sharding, the psum of each device's partial sum (sharding_sums_check.py, its
own process with 4 CPU devices). Its build-time checks are the golden case
diag_sum."""

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

