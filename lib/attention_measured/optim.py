"""The two optimisers of the book: Part I's plain gradient descent, and Adam for every other
Part.

Both update the arrays of the :class:`~attention_measured.params.Params` they are given **in
place**: after ``step``, the caller's own arrays hold the new values, and nothing is rebound or
copied.  The arrays must therefore be writable float arrays (as every ``init`` in the book draws
them).
"""

from __future__ import annotations

import numpy as np

from . import checks


def _checked_arrays(params) -> dict[str, np.ndarray]:
    arrays = params.arrays() if hasattr(params, "arrays") else None
    if not isinstance(arrays, dict) or not arrays:
        raise TypeError(f"params must be a Params of named arrays, got {type(params).__name__}")
    for name, value in arrays.items():
        if not (isinstance(value, np.ndarray) and value.dtype == float and value.flags.writeable):
            raise TypeError(
                f"the optimiser updates arrays in place: {name!r} must be a writable float array, "
                f"got {type(value).__name__}"
            )
    return arrays


def _checked_grads(grads, arrays: dict) -> None:
    """Refuse, before anything is written, a gradient that is missing, misshapen or not finite:
    the optimiser would write it into the caller's parameters.  Skipped inside
    :func:`~attention_measured.checks.trusted`, where fit's gradients come from the model."""
    if checks.trusting():
        return
    checks.params(grads, "grads", ())
    for name, value in arrays.items():
        if name not in grads:
            raise ValueError(f"grads has no gradient for {name!r}")
        g = grads[name]
        if np.shape(g) != value.shape:
            raise ValueError(f"grads[{name!r}] must be shaped {value.shape}, got {np.shape(g)}")
        if not np.isfinite(g).all():
            raise ValueError(f"grads[{name!r}] holds NaN or infinity; no step was taken")


class GradientDescent:
    """Full-batch gradient descent, θ ← θ − η g (Part I, section 2)."""

    def __init__(self, params, learning_rate: float):
        self.arrays = _checked_arrays(params)
        self.learning_rate = checks.real(learning_rate, "learning_rate", positive=True)
        self.iteration = 0

    def step(self, grads, divisor: float = 1) -> None:
        """One update with the gradient grads / divisor, in place."""
        _checked_grads(grads, self.arrays)
        if not checks.trusting():
            divisor = checks.real(divisor, "divisor", positive=True)
        self.iteration += 1
        for name, value in self.arrays.items():
            value -= self.learning_rate * (grads[name] / divisor if divisor != 1 else grads[name])


class Adam:
    """Adam with bias correction (Kingma & Ba); Part II, section 3 derives the update.

    One first and one second moment per number, kept here; :meth:`step` updates the parameter
    arrays in place, with bias correction for the 1-based iteration count.
    """

    def __init__(
        self,
        params,
        learning_rate: float,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
    ):
        self.arrays = _checked_arrays(params)
        self.learning_rate = checks.real(learning_rate, "learning_rate", positive=True)
        self.beta1 = checks.real(beta1, "beta1", 0.0, 1.0)
        self.beta2 = checks.real(beta2, "beta2", 0.0, 1.0)
        self.epsilon = checks.real(epsilon, "epsilon", positive=True)
        if self.beta1 == 1.0 or self.beta2 == 1.0:
            raise ValueError(
                "beta1 and beta2 must be below 1 (the bias correction divides by 1 - beta^t)"
            )
        self.first = {name: np.zeros_like(value) for name, value in self.arrays.items()}
        self.second = {name: np.zeros_like(value) for name, value in self.arrays.items()}
        self.iteration = 0

    def step(self, grads, divisor: float = 1) -> None:
        """One update with the gradient grads / divisor (Part II averages over sentences this
        way)."""
        _checked_grads(grads, self.arrays)
        if not checks.trusting():
            divisor = checks.real(divisor, "divisor", positive=True)
        self.iteration += 1
        b1, b2 = self.beta1, self.beta2
        correction1, correction2 = 1 - b1**self.iteration, 1 - b2**self.iteration
        for name, value in self.arrays.items():
            g = grads[name] / divisor
            first, second = self.first[name], self.second[name]
            first *= b1
            first += (1 - b1) * g
            second *= b2
            second += (1 - b2) * (g * g)
            value -= (
                self.learning_rate
                * (first / correction1)
                / (np.sqrt(second / correction2) + self.epsilon)
            )
