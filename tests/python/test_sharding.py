"""KC_PARALLEL: under jax.jit with inputs sharded along a parallel dimension
the compiled HLO holds no all-gather for the op and the results equal the
unsharded ones; also under vmap, inside shard_map and under grad. Runs in its
own process with 4 CPU devices (sharding_check.py)."""

import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def test_sharding_without_gathers(build_package):
    module = build_package("sharding_kernels", sources=[HERE / "sharding_kernels.cu"])
    pkg_dir = pathlib.Path(module.__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, str(HERE / "sharding_check.py"), str(pkg_dir),
                        module.__name__], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr
