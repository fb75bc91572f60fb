"""Numba-CUDA kernels for kernelc.numba's CUDA path: arrays, a scalar, the
thread indices, an atomic (axpy); a shared array and a barrier
(block_sums). tests/python/test_numba_cuda.py builds them without a GPU;
tools/prebuild_gpu.sh writes their spec and PTX (run as a script: the
directory to write) for the package gpu_numba, which tests/gpu runs."""

import pathlib
import sys

import numpy as np
from numba import cuda

import kernelc


@kernelc.numba(grid="out.size", block=128)
def axpy(x: kernelc.In(np.float32, ("n",)), a: kernelc.Scalar(np.float32),
         out: kernelc.Out(np.float32, "x"),
         total: kernelc.Out(np.float32, (1,), init=0)):
    i = cuda.grid(1)
    if i < out.shape[0]:
        # The grid's index two ways: their difference is zero.
        out[i] = a * x[i] + (cuda.threadIdx.x + cuda.blockIdx.x *
                             cuda.blockDim.x - i)
        cuda.atomic.add(total, 0, x[i])


@kernelc.numba(grid="x.size", block=64)
def block_sums(x: kernelc.In(np.float32, ("n", "m")),
               sums: kernelc.Out(np.float32, ("(n * m + 63) / 64",))):
    buf = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    m = x.shape[1]
    buf[t] = x[i // m, i % m] if i < x.size else 0
    cuda.syncthreads()
    if t == 0:
        s = 0.0
        for j in range(64):
            s += buf[j]
        sums[cuda.blockIdx.x] = s


KERNELS = [axpy, block_sums]


def main(argv):
    from kernelc import _numba_ptx
    out = pathlib.Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, text in _numba_ptx.spec_files(KERNELS, cc=(8, 0),
                                            cpu=False).items():
        (out / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
