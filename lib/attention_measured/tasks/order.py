"""Token sequences holding one A and one B among fillers, labelled by which comes first (Part II,
section 7): a task that attention without positions cannot solve."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.data import Dataset

ORDER_TOKENS = ("A", "B")  # ids 0 and 1; the others are fillers


def order_task(n: int = 1000, length: int = 8, vocabulary: int = 6, seed: int = 0) -> Dataset:
    """Sequences of tokens holding one A (id 0) and one B (id 1) among fillers; label 1 when A
    comes first (section 7).

    inputs: (N, L) token ids (stored in Dataset.inputs); marked: (N, 2) the positions of A and
    B.  Without knowing positions the label is a coin flip.
    """
    n, length = checks.integer(n, "n", 1), checks.integer(length, "length", 2)
    vocabulary = checks.integer(vocabulary, "vocabulary", 3)
    rng = np.random.RandomState(checks.seed(seed))
    tokens = rng.randint(2, vocabulary, size=(n, length))
    places = np.argsort(rng.random_sample((n, length)), axis=1)[:, :2]  # two distinct positions
    tokens[np.arange(n), places[:, 0]] = 0
    tokens[np.arange(n), places[:, 1]] = 1
    return Dataset(tokens, (places[:, 0] < places[:, 1]).astype(float), places)


def shuffled(tokens, shuffle: int) -> np.ndarray:
    """The steps of ``tokens`` (..., L) in the order drawn by RandomState(shuffle); shuffle 0
    keeps them (section 7).
    """
    tokens = checks.integers(tokens, "tokens", 0)
    if tokens.ndim < 1:
        raise ValueError(f"tokens must have a last axis of steps, got shape {tokens.shape}")
    shuffle = checks.seed(shuffle, "shuffle")
    if shuffle == 0:
        return tokens
    return tokens[..., np.random.RandomState(shuffle).permutation(tokens.shape[-1])]
