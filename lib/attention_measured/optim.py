"""Adam, the optimiser every trained model in the book shares (Part II section 3, Part III).

It works on any parameter object whose ``arrays()`` returns a dict of named
numpy arrays and whose fields can be set by name (``setattr``), such as
:class:`attention_measured.udhr.Params` and :class:`attention_measured.flavours.Params`.
"""

from __future__ import annotations

import numpy as np


class Adam:
    """Adam with bias correction (Kingma & Ba); Part II, section 3 derives the update.

    One first and one second moment per number.  To update every array with
    a handful of vector operations, the constructor moves the arrays of
    ``params`` into one flat buffer (their fields become views of it; their
    values do not change).  :meth:`step` updates them in place, with bias
    correction for the 1-based iteration count.
    """

    def __init__(
        self,
        params,
        learning_rate: float,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
    ):
        if not learning_rate > 0:
            raise ValueError(f"learning_rate must be positive, got {learning_rate!r}")
        self.learning_rate, self.beta1, self.beta2, self.epsilon = (
            learning_rate,
            beta1,
            beta2,
            epsilon,
        )
        arrays = params.arrays()
        self.flat = np.concatenate([np.asarray(a, dtype=float).ravel() for a in arrays.values()])
        start = 0
        for name, a in arrays.items():
            setattr(params, name, self.flat[start : start + np.size(a)].reshape(np.shape(a)))
            start += np.size(a)
        self.names = list(arrays)
        self.first = np.zeros_like(self.flat)
        self.second = np.zeros_like(self.flat)
        self.iteration = 0

    def step(self, grads, divisor: float = 1) -> None:
        """One update with the gradient grads / divisor (Part II averages over sentences this way)."""
        self.iteration += 1
        b1, b2 = self.beta1, self.beta2
        g = np.concatenate([np.ravel(getattr(grads, name)) for name in self.names]) / divisor
        self.first *= b1
        self.first += (1 - b1) * g
        self.second *= b2
        self.second += (1 - b2) * (g * g)
        first_hat = self.first / (1 - b1**self.iteration)
        second_hat = self.second / (1 - b2**self.iteration)
        self.flat -= self.learning_rate * first_hat / (np.sqrt(second_hat) + self.epsilon)
