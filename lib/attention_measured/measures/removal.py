"""Part I's rule for reading attention, shared by every model: a weight beside what removing it
does.

- :func:`removal_effects`  the removal test for any model of the book's protocol:
                           ``(p, p_without)``, its output and, for each step t, its output when
                           t is dropped and the other weights are renormalised (Part I, section 4)
- :func:`effects`          |p_without − p|, how far dropping each step moves the output
- :func:`agreement`        the share of examples whose heaviest step is also the step
                           whose removal moves the output most

A model may compute the same pair faster, in closed form, as its own ``removal_effects`` method
(Part I's network, Part IV's head, several heads); its tests hold it equal to this one.
"""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.losses import sigmoid
from ..models.protocol import Output


def output_of(model, out: Output) -> np.ndarray:
    """What the removal test reads of an output: the probability of label 1 for a model whose
    output is a logit, the value itself for a regression (Part V's addition problem)."""
    if not isinstance(out, Output):
        raise TypeError(f"out must be the Output of the model's forward pass, got {out!r}")
    kind = getattr(model, "output_kind", None)
    if kind == "logit":
        return sigmoid(out.output)
    if kind == "value":
        return np.asarray(out.output, dtype=float)
    raise ValueError(
        f"the removal test reads one number per example, a logit or a value; this model's "
        f"output is {kind!r}"
    )


def removal_effects(model, params, inputs) -> tuple[np.ndarray, np.ndarray]:
    """Part I's removal test for any model (section 4): ``(p, p_without)``.

    ``model`` follows the book's protocol (:mod:`~attention_measured.models.protocol`) and
    answers one number per example (:func:`output_of`).  p is that number on ``inputs``, shaped
    like the model's output (N,) or (R..., N); p_without adds the weights' last axes: (N, T),
    or (N, Q, T) for a model with Q rows of weights (heads), a step then dropped from one row
    at a time while the other rows keep every step.  p_without[..., t] is the output when step
    t alone is dropped and the remaining weights are renormalised.
    """
    if not callable(getattr(model, "forward", None)):
        raise TypeError(f"model must follow the book's protocol, got {type(model).__name__}")
    if callable(getattr(model, "init", None)):
        checks.params_of(model, params, "params")
    if inputs is None or isinstance(inputs, (str, bytes)):
        raise TypeError(f"inputs must be the model's inputs (arrays of examples), got {inputs!r}")
    own = model.forward(params, inputs)
    p = output_of(model, own)
    shape = own.weights.shape
    rows = shape[p.ndim :]  # the weights' axes after the examples: (T,) or (Q, T)
    p_without = np.empty(p.shape + rows)
    for where in np.ndindex(*rows):
        keep = np.ones(rows, dtype=bool)
        keep[where] = False
        p_without[(..., *where)] = output_of(model, model.forward(params, inputs, keep=keep))
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
