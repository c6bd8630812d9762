"""Part I's rule for reading attention, shared by every Part: a weight beside what removing it
does.

Every Part's ``removal_effects`` has one meaning: it returns ``(p, p_without)``, the model's
output probability ``p`` (..., N) and, for each step t, ``p_without[..., t]`` (..., N, T), the
probability when step t is dropped from the attention and the other weights are renormalised
(Part I, section 4).  The functions here turn that into the book's two numbers:

- :func:`effects`    |p_without − p|, how far dropping each step moves the output
- :func:`agreement`  the share of examples whose heaviest step is also the step
                     whose removal moves the output most
"""

from __future__ import annotations

import numpy as np


def effects(p, p_without) -> np.ndarray:
    """The removal effect of every step: |p_without − p|, shaped like p_without (..., N, T)."""
    p, p_without = np.asarray(p, dtype=float), np.asarray(p_without, dtype=float)
    if p_without.shape[:-1] != p.shape:
        raise ValueError(
            f"p_without {p_without.shape} must be p {p.shape} with one more axis, the steps"
        )
    return np.abs(p_without - p[..., None])


def agreement(weights, removal_effects) -> np.ndarray:
    """Share of examples whose heaviest step is the most influential one: (..., N, T) pairs ->
    (...).

    ``weights`` and ``removal_effects`` have one shape, the steps last and the examples before
    them; the share is taken over the examples.
    """
    weights, removal_effects = np.asarray(weights), np.asarray(removal_effects)
    if weights.shape != removal_effects.shape or weights.ndim < 2:
        raise ValueError(
            f"weights {weights.shape} and removal effects {removal_effects.shape} must have one "
            "shape (..., N, T)"
        )
    return np.mean(weights.argmax(axis=-1) == removal_effects.argmax(axis=-1), axis=-1)
