"""jax.export: a kernelc op exports with symbolic dimensions, its trace-time
checks defer to the handler's run-time checks where they are inconclusive,
the package lists its custom-call targets for the safety check, and a
serialized export runs in a new process that imports the package."""

import json
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

from conftest import EXAMPLES


@pytest.fixture(scope="module")
def ex(build_package):
    return build_package("export_examples", sources=[EXAMPLES / "saxpy.cu",
                                                     EXAMPLES / "matmul.cu"])


def exported(module, fn, *specs):
    checks = [export.DisabledSafetyCheck.custom_call(t)
              for t in module.CUSTOM_CALL_TARGETS]
    return export.export(jax.jit(fn), disabled_checks=checks)(*specs)


def test_custom_call_targets_are_the_manifests(ex):
    manifest = json.loads((pathlib.Path(ex.__file__).parent / "kernelc.json").read_text())
    assert ex.CUSTOM_CALL_TARGETS == tuple(k["ffi_target"] for k in manifest["kernels"])
    # Without them, jax refuses to serialize the calls.
    n, = export.symbolic_shape("n")
    spec = jax.ShapeDtypeStruct((n,), jnp.float32)
    with pytest.raises(ValueError, match="Cannot serialize code with custom calls"):
        export.export(jax.jit(lambda x, y: ex.saxpy(x, y, 2.0)))(spec, spec)


def test_symbolic_dimensions_trace_and_keep_their_expressions(ex):
    m, k, j = export.symbolic_shape("m, k, j")
    f32 = jnp.float32
    e = exported(ex, ex.matmul, jax.ShapeDtypeStruct((m, k), f32),
                 jax.ShapeDtypeStruct((j, 3), f32))
    assert str(e.out_avals[0].shape) == "(m, 3)"
    a, b = np.ones((4, 5), np.float32), np.arange(15, dtype=np.float32).reshape(5, 3)
    np.testing.assert_allclose(np.asarray(e.call(a, b)), a @ b)
    # k = j could not be decided while tracing: the handler checks it.
    with pytest.raises(Exception, match=r"matmul: parameter 'b' has shape \(6, 3\), but "
                                        r"dimension 0 must be k = 5"):
        e.call(a, np.ones((6, 3), np.float32))
    # Dimensions that differ for every value of the symbols still fail at
    # trace time.
    with pytest.raises(ValueError, match=r"matmul: parameter 'b' has shape \(k \+ 1, 3\), "
                                         r"but dimension 0 must be k = k"):
        exported(ex, ex.matmul, jax.ShapeDtypeStruct((m, k), f32),
                 jax.ShapeDtypeStruct((k + 1, 3), f32))


ROUND_TRIP = r"""
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import jax
from jax import export
import export_examples  # registers the package's custom-call targets
saxpy, grad = (export.deserialize(bytearray(open(p, "rb").read()))
               for p in sys.argv[2:])
x = np.arange(7, dtype=np.float32)
y = np.ones(7, np.float32)
np.testing.assert_allclose(np.asarray(saxpy.call(x, y)), 2 * x + y)
np.testing.assert_allclose(np.asarray(grad.call(x[:5], y[:5])), 2 * 2 * (2 * x[:5] + 1))
print("OK", saxpy.in_avals)
"""


def test_serialized_export_runs_in_a_new_process(ex, tmp_path):
    n, = export.symbolic_shape("n")
    spec = jax.ShapeDtypeStruct((n,), jnp.float32)
    saxpy = exported(ex, lambda x, y: ex.saxpy(x, y, 2.0), spec, spec)
    grad = exported(ex, jax.grad(lambda x, y: jnp.sum(ex.saxpy(x, y, 2.0) ** 2)),
                    spec, spec)
    files = [tmp_path / "saxpy.jax", tmp_path / "grad.jax"]
    for path, e in zip(files, (saxpy, grad)):
        path.write_bytes(e.serialize())
    pkg_dir = pathlib.Path(ex.__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", ROUND_TRIP, str(pkg_dir), *map(str, files)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("OK"), r.stdout + r.stderr
    assert "float32[n]" in r.stdout, r.stdout
