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


def check_model_gradients(params, loss_and_grads, atol: float = 1e-7) -> None:
    """Every gradient of ``loss_and_grads()`` (a (loss, grads) pair) equal to the central finite
    difference of its loss, array by array of ``params``, which the call must read."""
    _, grads = loss_and_grads()
    assert set(grads) == set(params)
    for key in params:
        numeric = numeric_gradient(lambda: loss_and_grads()[0], params[key])
        np.testing.assert_allclose(grads[key], numeric, atol=atol, err_msg=key)
