"""Where the weights fall against the marked step, and what dropping steps does there (Part I,
sections 3 and 4; Part II, section 2; Part V, section 4), for any model of the book's protocol on
a task with a marked step.

:func:`accuracy`, :func:`marker_weight` (the mean weight on the marked step and the share of
examples whose heaviest step it is) and :func:`causality` (agreement between the heaviest step
and the most influential one, and the heavy steps that do nothing); :func:`eight_numbers`
gathers Part I's eight numbers for each network of a stack, :func:`measure` the four of Part
III's side-by-side table, and :func:`heads_measures` those of several heads.  Each takes the
model, its parameters (a stack of networks gives one value per network) and the data.
"""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.data import Dataset
from . import removal

HEAVY = 0.5  # a "heavy" step carries more than half the weight


INERT = 0.05  # ... and is "inert" if removing it moves p by less


def _model(model, params):
    """``model``, after checking that it follows the protocol and that ``params`` are its own."""
    if not callable(getattr(model, "forward", None)):
        raise TypeError(f"model must follow the book's protocol, got {type(model).__name__}")
    if callable(getattr(model, "init", None)):
        checks.params_of(model, params, "params")
    return model


def _data(data, name: str = "data") -> Dataset:
    if not isinstance(data, Dataset):
        raise TypeError(
            f"{name} must be a Dataset with its marked steps, got {type(data).__name__}"
        )
    return data


def _weights(model, params, data) -> np.ndarray:
    """The model's weights on ``data``, (R..., N, T): one row of weights per example."""
    weights = _model(model, params).forward(params, data.inputs).weights
    if weights is None or weights.shape[-2] != len(data):
        raise ValueError("the model must have one row of weights per example, (..., N, T)")
    return weights


def _step_effects(model, params, inputs) -> np.ndarray:
    """|Δp| of every step: by the model's own closed form where it has one, else by running it
    once per dropped step (the two are held equal by the tests)."""
    if callable(getattr(model, "removal_effects", None)):
        return removal.effects(*model.removal_effects(params, inputs))
    return removal.effects(*removal.removal_effects(model, params, inputs))


def accuracy(model, params, data) -> np.ndarray:
    """Share of examples whose logit has the label's sign: (R...,), one value per network."""
    logit = _model(model, params).forward(params, _data(data).inputs).output
    return np.mean((logit > 0) == (data.targets == 1), axis=-1)


def marker_weight(model, params, data) -> tuple[np.ndarray, np.ndarray]:
    """The mean weight on the marked step, and the share of examples whose heaviest step is the
    marked one: two arrays of shape (R...,) (section 3)."""
    weights = _weights(model, params, _data(data))
    marker = data.marked[:, 0]
    on_marker = np.take_along_axis(
        weights, np.broadcast_to(marker[:, None], weights.shape[:-1] + (1,)), -1
    )[..., 0]
    hits = weights.argmax(axis=-1) == marker
    return on_marker.mean(axis=-1), hits.mean(axis=-1)


def causality(model, params, data) -> dict[str, np.ndarray]:
    """The removal test of section 4, one value per network (each of shape (R...,)).

    agreement: share of examples whose heaviest step is also the step whose removal moves p
    most; effect_of_heaviest: mean |Δp| from removing the heaviest step; heavy_count: examples
    whose heaviest weight exceeds 0.5; heavy_inert_count: of those, the ones where removing it
    moves p by < 0.05.
    """
    weights = _weights(model, params, _data(data))
    effects = _step_effects(model, params, data.inputs)
    heaviest = weights.argmax(axis=-1)
    effect_of_heaviest = np.take_along_axis(effects, heaviest[..., None], -1)[..., 0]
    heavy = weights.max(axis=-1) > HEAVY
    return {
        "agreement": removal.agreement(weights, effects),
        "effect_of_heaviest": effect_of_heaviest.mean(axis=-1),
        "heavy_count": heavy.sum(axis=-1),
        "heavy_inert_count": (heavy & (effect_of_heaviest < INERT)).sum(axis=-1),
    }


def eight_numbers(model, params, train_set, heldout) -> list[dict]:
    """The lesson's eight numbers for each network of a stack (params with one run axis):
    accuracy on the training and held-out sets, then :func:`marker_weight` and
    :func:`causality` on the held-out set, counts as ints and the rest as floats."""
    _data(train_set, "train_set"), _data(heldout, "heldout")
    weight, hit = marker_weight(model, params, heldout)
    if np.ndim(weight) != 1:
        raise ValueError("params must be a stack of networks, one run axis first")
    columns = {
        "train_accuracy": accuracy(model, params, train_set),
        "heldout_accuracy": accuracy(model, params, heldout),
        "marker_weight": weight,
        "marker_hit_rate": hit,
        **causality(model, params, heldout),
    }
    counts = {"heavy_count", "heavy_inert_count"}
    return [
        {k: (int(v[r]) if k in counts else float(v[r])) for k, v in columns.items()}
        for r in range(len(weight))
    ]


def measure(model, params, data) -> dict[str, float]:
    """Part V's four numbers of one model on one held-out set (section 4): accuracy (of the
    probability against 0.5), weight on the marker, hit rate, agreement."""
    data = _data(_model(model, params) and data)
    own = model.forward(params, data.inputs)
    weights = own.weights  # (N, T)
    marker = data.marked[:, 0]
    prob, without = removal.removal_effects(model, params, data.inputs)
    effects = removal.effects(prob, without)
    heaviest = weights.argmax(axis=-1)
    return {
        "accuracy": float(np.mean((prob > 0.5) == (data.targets == 1))),
        "marker_weight": float(weights[np.arange(len(data)), marker].mean()),
        "marker_hit_rate": float(np.mean(heaviest == marker)),
        "agreement": float(removal.agreement(weights, effects)),
    }


def heads_measures(model, params, data) -> dict:
    """Accuracy, and per head: weight on the marker, hit rate, agreement with the per-head
    removal test and the weights' entropy; the per-head values are arrays of shape (H,) (section
    6).  The model's weights are (N, H, T)."""
    data = _data(_model(model, params) and data)
    own = model.forward(params, data.inputs)
    logit, weights = own.output, own.weights
    effects = _step_effects(model, params, data.inputs)  # (N, H, T)
    marker = data.marked[:, 0]
    n = np.arange(len(data))
    return {
        "accuracy": float(np.mean((logit > 0) == (data.targets == 1))),
        "marker_weight": weights[n, :, marker].mean(axis=0),
        "marker_hit_rate": (weights.argmax(axis=2) == marker[:, None]).mean(axis=0),
        "agreement": removal.agreement(weights.swapaxes(0, 1), effects.swapaxes(0, 1)),
        "entropy": (-(weights * np.log(weights + 1e-300)).sum(axis=2)).mean(axis=0),
    }
