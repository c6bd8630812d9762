"""Where the weights fall against the marked step, and what dropping steps does there (Part I,
sections 3 and 4; Part III, sections 4 and 6).

For Part I's network: :func:`accuracy`, :func:`marker_weight` (the mean weight on the marked step
and the share of sequences whose heaviest step it is) and :func:`causality` (agreement between
the heaviest step and the most influential one, and the heavy steps that do nothing), gathered by
:func:`measure_runs`.  For a reader of any flavour: :func:`measure` and its
:func:`removal_effects`; for several heads: :func:`heads_measures`.
"""

from __future__ import annotations

import numpy as np

from ..core.data import Dataset
from ..core.losses import sigmoid
from ..core.params import Params
from ..models import single_query
from ..models.heads import HeadsReader, head_removal_effects
from ..models.reader import Reader
from ..models.single_query import forward
from ..tasks.marked_step import Sequences
from . import removal

HEAVY = 0.5  # a "heavy" step carries more than half the weight


INERT = 0.05  # ... and is "inert" if removing it moves p by less


def accuracy(params: Params, data: Sequences) -> np.ndarray:
    """Share of sequences whose logit has the label's sign: (R...,)."""
    _checked_sequences(data, "data")
    logit = forward(params, data.inputs).logit
    return np.mean((logit > 0) == (data.labels == 1), axis=-1)


def marker_weight(params: Params, data: Sequences) -> tuple[np.ndarray, np.ndarray]:
    """Mean weight on the marker step, and the share of sequences whose heaviest step is the
    marker.

    Returns two arrays of shape (R...,) (section 3).
    """
    _checked_sequences(data, "data")
    weights = forward(params, data.inputs).weights
    on_marker = np.take_along_axis(
        weights, np.broadcast_to(data.markers[:, None], weights.shape[:-1] + (1,)), -1
    )[..., 0]
    hits = weights.argmax(axis=-1) == data.markers
    return on_marker.mean(axis=-1), hits.mean(axis=-1)


def causality(params: Params, data: Sequences) -> dict[str, np.ndarray]:
    """The removal test of section 4, per run (each value has shape (R...,)).

    agreement: share of sequences whose heaviest step is also the step whose removal moves p
    most; effect_of_heaviest: mean |Δp| from removing the heaviest step; heavy_count: sequences
    whose heaviest weight exceeds 0.5; heavy_inert_count: of those, the ones where removing it
    moves p by < 0.05.
    """
    _checked_sequences(data, "data")
    weights = forward(params, data.inputs).weights
    effects = removal.effects(*single_query.removal_effects(params, data.inputs))
    heaviest = weights.argmax(axis=-1)
    effect_of_heaviest = np.take_along_axis(effects, heaviest[..., None], -1)[..., 0]
    heavy = weights.max(axis=-1) > HEAVY
    return {
        "agreement": removal.agreement(weights, effects),
        "effect_of_heaviest": effect_of_heaviest.mean(axis=-1),
        "heavy_count": heavy.sum(axis=-1),
        "heavy_inert_count": (heavy & (effect_of_heaviest < INERT)).sum(axis=-1),
    }


def _checked_sequences(data, name: str) -> Sequences:
    if not isinstance(data, Sequences):
        raise TypeError(
            f"{name} must be Part I's Sequences (lesson.split), got {type(data).__name__}"
        )
    return data


def measure_runs(params: Params, train_set: Sequences, heldout: Sequences) -> list[dict]:
    """The lesson's eight numbers for each run of a 1-d stack."""
    _checked_sequences(train_set, "train_set"), _checked_sequences(heldout, "heldout")
    weight, hit = marker_weight(params, heldout)
    cause = causality(params, heldout)
    columns = {
        "train_accuracy": accuracy(params, train_set),
        "heldout_accuracy": accuracy(params, heldout),
        "marker_weight": weight,
        "marker_hit_rate": hit,
        **cause,
    }
    counts = {"heavy_count", "heavy_inert_count"}
    return [
        {k: (int(v[r]) if k in counts else float(v[r])) for k, v in columns.items()}
        for r in range(len(weight))
    ]


# flavour)
def removal_effects(model, inputs) -> tuple[np.ndarray, np.ndarray]:
    """Part I's removal test for any flavour (section 4): ``(p (N,), p_without (N, T))``.

    ``model`` is a trained Reader, as :func:`lesson_run` returns it (a Trained) or as a
    (model, params) pair; p is its output on ``inputs`` (N, T, C) (the
    probability of label 1, or the value for a regression), and p_without[:, t] the output when
    step t is dropped and the other weights are renormalised.
    """
    if isinstance(model, (str, bytes)) or not isinstance(model, tuple) or len(model) < 2:
        raise TypeError(f"model must be a trained Reader, (model, params), got {model!r}")
    reader, p = model[0], model[1]  # a Trained, or a (model, params) pair
    if not isinstance(reader, Reader):
        raise TypeError(f"model must be a trained Reader, got {type(reader).__name__}")
    inputs = reader._check(inputs)

    def output(keep):
        out = reader.forward(p, inputs, keep).output
        return sigmoid(out) if reader.loss == "bce" else out

    return removal.removal_effects(output, inputs.shape[:2])


def measure(model: Reader, p, data: Dataset) -> dict[str, float]:
    """Part I's measures on one held-out set: accuracy, weight on the marker, hit rate,
    agreement."""
    if not isinstance(model, Reader):
        raise TypeError(f"model must be a trained Reader, got {type(model).__name__}")
    if not isinstance(data, Dataset):
        raise TypeError(f"data must be a Dataset, got {type(data).__name__}")
    fwd = model.forward(p, data.inputs)
    weights = fwd.attention.weights[:, 0]  # (N, T)
    marker = data.marked[:, 0]
    prob, without = removal_effects((model, p), data.inputs)
    effects = removal.effects(prob, without)
    heaviest = weights.argmax(axis=-1)
    return {
        "accuracy": float(np.mean((prob > 0.5) == (data.targets == 1))),
        "marker_weight": float(weights[np.arange(len(data)), marker].mean()),
        "marker_hit_rate": float(np.mean(heaviest == marker)),
        "agreement": float(removal.agreement(weights, effects)),
    }


def heads_measures(model: HeadsReader, p, data: Dataset) -> dict:
    """Accuracy, and per head: weight on the marker, hit rate, and agreement with the per-head
    removal test.

    The per-head values are arrays of shape (H,) (section 6).
    """
    if not isinstance(model, HeadsReader):
        raise TypeError(f"model must be a HeadsReader, got {type(model).__name__}")
    if not isinstance(data, Dataset):
        raise TypeError(f"data must be a Dataset, got {type(data).__name__}")
    logit, weights = model.forward(p, data.inputs)
    effects = removal.effects(*head_removal_effects(model, p, data.inputs))  # (N, H, T)
    marker = data.marked[:, 0]
    n = np.arange(len(data))
    return {
        "accuracy": float(np.mean((logit > 0) == (data.targets == 1))),
        "marker_weight": weights[n, :, marker].mean(axis=0),
        "marker_hit_rate": (weights.argmax(axis=2) == marker[:, None]).mean(axis=0),
        "agreement": removal.agreement(weights.swapaxes(0, 1), effects.swapaxes(0, 1)),
        "entropy": (-(weights * np.log(weights + 1e-300)).sum(axis=2)).mean(axis=0),
    }
