"""The ops' results, computed with NumPy."""

import numpy as np


def scale(x):
    return 3.0 * np.asarray(x)


def axpy(x, y, a):
    return a * np.asarray(x) + np.asarray(y) + 1.0
