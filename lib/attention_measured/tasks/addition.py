"""Hochreiter and Schmidhuber's addition problem as Raffel and Ellis set it (Part V, section 1):
every step a value and a flag, two steps flagged, the target 0.5 + (x1 + x2) / 4."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.data import Dataset

ADDITION_TOLERANCE = 0.04  # Raffel & Ellis: a sequence is solved when |error| < 0.04


CONSTANT_MSE = 1 / 24  # the variance of 0.5 + (x1 + x2)/4 with x uniform on [-1, 1]


def addition_problem(n: int = 1000, steps: int = 50, seed: int = 0) -> Dataset:
    """Hochreiter & Schmidhuber's addition problem as Raffel & Ellis set it (section 1).

    Every step holds a value uniform on [-1, 1] and a flag; two steps are flagged, one in each
    half.  The target is 0.5 + (x1 + x2) / 4.
    """
    n, steps = checks.integer(n, "n", 1), checks.integer(steps, "steps", 2)
    rng = np.random.RandomState(checks.seed(seed))
    values = rng.uniform(-1.0, 1.0, size=(n, steps))
    half = steps // 2
    marked = np.stack([rng.randint(0, half, size=n), rng.randint(half, steps, size=n)], axis=1)
    flags = np.zeros((n, steps))
    flags[np.arange(n)[:, None], marked] = 1.0
    targets = 0.5 + values[np.arange(n)[:, None], marked].sum(axis=1) / 4
    return Dataset(np.stack([values, flags], axis=-1), targets, marked)
