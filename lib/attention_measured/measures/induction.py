"""What a head of a language model attends to, scored against where the task says it should
(Part VII, induction heads).

Each score is the mean weight a head puts on one position of each query's past, so 1 means
the head puts all its weight there and 0 none:

- :func:`previous_token_score`: on the position just before the query (a previous-token head);
- :func:`duplicate_token_score`: on the earlier copy of the query's own token;
- :func:`induction_score`: on the token after that copy, the token the repeat predicts next
  (an induction head);
- :func:`first_position_weight`: on the first position, from chosen queries (a head that puts
  most of its weight there, whatever the query, is an attention sink).

The last two are read only at the positions whose source the task knows
(:class:`~attention_measured.tasks.repeats.Repeats`).
"""

from __future__ import annotations

import numpy as np

from ..core import checks


def _weights(weights) -> np.ndarray:
    weights = checks.array(weights, "weights", copy=False)
    if weights.ndim != 4 or weights.shape[-1] != weights.shape[-2] or weights.shape[-1] < 2:
        raise ValueError(
            f"weights must be one layer's (N, H, L, L) with L ≥ 2, got {weights.shape}"
        )
    return weights


def _source(source, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, _, length, _ = weights.shape
    source = checks.integers(source, "source", -1, length - 1)
    if source.shape != (n, length):
        raise ValueError(f"source must be (N, L) = ({n}, {length}), got {source.shape}")
    rows, at = np.nonzero(source >= 0)
    if not len(rows):
        raise ValueError("source names no position to score (every entry is −1)")
    if np.any(source[rows, at] > at):
        raise ValueError("source must name positions no later than the query's own")
    return rows, at, source[rows, at]


def previous_token_score(weights) -> np.ndarray:
    """(H,) each head's mean weight on position t − 1, over every query t ≥ 1: weights (N, H,
    L, L), one layer's."""
    weights = _weights(weights)
    t = np.arange(1, weights.shape[-1])
    return weights[:, :, t, t - 1].mean(axis=(0, 2))


def induction_score(weights, source) -> np.ndarray:
    """(H,) each head's mean weight on the token after the earlier copy of the query's token,
    over the positions whose ``source`` (N, L) the task knows (−1 elsewhere)."""
    weights = _weights(weights)
    rows, at, src = _source(source, weights)
    return weights[rows, :, at, src].mean(axis=0)


def duplicate_token_score(weights, source) -> np.ndarray:
    """(H,) each head's mean weight on the earlier copy of the query's own token (one before
    the ``source`` of :func:`induction_score`), over the same positions."""
    weights = _weights(weights)
    rows, at, src = _source(source, weights)
    return weights[rows, :, at, src - 1].mean(axis=0)


def first_position_weight(weights, where) -> np.ndarray:
    """(H,) each head's mean weight on position 0, over the queries t ≥ 1 where ``where``
    (N, L) is True (Part VII, attention sinks)."""
    weights = _weights(weights)
    n, _, length, _ = weights.shape
    where = checks.mask(where, "where", (n, length))
    where = where.copy()
    where[:, 0] = False  # position 0 can attend nowhere else
    if not where.any():
        raise ValueError("where must choose at least one query after the first position")
    rows, at = np.nonzero(where)
    return weights[rows, :, at, 0].mean(axis=0)
