"""Central finite differences, for the backward-pass tests."""

import numpy as np


def numeric_gradient(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d f / d x for a scalar function f of the array x, changed in place and restored."""
    grad = np.zeros(x.shape)
    for index in np.ndindex(x.shape):
        old = x[index]
        x[index] = old + eps
        up = f()
        x[index] = old - eps
        down = f()
        x[index] = old
        grad[index] = (up - down) / (2 * eps)
    return grad
