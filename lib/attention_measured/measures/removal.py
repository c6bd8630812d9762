"""Part I's rule for reading attention, shared by every Part: a weight beside what removing it
does.

- :func:`removal_effects`  the removal test for any model that can be told which steps it may
                           attend to: ``(p, p_without)``, its output and, for each step t, its
                           output when t is dropped and the other weights are renormalised
                           (Part I, section 4)
- :func:`effects`          |p_without − p|, how far dropping each step moves the output
- :func:`agreement`        the share of examples whose heaviest step is also the step
                           whose removal moves the output most

Every Part's own ``removal_effects`` (Part I's, Part II's, the heads') is a faster, analytic path
to the same pair, and its tests hold it equal to :func:`removal_effects`.
"""

from __future__ import annotations

import numpy as np

from ..core import checks


def removal_effects(output, shape) -> tuple[np.ndarray, np.ndarray]:
    """Part I's removal test for any model (section 4): ``(p (N,), p_without shape)``.

    ``shape`` is the shape of the model's weights, (N, T), or (N, U, T) where each example has
    U sets of weights (heads, queries) that steps can be dropped from one at a time.
    ``output(keep)`` is the model's output (N,) when it may attend only where ``keep`` (shaped
    ``shape``) is True, and its own output when ``keep`` is None.  p_without[n, ..., t] is the
    output when step t alone is dropped (from that one set) and the rest renormalised.
    """
    if not callable(output):
        raise TypeError(f"output must be the model's output as a function of keep, got {output!r}")
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"shape must be the weights' shape (N, ..., T), got {shape!r}")
    shape = tuple(checks.integer(n, "shape", 1) for n in shape)
    if len(shape) < 2:
        raise ValueError(f"shape must be (N, ..., T), the weights' shape; got {shape}")
    p = np.asarray(output(None), dtype=float)
    if p.shape != shape[:1]:
        raise ValueError(f"output must give one value per example, ({shape[0]},); got {p.shape}")
    p_without = np.empty(shape)
    for where in np.ndindex(*shape[1:]):
        keep = np.ones(shape, dtype=bool)
        keep[(slice(None), *where)] = False
        p_without[(slice(None), *where)] = output(keep)
    return p, p_without


def effects(p, p_without) -> np.ndarray:
    """The removal effect of every step: |p_without − p|, shaped like p_without.

    p (..., N) and p_without (..., N, T), or (..., N, U, T) when each example has U sets of
    weights (heads) that a step is dropped from one at a time.
    """
    p, p_without = checks.array(p, "p"), checks.array(p_without, "p_without")
    if p_without.ndim <= p.ndim or p_without.shape[: p.ndim] != p.shape:
        raise ValueError(
            f"p_without {p_without.shape} must be p {p.shape} with more axes after it, the steps "
            "last"
        )
    return np.abs(p_without - p.reshape(p.shape + (1,) * (p_without.ndim - p.ndim)))


def agreement(weights, removal_effects) -> np.ndarray:
    """Share of examples whose heaviest step is the most influential one: (..., N, T) pairs ->
    (...).

    ``weights`` and ``removal_effects`` have one shape, the steps last and the examples before
    them; the share is taken over the examples.
    """
    weights = checks.array(weights, "weights")
    removal_effects = checks.array(removal_effects, "removal_effects")
    if weights.shape != removal_effects.shape or weights.ndim < 2:
        raise ValueError(
            f"weights {weights.shape} and removal_effects {removal_effects.shape} must have one "
            "shape (..., N, T)"
        )
    return np.mean(weights.argmax(axis=-1) == removal_effects.argmax(axis=-1), axis=-1)
