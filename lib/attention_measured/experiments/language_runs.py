"""Part VII's trainings: small language models on the copying task, with what their heads do
recorded as they train (induction heads).

:func:`train` trains a :class:`~attention_measured.models.language_model.LanguageModel` by Adam
on fresh batches of :func:`~attention_measured.tasks.repeats.repeats` at every step, and every
:data:`EVERY` steps records, on one fixed set of held-out sequences, the loss on the first half
and on the repeated stretch and each head's previous-token, duplicate-token and induction
scores (:mod:`~attention_measured.measures.induction`).  The run is remembered: a page that
asks again is served the same result.
"""

from __future__ import annotations

import contextlib
from typing import NamedTuple

import numpy as np

from ..core import checks
from ..core.losses import softmax_cross_entropy
from ..core.optim import Adam
from ..core.training import Trained
from ..machinery.blas import one_thread
from ..machinery.cache import remembered
from ..measures import induction
from ..models.language_model import LanguageModel
from ..tasks.repeats import Repeats, repeats, with_start

LENGTH = 32  # tokens per training sequence
CONTEXT = 128  # the longest sequence a model is tested on (positions, beyond the training length)
VOCABULARY = 32
BATCH = 32  # sequences per step, drawn fresh
STEPS = 1500
LEARNING_RATE = 0.01
EVERY = 50  # steps between two records of the heads
HELD_OUT = 128  # held-out sequences the records are measured on
HELD_OUT_SEED = 10**6  # their seed, far from every training seed
START = VOCABULARY  # the beginning-of-sequence token's id, one past the task's tokens (sinks)


class History(NamedTuple):
    """What :func:`train` records every :data:`EVERY` steps: ``steps`` (R,), the losses
    ``first_half`` and ``repeated`` (R,), and per layer and head the scores ``previous``,
    ``duplicate`` and ``induction`` and the weight ``on_first`` on the first position from the
    queries whose next token has no earlier source (R, layers, H)."""

    steps: np.ndarray
    first_half: np.ndarray
    repeated: np.ndarray
    previous: np.ndarray
    duplicate: np.ndarray
    induction: np.ndarray
    on_first: np.ndarray


def held_out(length: int = LENGTH, start: bool = False):
    """The fixed held-out sequences every record is measured on (Part VII); with ``start``,
    ``length`` − 1 tokens after the beginning-of-sequence token :data:`START`."""
    length = checks.integer(length, "length", 5 if start else 4)
    if not checks.flag(start, "start"):
        return repeats(HELD_OUT, length, VOCABULARY, HELD_OUT_SEED)
    return with_start(repeats(HELD_OUT, length - 1, VOCABULARY, HELD_OUT_SEED), START)


def measure(model: LanguageModel, params, data=None, ablate=None) -> dict:
    """The losses and scores :func:`train` records, for ``params`` on ``data`` (default
    :func:`held_out`, with the start token for a model that knows it): {"first_half",
    "repeated": mean losses; "previous", "duplicate", "induction", "on_first": (layers, H)};
    ``ablate``: heads removed, as in the model's forward."""
    if not isinstance(model, LanguageModel):
        raise TypeError(f"model must be a LanguageModel, got {type(model).__name__}")
    data = held_out(start=model.vocabulary > VOCABULARY) if data is None else data
    out = model.forward(params, data.tokens, ablate=ablate)  # one pass gives both
    # (N, L − 1), position t predicts t + 1: model.losses's numbers, from the same logits
    losses = softmax_cross_entropy(out.output[:, :-1], data.tokens[:, 1:])[0]
    return record(losses, out.parts["weights"], data)


def record(losses, weights, data: Repeats) -> dict:
    """:func:`measure`'s record from a model's ``losses`` (N, L − 1) on ``data`` and its
    ``weights``, one (N, H, L, L) array a layer, however they were computed (a peer in torch
    records through it too, ``bench/bench_torch.py``)."""
    if not isinstance(data, Repeats):
        raise TypeError(f"data must be copying sequences (Repeats), got {type(data).__name__}")
    n, length = data.tokens.shape
    losses = checks.array(losses, "losses", shape=(n, length - 1))
    weights = [checks.array(w, "weights", ndim=4) for w in weights]
    if not weights or any(w.shape[:1] + w.shape[2:] != (n, length, length) for w in weights):
        raise ValueError(f"weights must be one (N, H, L, L) array a layer, N, L = {n}, {length}")
    half = length // 2
    return {
        "first_half": float(losses[:, : half - 1].mean()),
        "repeated": float(losses[data.repeated[:, :-1]].mean()),
        "previous": np.array([induction.previous_token_score(w) for w in weights]),
        "duplicate": np.array([induction.duplicate_token_score(w, data.source) for w in weights]),
        "induction": np.array([induction.induction_score(w, data.source) for w in weights]),
        "on_first": np.array(
            [induction.first_position_weight(w, data.source < 0) for w in weights]
        ),
    }


@remembered(ignore=("progress",))
@one_thread
def train(
    seed: int = 0,
    positions: str = "rotary",
    layers: int = 2,
    mlp: bool = False,
    norm: bool = False,
    start: bool = False,
    null_key: bool = False,
    heads: int = 2,
    kv_heads=None,
    window=None,
    steps: int = STEPS,
    progress: bool = False,
) -> tuple[Trained, History]:
    """A model of ``heads`` heads in each of ``layers`` layers, with ``positions`` (and ``mlp``,
    ``norm``), trained from ``seed`` for ``steps`` Adam steps on fresh copying sequences of
    :data:`LENGTH` tokens:
    (Trained, History).  Its context is :data:`CONTEXT`, so that it can be tested on longer
    sequences (:func:`carried`); with learned positions, the vectors past :data:`LENGTH` keep
    their initial draws, since no training sequence reaches them.  With ``start``, every
    sequence is :data:`LENGTH` − 1 tokens after the beginning-of-sequence token :data:`START`
    (which the vocabulary gains); with ``null_key``, each head may also attend to nothing
    (the model's null key), the remedy for attention sinks.  ``heads`` query heads share
    ``kv_heads`` blocks of keys and values (all their own by default), and ``window`` limits
    how far back a query reads (the costs of decoding).  The model's initial weights come
    from ``seed``, its batches from seed + 1.  ``progress`` shows a tqdm bar."""
    seed = checks.seed(seed)
    steps = checks.integer(steps, "steps", 1, 100_000)
    start = checks.flag(start, "start")
    model = LanguageModel(
        VOCABULARY + start,
        CONTEXT,
        32,
        heads,
        layers,
        positions,
        mlp=mlp,
        norm=norm,
        null_key=null_key,
        kv_heads=kv_heads,
        window=window,
    )
    params = model.init(seed)
    optimiser = Adam(params, LEARNING_RATE)
    draws = np.random.RandomState(seed + 1)
    curve, records = np.empty(steps), []
    iterations = range(steps)
    if checks.flag(progress, "progress"):
        from tqdm.auto import tqdm

        iterations = tqdm(iterations, desc="training", unit="step", leave=False)
    # a loop of its own rather than core.training.fit, which trains on one fixed batch: this
    # one draws a fresh batch every step and records the heads every EVERY steps
    with contextlib.ExitStack() as trust:
        for step in iterations:
            if step == 1:  # the first step checked every argument on its way; the rest trusted
                trust.enter_context(checks.trusted())
            if step % EVERY == 0:
                records.append((step, measure(model, params)))
            batch = repeats(BATCH, LENGTH - start, VOCABULARY, draws.randint(2**31))
            batch = (with_start(batch, START) if start else batch).tokens
            curve[step], grads = model.loss_and_grads(params, batch)
            if not np.isfinite(curve[step]):
                raise ValueError(f"the loss became {curve[step]} at step {step}")
            optimiser.step(grads)
    records.append((steps, measure(model, params)))
    history = History(
        np.array([s for s, _ in records]),
        *(np.array([r[k] for _, r in records]) for k in ("first_half", "repeated")),
        *(
            np.array([r[k] for _, r in records])
            for k in ("previous", "duplicate", "induction", "on_first")
        ),
    )
    return Trained(model, params, curve), history


def carried(
    run: Trained, lengths=(LENGTH, 2 * LENGTH, 4 * LENGTH), n: int = HELD_OUT, repeat=None
) -> np.ndarray:
    """How far a trained model's copying carries (Part VII, positions): for each of ``lengths``
    (at most the model's context), the share of the repeated stretch's tokens it predicts right
    (the most likely token is the next one), on ``n`` held-out copying sequences of that length:
    (len(lengths),).  Their repeat is drawn as in training, a quarter to a half of the length,
    unless ``repeat`` = (shortest, longest) fixes its range, such as the training's own (8, 16)
    at every length, which asks for the same look-back distances at later positions.  A model
    trained with the start token reads each sequence after it, as in training."""
    if not isinstance(run, Trained) or not isinstance(run.model, LanguageModel):
        raise TypeError(f"run must be a trained LanguageModel (from train), got {run!r}")
    if isinstance(lengths, (str, bytes)) or not hasattr(lengths, "__iter__"):
        raise TypeError(f"lengths must be a list of sequence lengths, got {lengths!r}")
    lengths = [checks.integer(L, "lengths", 4, run.model.context) for L in lengths]
    n = checks.integer(n, "n", 1)
    if repeat is not None and (
        isinstance(repeat, (str, bytes)) or not hasattr(repeat, "__len__") or len(repeat) != 2
    ):
        raise TypeError(f"repeat must be (shortest, longest) or None, got {repeat!r}")
    shortest, longest = (None, None) if repeat is None else repeat
    start = run.model.vocabulary > VOCABULARY
    out = []
    for length in lengths:
        # at LENGTH, with repeat None and n HELD_OUT, these are held_out()'s sequences
        data = repeats(n, length - start, VOCABULARY, HELD_OUT_SEED, shortest, longest)
        data = with_start(data, START) if start else data
        logits = run.model.forward(run.params, data.tokens).output
        right = logits[:, :-1].argmax(axis=-1) == data.tokens[:, 1:]
        out.append(float(right[data.repeated[:, :-1]].mean()))
    return np.array(out)
