"""One training loop for every model of the book, and its remembered results.

A model is any object with ``init(seed) -> Params`` and ``loss_and_grads(params, data[,
targets]) -> (loss, grads)``; :func:`fit` runs full-batch steps of an optimiser on it.  A model
that draws random choices while it trains (Part V's hard attention) says so with ``draws =
True`` and then takes ``rng`` and ``baseline`` keywords: the loop gives it a RandomState of its
own and a running mean of its losses as the REINFORCE baseline.

:func:`trained` is :func:`fit` from a seed, remembered (see
:mod:`~attention_measured.machinery.cache`): a page that asks twice trains once.  Every
training of the book returns a :class:`Trained`: (model, params, curve).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from ..machinery.blas import one_thread
from ..machinery.cache import remembered
from . import checks
from .optim import Adam, GradientDescent

OPTIMISERS = {"adam": Adam, "gradient descent": GradientDescent}
MAX_EPOCHS = 100_000  # the most steps one training takes (the book's longest takes 4,000)


class Trained(NamedTuple):
    """What every training of the book returns: the model, its trained parameters and the loss
    curve, the loss before each step's update ((epochs,), or (epochs, R) for a stack of R)."""

    model: Any
    params: Any
    curve: np.ndarray


@one_thread
def fit(
    model,
    params,
    data,
    targets=None,
    epochs: int = 300,
    learning_rate: float = 0.05,
    seed: int = 0,
    progress: bool = False,
    optimiser: str = "adam",
) -> np.ndarray:
    """Train ``params`` in place for ``epochs`` full-batch steps; returns the loss curve.

    The curve has one entry per step, the loss before that step's update: (epochs,), or (epochs,
    R) for a model that trains R networks at once. ``targets`` is passed on when given; ``seed``
    seeds the draws of a model with ``draws = True``; ``progress`` shows a tqdm bar.
    """
    if not callable(getattr(model, "loss_and_grads", None)):
        raise TypeError(f"model must have a loss_and_grads method, got {type(model).__name__}")
    if isinstance(data, (str, bytes)):
        raise TypeError("data must be the model's training data, got a string")
    _check_targets(targets)
    epochs = checks.integer(epochs, "epochs", 1, MAX_EPOCHS)
    checks.real(learning_rate, "learning_rate", positive=True)
    seed = checks.seed(seed)
    progress = checks.flag(progress, "progress")
    step = OPTIMISERS[checks.choice(optimiser, "optimiser", OPTIMISERS)](params, learning_rate)
    draws = getattr(model, "draws", False)
    rng, baseline = np.random.RandomState(seed), None
    iterations = range(epochs)
    if progress:
        from tqdm.auto import tqdm

        iterations = tqdm(iterations, desc="training", unit="step", leave=False)
    curve = None
    with contextlib.ExitStack() as trust:
        for t in iterations:
            if t == 1:  # the first step checked every argument on its way; the rest are trusted
                trust.enter_context(checks.trusted())
            loss, grads, baseline = _step(model, params, data, targets, draws, rng, baseline)
            if curve is None:
                curve = np.empty((epochs,) + np.shape(loss))
            curve[t] = loss
            if not np.isfinite(loss).all():
                raise ValueError(
                    f"the loss became {loss} at step {t}: learning_rate {learning_rate} is too "
                    "large for this model, or its params hold NaN"
                )
            step.step(grads)
    return curve


def _check_targets(targets) -> None:
    """Refuse targets that no model trains on: strings, booleans, NaN or infinity."""
    if targets is None or isinstance(targets, Mapping):
        return
    if isinstance(targets, (str, bytes)):
        raise TypeError("targets must be numbers, got a string")
    try:
        kind = np.asarray(targets).dtype.kind
    except ValueError:  # ragged: a model's own structure, left to the model
        return
    if kind in "bUS":
        raise TypeError(f"targets must be numbers, got {np.asarray(targets).dtype} values")
    if kind == "f" and not np.isfinite(targets).all():
        raise ValueError("targets must be finite numbers (no NaN or infinity)")


def _step(model, params, data, targets, draws, rng, baseline):
    """One loss and its gradients, with the REINFORCE baseline updated for a drawing model."""
    if draws:
        loss, grads = model.loss_and_grads(params, data, rng=rng, baseline=baseline)
        return loss, grads, loss if baseline is None else 0.9 * baseline + 0.1 * loss
    if targets is None:
        return (*model.loss_and_grads(params, data), baseline)
    return (*model.loss_and_grads(params, data, targets), baseline)


@remembered
def trained(
    model,
    seed: int,
    data,
    targets,
    epochs: int,
    learning_rate: float,
    optimiser="adam",
    draws_seed: int = 0,
) -> Trained:
    """``model``'s parameters drawn from ``seed`` and trained by :func:`fit`: a
    :class:`Trained`.  ``draws_seed`` seeds the draws of a model with ``draws = True``: by
    default the same for every ``seed``, so that Part III's translators see the same batches.

    Remembered: the same call returns a fresh copy of the same result.
    """
    if not callable(getattr(model, "init", None)):
        raise TypeError(f"model must have an init method, got {type(model).__name__}")
    params = model.init(checks.seed(seed))
    curve = fit(
        model,
        params,
        data,
        targets,
        epochs,
        learning_rate,
        seed=checks.seed(draws_seed, "draws_seed"),
        optimiser=optimiser,
    )
    return Trained(model, params, curve)
