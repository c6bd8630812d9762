"""Sequences of token ids to be copied backwards: an alignment task whose true alignment is the
anti-diagonal (Part V, section 3)."""

from __future__ import annotations

import numpy as np

from ..core import checks


def reversal(n: int = 500, length: int = 8, vocabulary: int = 10, seed: int = 0) -> np.ndarray:
    """Source sequences (N, L) of random token ids; the target of each is the sequence reversed
    (section 3).
    """
    n, length, vocabulary = (
        checks.integer(n, "n", 1),
        checks.integer(length, "length", 2),
        checks.integer(vocabulary, "vocabulary", 2),
    )
    return np.random.RandomState(checks.seed(seed)).randint(0, vocabulary, size=(n, length))
