"""The packages kernelc_library built, imported and run under jax.jit."""

import jax
import numpy as np

import axpy_ops
import reference  # through scale_ops' deps
import scale_ops


def test_scale():
    x = np.arange(7, dtype=np.float32)
    np.testing.assert_array_equal(jax.jit(scale_ops.scale)(x),
                                  reference.scale(x))


def test_axpy():
    x = np.linspace(0, 1, 5, dtype=np.float32)
    y = np.ones(5, dtype=np.float32)
    out = jax.jit(lambda x, y: axpy_ops.axpy(x, y, 2.0))(x, y)
    np.testing.assert_allclose(out, reference.axpy(x, y, 2.0), rtol=1e-6)


if __name__ == "__main__":
    test_scale()
    test_axpy()
    print("ok")
