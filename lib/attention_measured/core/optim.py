"""The two optimisers of the book: Part I's plain gradient descent, and Adam for every other
Part.

Both update the arrays of the :class:`~attention_measured.core.params.Params` they are given **in
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
        if isinstance(value, np.ndarray) and value.dtype == float and not np.isfinite(value).all():
            raise ValueError(f"params[{name!r}] holds NaN or infinity: nothing to train from")
        if not (isinstance(value, np.ndarray) and value.dtype == float and value.flags.writeable):
            raise TypeError(
                f"the optimiser updates arrays in place: {name!r} must be a writable float array, "
                f"got {type(value).__name__}"
            )
    return arrays


def _checked_grads(grads, arrays: dict) -> None:
    """Refuse, before anything is written, a gradient that is missing, misshapen or not finite:
    the optimiser would write it into the caller's parameters.  Skipped inside
    :func:`~attention_measured.core.checks.trusted`, where fit's gradients come from the model."""
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
    """Adam with bias correction (Kingma & Ba); Part IV, section 3 derives the update.

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
        # the moments of every array side by side in one flat vector, each array's a view of
        # its stretch: the update is then a dozen operations on one vector, whatever the number
        # of arrays, and the same floats as array by array (every operation is elementwise)
        ends = np.cumsum([value.size for value in self.arrays.values()])
        self._stretches = {
            name: (int(end) - value.size, int(end))
            for (name, value), end in zip(self.arrays.items(), ends)
        }
        total = int(ends[-1])
        self._first, self._second, self._scratch = np.zeros(total), np.zeros(total), np.empty(total)
        self._gradient, self._update = np.empty(total), np.empty(total)
        self.first, self.second = self._views(self._first), self._views(self._second)
        self._steps = self._views(self._update)
        self.iteration = 0

    def _views(self, flat: np.ndarray) -> dict[str, np.ndarray]:
        """Each array's stretch of ``flat``, shaped like the array (a view, not a copy)."""
        return {
            name: flat[start:end].reshape(self.arrays[name].shape)
            for name, (start, end) in self._stretches.items()
        }

    def step(self, grads, divisor: float = 1) -> None:
        """One update with the gradient grads / divisor (Part IV averages over sentences this
        way)."""
        _checked_grads(grads, self.arrays)
        if not checks.trusting():
            divisor = checks.real(divisor, "divisor", positive=True)
        self.iteration += 1
        b1, b2 = self.beta1, self.beta2
        correction1, correction2 = 1 - b1**self.iteration, 1 - b2**self.iteration
        g, scratch, first, second = self._gradient, self._scratch, self._first, self._second
        np.concatenate([np.ravel(grads[name]) for name in self.arrays], out=g)
        if divisor != 1:
            g /= divisor
        # first = b1 first + (1 - b1) g;  second = b2 second + (1 - b2) g²
        first *= b1
        first += np.multiply(1 - b1, g, out=scratch)
        second *= b2
        np.multiply(g, g, out=scratch)
        scratch *= 1 - b2
        second += scratch
        # value -= learning_rate (first / correction1) / (sqrt(second / correction2) + epsilon)
        update = np.divide(first, correction1, out=self._update)
        update *= self.learning_rate
        np.divide(second, correction2, out=scratch)
        np.sqrt(scratch, out=scratch)
        scratch += self.epsilon
        update /= scratch
        for name, value in self.arrays.items():
            value -= self._steps[name]
