"""The one way every model of the book is built, run, trained and measured.

A model is an object with three methods:

- ``init(seed) -> Params``: its initial parameters, drawn from ``seed``;
- ``forward(params, inputs, *, keep=None, weights=None, scale=None) -> Output``: the model on
  a batch of examples, with any of three changes (Part I, section 4, and Part VI):

  - ``keep``: boolean, broadcastable to the weights' shape, True where attention may go: the
    other steps are dropped and the remaining weights renormalised (the removal test);
  - ``weights``: the shape of the weights, put in the place of the model's own;
  - ``scale``: (N, T), each step's input multiplied by it (the gradient with respect to the
    input);

- ``loss_and_grads(params, inputs, targets) -> (loss, grads)``: the training loss before a
  step and its gradients, for :func:`~attention_measured.core.training.fit` (a model that draws
  its own batches says so with ``draws = True`` and takes ``rng`` and ``baseline`` instead of
  targets);

two optional methods, which Part VI's rankings use where a model has them:

- ``contributions(params, inputs)``: what each step adds to each row's attention output,
  shaped like the weights with a feature axis last (Kobayashi et al. 2020's α f(x), made by
  :func:`~attention_measured.core.attention.step_contributions`);
- ``without_step(inputs, step)``: the inputs with step ``step`` (N,) of each example deleted,
  so the model reads one step fewer (Jain & Wallace 2019's leave-one-out), made with
  :func:`drop_step`;

and two attributes: ``output_kind``, how to read its output (:data:`OUTPUT_KINDS`), and
``cannot``, a dict {change: why} of the changes it refuses (the Transformer's weights, spread over
heads and layers, cannot be replaced by one row; ``"delete"`` where ``without_step`` would
leave a model built for a fixed number of steps).  A model whose loss may read its weights (Part
V's adversary) also has ``backward(params, inputs, out, grad_output, grad_weights=None)``.

Every forward pass returns an :class:`Output`; every measure of the book takes a model through
these methods, so that a new model needs no code of its own to be measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core import checks
from ..core.attention import softmax

OUTPUT_KINDS = {
    "logit": "one logit per example (N,): the probability of label 1 is its sigmoid",
    "value": "one real value per example (N,), a regression's output",
    "classes": "one score per class and example (N, K): their softmax is the probabilities",
    "tokens": "one score per token of the vocabulary for each query row (N, Q, V)",
}


@dataclass(frozen=True)
class Output:
    """What every model's forward pass returns.

    - ``output``: the model's answer, read as its ``output_kind`` says: (N,), (N, K) or (N, Q, V);
    - ``weights``: the attention weights, (N, T) for a model with one query, (N, Q, T) for one
      with Q rows of weights (heads, hops, output positions, target words); a model that trains
      R networks side by side puts the run axes first, (R..., N, T);
    - ``mask``: boolean, broadcastable to the weights, True where the model may attend by its
      own rule (not to padding, not to itself), or None for everywhere;
    - ``layers``: (N, L, T, T), the self-attention of each layer beneath the weights, averaged
      over heads, for attention rollout and flow (Part VI), or None;
    - ``parts``: the other arrays the pass computed, by name (hidden states, each layer's
      weights, what the backward pass reads again); each model's docstring lists its own.
    """

    output: np.ndarray
    weights: np.ndarray | None
    mask: np.ndarray | None = None
    layers: np.ndarray | None = None
    parts: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if not isinstance(self.parts, dict):
            raise TypeError(f"parts must be a dict of arrays by name, got {self.parts!r}")


def changes(keep, weights, scale, shape: tuple, steps: tuple, cannot: dict | None = None):
    """``keep``, ``weights`` and ``scale`` checked against a forward pass whose weights have
    ``shape`` and whose inputs have ``steps`` (N, T): keep a boolean array and weights a float
    array, each broadcast to ``shape``, scale a float array of ``steps``; None stays None.  A
    change named in ``cannot`` is refused with its reason.  Used by every model's forward."""
    for name, value in (("shape", shape), ("steps", steps)):
        if not isinstance(value, tuple) or not all(isinstance(n, int) for n in value):
            raise TypeError(f"{name} must be a tuple of axis lengths, got {value!r}")
    if cannot is not None and not isinstance(cannot, dict):
        raise TypeError(f"cannot must be a dict of changes and reasons, got {cannot!r}")
    cannot = cannot or {}
    for name, value in (("keep", keep), ("weights", weights), ("scale", scale)):
        if value is not None and name in cannot:
            raise ValueError(f"this model cannot take {name}: {cannot[name]}")
    if keep is not None:
        keep = _broadcast(checks.mask(keep, "keep"), "keep", shape)
    if weights is not None:
        weights = _broadcast(checks.array(weights, "weights", copy=False), "weights", shape)
    if scale is not None:
        scale = checks.array(scale, "scale", shape=steps, copy=False)
    return keep, weights, scale


def _broadcast(value: np.ndarray, name: str, shape: tuple) -> np.ndarray:
    try:
        return np.broadcast_to(value, shape)
    except ValueError:
        raise ValueError(
            f"{name} of shape {value.shape} does not broadcast to the weights' {shape}"
        ) from None


def drop_step(array, step) -> np.ndarray:
    """``array`` (N, T, ...) without each example's step ``step`` (N,): (N, T − 1, ...), the
    later steps moved up one place (a model's ``without_step``, Part VI)."""
    array = np.asarray(array)
    if array.ndim < 2 or array.shape[1] < 2:
        raise ValueError(f"array must be (N, T, ...) with T of 2 or more, got {array.shape}")
    step = checks.integers(step, "step", 0, array.shape[1] - 1)
    if step.shape != (len(array),):
        raise ValueError(f"step must hold one step per example, ({len(array)},)")
    kept = np.arange(array.shape[1]) != step[:, None]  # (N, T)
    return array[kept].reshape((len(array), array.shape[1] - 1) + array.shape[2:])


def take(inputs, rows) -> object:
    """The examples ``rows`` (an index array) of a model's inputs: an array, a tuple of arrays
    that share their example axis (a translator's source and target), or an object with a
    ``take(rows)`` method of its own (a batch of sentences)."""
    rows = checks.integers(rows, "rows", 0)
    if hasattr(inputs, "take") and not isinstance(inputs, np.ndarray):
        return inputs.take(rows)
    if isinstance(inputs, tuple):
        return tuple(np.asarray(part)[rows] for part in inputs)
    if isinstance(inputs, np.ndarray):
        if rows.size and rows.max() >= len(inputs):
            raise ValueError(f"rows must be below the {len(inputs)} examples, got {rows.max()}")
        return inputs[rows]
    raise TypeError(
        f"inputs must be an array, a tuple of arrays or a batch with take(), got "
        f"{type(inputs).__name__}"
    )


def probabilities(kind: str, output) -> np.ndarray:
    """A model's output read as class probabilities: (N, 2) for a logit, the softmax of class
    scores (N, K), or of token scores over the last axis.  A regression has no classes."""
    kind = checks.choice(kind, "kind", OUTPUT_KINDS)
    output = checks.array(output, "output", copy=False)
    if kind == "value":
        raise ValueError("a regression's output is a value, not probabilities of classes")
    if kind == "logit":
        output = np.stack([np.zeros_like(output), output], axis=-1)
    return softmax(output)
