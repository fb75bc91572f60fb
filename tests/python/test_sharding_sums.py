"""KC_SUM: an output that sums over a KC_PARALLEL dimension is, under
sharding, the psum of each device's partial sum (sharding_sums_check.py, its
own process with 4 CPU devices). Its build-time checks are the golden case
diag_sum."""

import pathlib

from conftest import run_check

HERE = pathlib.Path(__file__).resolve().parent


def test_sums_over_a_sharded_dimension_are_all_reduced(build_package):
    module = build_package("sharding_sums", sources=[HERE / "sharding_sums.cu"])
    run_check("sharding_sums_check.py", module)

