"""The marked-step sequences with a second pattern in the label (Part II, section 2): the marked
reading against the sequence's mean, which one weighted average of linear values cannot give and
two heads can."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.data import Dataset
from . import marked_step

LEVEL_SPREAD = 2.0


def two_patterns(n: int = 720, seed: int = 0, level_spread: float = LEVEL_SPREAD) -> Dataset:
    """Part I's sequences with a second pattern in the label (section 6).

    Every sequence has its own general level, uniform on ±level_spread/2; its twelve readings
    are that level plus 1.9·(u1 + u2 + u3 − 1.5), as in Part I, and a marker sits on one of
    steps 2 to 11.  The label is 1 when the marker's reading exceeds the mean of all twelve
    readings.  One weighted average of linear values cannot give "marker minus mean"; two can.
    """
    n = checks.integer(n, "n", 1)
    level_spread = checks.real(level_spread, "level_spread", 0.0)
    rng = np.random.RandomState(checks.seed(seed))
    level = level_spread * (rng.random_sample((n, 1)) - 0.5)
    readings = level + marked_step.READING_SPREAD * (
        rng.random_sample((n, marked_step.STEPS, 3)).sum(axis=-1) - 1.5
    )
    markers = rng.randint(marked_step.FIRST_MARKER, marked_step.STEPS, size=n)
    flags = (np.arange(marked_step.STEPS) == markers[:, None]).astype(float)
    labels = (readings[np.arange(n), markers] > readings.mean(axis=1)).astype(float)
    return Dataset(np.stack([readings, flags], axis=-1), labels, markers[:, None])
