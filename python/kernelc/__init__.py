"""kernelc from Python: compile annotated CUDA/C++ kernels into JAX ops and
import them, in one call.

    import jax, numpy as np
    import kernelc

    ops = kernelc.load_inline('''
        #include <kernelc.h>

        KC_GRID("out.size")
        __global__ void saxpy(KC_IN("n") const float* x, KC_IN("n") const float* y,
                              float a, KC_DERIVED("x.size") int64_t n,
                              KC_OUT("x") float* out) {
          int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
          if (i < n) out[i] = a * x[i] + y[i];
        }
        ''', name="ops")
    x = np.arange(8, dtype=np.float32)
    jax.jit(lambda x: ops.saxpy(x, x, 2.0))(x)

`load(*paths, ...)` does the same for source files. Both build through
kernelc's build cache (the one the `kernelc` command uses), so the same
source again is a cache hit that runs no compiler; an edited source gives a
new module, and modules loaded before keep working. Build options are
keyword arguments named after the command line's options (`cuda_arch`,
`use_fast_math`, `defines`, `include_dirs`, `no_cache`, `cache_dir`, ...).
Errors in the sources raise `BuildError`, whose text is kernelc's
diagnostics.
"""

from kernelc._compiler import BuildError, BuildInfo, compiler_path
from kernelc._load import load, load_inline
from kernelc._numba import (
    In,
    InMut,
    Out,
    Scalar,
    load_numba,
    numba,
    numba_source,
    write_numba,
)

__all__ = ["BuildError", "BuildInfo", "In", "InMut", "Out", "Scalar",
           "compiler_path", "load", "load_inline", "load_numba", "numba",
           "numba_source", "write_numba"]
