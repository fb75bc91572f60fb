"""KC_PARALLEL: under jax.jit with inputs sharded along a parallel dimension
the compiled HLO holds no all-gather for the op and the results equal the
unsharded ones; also under vmap, inside shard_map and under grad. Runs in its
own process with 4 CPU devices (sharding_check.py)."""

import pathlib

from conftest import run_check

HERE = pathlib.Path(__file__).resolve().parent


def test_sharding_without_gathers(build_package):
    module = build_package("sharding_kernels", sources=[HERE / "sharding_kernels.cu"])
    run_check("sharding_check.py", module)


PARALLEL_ERRORS = r"""#include <kernelc.h>
KC_KERNEL
KC_PARALLEL("n")
void relu_count(KC_SHAPE("n") kc::In<float, 1> x, KC_SHAPE("n") kc::Out<float, 1> y,
                KC_SHAPE("") KC_INIT(0) kc::Out<int32_t, 0> count) {}
KC_GRID("n")
KC_PARALLEL("m")
__global__ void flatten(KC_IN("m, k") const float* x, KC_DERIVED("x.size") int64_t n,
                        KC_OUT("n") float* out) {}
"""


def test_parallel_outputs_are_checked_at_build_time(tmp_path):
    # Sharded, these would give one device's count, and an output sized by
    # one shard: kernelc rejects both when it builds them.
    from conftest import run_kernelc
    src = tmp_path / "p.cu"
    src.write_text(PARALLEL_ERRORS)
    r = run_kernelc("build", src, "-o", tmp_path / "out")
    assert r.returncode == 1, r.stderr
    errors = [line for line in r.stderr.splitlines() if ": error: " in line]
    assert errors == [
        f"{src}:3:14: error: KC_PARALLEL of kernel 'relu_count' names 'n', but output "
        "'count' has no dimension 'n'; each device writes only its slice of every "
        "output, so every output needs each parallel symbol as a whole dimension",
        f"{src}:7:14: error: KC_PARALLEL of kernel 'flatten' names 'm', and dimension "
        "'n' of 'out' depends on it, so each device would compute that dimension "
        "from its own shard; a dimension that depends on a parallel symbol must be "
        "that symbol",
    ], r.stderr
