"""Every flavour of attention trained on the book's small tasks, and what each page measures
(Part V, sections 1 to 4): readers on the marked step (:func:`reader_run`,
:func:`side_by_side`), on the addition problem (:func:`addition_scores`), the hierarchical reader
on documents (:func:`document_measures`) and the aligners on reversal (:func:`alignment`)."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.data import Dataset
from ..core.training import Trained, trained
from ..machinery.cache import remembered
from ..measures import removal
from ..measures.markers import measure
from ..models.aligner import Aligner
from ..models.hierarchical import Hierarchical
from ..models.reader import Reader
from ..tasks.addition import ADDITION_TOLERANCE
from ..tasks.documents import Documents
from ..tasks.marked_step import lesson_data

EPOCHS = 400  # full-batch Adam, for every reader (sections 1 and 4)
LEARNING_RATE = 0.05
SIDE_BY_SIDE = (
    "mean pooling",
    "feed-forward",
    "feed-forward, bias per position",
    "context vector",
    "additive",
    "dot",
    "general",
    "concat",
    "location",
    "local-p (general)",
)


@remembered
def train_reader(
    flavour,
    data: Dataset,
    seed: int = 0,
    epochs: int = EPOCHS,
    learning_rate: float = LEARNING_RATE,
    **model_options,
):
    """Build a :class:`Reader`, train it from ``seed`` on ``data``: a Trained (model, params,
    loss curve)."""
    if not isinstance(data, Dataset):
        raise TypeError(f"data must be a Dataset (marked_step.lesson_data), got {data!r}")
    model = Reader(
        flavour, steps=data.inputs.shape[1], channels=data.inputs.shape[2], **model_options
    )
    return trained(model, seed, data.inputs, data.targets, epochs, learning_rate)


def reader_run(flavour: str, seed: int) -> Trained:
    """A reader of one flavour trained on the marked step's 360 training sequences (Part I's
    task) from ``seed``: (model, params, curve), remembered.
    """
    checks.choice(flavour, "flavour", SIDE_BY_SIDE)
    return train_reader(flavour, lesson_data()[0], checks.seed(seed))


@remembered
def reader_measures(flavour: str, seed: int) -> dict[str, float]:
    """Part I's measures of :func:`reader_run` on the 180 held-out sequences, remembered."""
    model, params, _ = reader_run(flavour, seed)
    return measure(model, params, lesson_data()[1])


def side_by_side(flavours=SIDE_BY_SIDE, seeds=(0, 1)) -> dict[str, list[dict]]:
    """Part I's measures on the 180 held-out sequences: {flavour: [measures of each seed]}."""
    seeds = checks.seeds(seeds)
    if isinstance(flavours, str) or not all(isinstance(f, str) for f in flavours):
        raise TypeError(f"flavours must be a sequence of flavour names, got {flavours!r}")
    return {name: [reader_measures(name, seed) for seed in seeds] for name in flavours}


def addition_scores(model: Reader, p, data: Dataset) -> dict[str, float]:
    """The addition problem's measures (section 1): mean squared error, share solved, weight on
    the two marked steps.

    Also the correlation, over the sequences, between the weight on the two marked steps and x1
    + x2: how much the weights themselves carry the sum (NaN when the weights never vary, as
    with mean pooling).
    """
    error = model.predict(p, data.inputs) - data.targets
    weights = model.forward(p, data.inputs).weights
    marked = np.take_along_axis(weights, data.marked, axis=1).sum(axis=1)
    total = 4 * (data.targets - 0.5)
    spread = np.std(marked)
    return {
        "mse": float(np.mean(error**2)),
        "solved": float(np.mean(np.abs(error) < ADDITION_TOLERANCE)),
        "marked_weight": float(marked.mean()),
        "weight_sum_correlation": float(np.corrcoef(marked, total)[0, 1])
        if spread > 0
        else float("nan"),
    }


def document_measures(model: Hierarchical, p, docs: Documents) -> dict[str, float]:
    """Section 2's measures: accuracy, weight on the trigger word within its sentence (in all
    documents, and separately where it is "good" and where it is "bad"), weight on the
    trigger's sentence, and sentence-level agreement (heaviest sentence = the one whose
    removal moves p most)."""
    out = model.forward(p, docs.tokens)
    n, s = np.arange(len(docs)), docs.trigger[:, 0]
    sentence_weights = out.weights  # (N, S)
    prob, without = removal.removal_effects(model, p, docs.tokens)  # dropping whole sentences
    effects = removal.effects(prob, without)
    on_trigger = out.parts["word weights"][n, s, docs.trigger[:, 1]]
    return {
        "accuracy": float(np.mean((prob > 0.5) == (docs.labels == 1))),
        "trigger_word_weight": float(on_trigger.mean()),
        "good_word_weight": float(on_trigger[docs.labels == 1].mean()),
        "bad_word_weight": float(on_trigger[docs.labels == 0].mean()),
        "trigger_sentence_weight": float(sentence_weights[n, s].mean()),
        "agreement": float(np.mean(sentence_weights.argmax(1) == effects.argmax(1))),
    }


ALIGNMENT_FLAVOURS = (
    "additive",
    "dot",
    "general",
    "concat",
    "location",
    "local-m (general)",
    "local-p (general)",
)


def alignment(model: Aligner, p, tokens) -> dict:
    """Section 3's measures on source sequences (N, L): token accuracy, the mean weight on the
    anti-diagonal (output i reading source step L-1-i, where reversal needs it) and the mean
    weight map (L, L), rows output positions, columns source steps."""
    tokens = model._check(tokens)
    weights = model.forward(p, tokens).weights.mean(axis=0)
    return {
        "accuracy": model.accuracy(p, tokens),
        "anti_diagonal": float(np.diag(weights[:, ::-1]).mean()),
        "map": weights,
    }
