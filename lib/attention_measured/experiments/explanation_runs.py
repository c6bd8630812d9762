"""Part VI, the closing table: every model of the book through every measure, over its seeds.

:func:`card` runs :func:`~.explanations.scorecard` on one model and seed.  The whole sweep
(:func:`sweep`, every model of :data:`~.registry.MODELS` on each of its seeds, 166 cards and 23
yardsticks) takes about five minutes on two cores, most of it the translators' adversarial search
and Integrated Gradients, so its result ships with the package as
``explanation_runs.json``: :func:`stored` loads it, :func:`write` makes it again, a test
recomputes some of its cards, and ``make bench`` times a slice.  :func:`spread` and
:func:`table` read it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..core import checks
from ..machinery.blas import one_thread
from ..measures import explanations
from . import adversary_runs, registry

FILE = Path(__file__).with_name("explanation_runs.json")


ADVERSARIAL_TRAINING = (
    "Wiegreffe and Pinter's adversary trains the model again; the book trains it for the models "
    "of Part I's task (Part I's network and the flavours of Part V's 'All flavours on one task')"
)


@one_thread
def card(model: str, seed: int) -> dict:
    """Every measure of ``model`` (a key of registry.MODELS) trained from ``seed``:
    {"values": {measure: float}, "cannot": {measure: reason}}, and for the models of
    :data:`adversary_runs.MODELS` "adversarial training": {λ: its report} as well, with
    :func:`adversary_runs.reached` among the values."""
    made = explanations.scorecard(registry.subjects(model, seed), seed=seed)
    if model not in adversary_runs.MODELS:
        made["cannot"]["adversarial training"] = ADVERSARIAL_TRAINING
        return made
    made["values"]["adversarial training"] = adversary_runs.reached(model, seed)
    made["adversarial training"] = {
        str(strength): report for strength, report in adversary_runs.sweep(model, seed).items()
    }
    return made


@one_thread
def between_seeds(model: str) -> float:
    """Wiegreffe & Pinter's yardstick: the median Jensen–Shannon divergence between the weights
    of two seeds of ``model`` on the same examples, over every pair of its first three seeds."""
    seeds = registry.MODELS[checks.choice(model, "model", registry.MODELS)].seeds[:3]
    weights = [[s.weights for s in registry.subjects(model, seed)] for seed in seeds]
    divergences = [
        explanations.jensen_shannon(a, b)
        for i, first in enumerate(weights)
        for second in weights[i + 1 :]
        for a, b in zip(first, second)
    ]
    return float(np.median(np.concatenate(divergences)))


def _card(pair):
    model, seed = pair
    return pair, (between_seeds(model) if seed is None else card(model, seed))


def sweep(models=None, processes: int = 2, progress: bool = True) -> dict:
    """Every card of ``models`` (default: all), on every seed, in ``processes`` processes:
    {model: {"family": str, "cards": {seed: card}, "between seeds": float}} (see
    :func:`between_seeds`).  ``progress`` shows a tqdm bar."""
    from multiprocessing import get_context

    from tqdm.auto import tqdm

    models = list(registry.MODELS if models is None else models)
    for model in models:
        checks.choice(model, "model", registry.MODELS)
    # the costliest models (the registry's last: translators, Transformers) go first, so that
    # neither process is left with a long card while the other waits
    pairs = [(m, seed) for m in reversed(models) for seed in (None, *registry.MODELS[m].seeds)]
    result = {m: {"family": registry.MODELS[m].family, "cards": {}} for m in models}
    processes = checks.integer(processes, "processes", 1)
    with get_context("spawn").Pool(processes) as pool:
        done = pool.imap_unordered(_card, pairs)
        for (model, seed), made in tqdm(done, total=len(pairs), disable=not progress):
            if seed is None:
                result[model]["between seeds"] = made
            else:
                result[model]["cards"][seed] = made
    for entry in result.values():  # seeds in order, whatever order they finished in
        entry["cards"] = dict(sorted(entry["cards"].items()))
    return result


def write(path=FILE, processes: int = 2) -> Path:
    """Run :func:`sweep` on every model and store it as JSON at ``path``.  The folder is checked
    before the sweep starts, not after."""
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"path's folder {path.parent} does not exist: make it first")
    processes = checks.integer(processes, "processes", 1)
    path.write_text(json.dumps(sweep(processes=processes), indent=1, sort_keys=False) + "\n")
    return path


def stored(path=FILE) -> dict:
    """The stored sweep, as :func:`sweep` returns it (seeds as ints)."""
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a file's path, got {type(path).__name__}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no stored verdict at path {path}: run explanation_runs.write() to make it"
        )
    raw = json.loads(path.read_text())
    for entry in raw.values():
        entry["cards"] = {int(seed): c for seed, c in entry["cards"].items()}
    return raw


def _check_result(result) -> None:
    """Refuse anything but a sweep's result: {model: {"cards": {seed: card}}}, as
    :func:`stored` reads it."""
    if not isinstance(result, dict) or not result:
        raise TypeError(
            f"result must be the sweep's result (explanation_runs.stored()), got {result!r}"
        )
    if not all(isinstance(v, dict) and isinstance(v.get("cards"), dict) for v in result.values()):
        raise ValueError("result must map each model to its {'cards': {seed: card}}")


def spread(result: dict, model: str, measure: str) -> tuple[float, float, float] | str:
    """(median, lowest, highest) of ``measure`` over ``model``'s seeds in ``result``, or the
    model's reason for not having it."""
    _check_result(result)
    if not isinstance(measure, str):
        raise TypeError(f"measure must be a measure's name, got {measure!r}")
    cards = result[checks.choice(model, "model", result)]["cards"].values()
    values = [c["values"][measure] for c in cards if measure in c["values"]]
    if not values:
        reasons = [c["cannot"].get(measure) for c in cards]
        if reasons and reasons[0]:
            return reasons[0]
        raise ValueError(f"no measure {measure!r}")
    return float(np.median(values)), float(np.min(values)), float(np.max(values))


FAR = 0.4  # a trained adversary whose weights moved beyond this median JSD moved far


def moved_far(result: dict, model: str) -> int:
    """How many of ``model``'s seeds in ``result`` have a trained adversary (Wiegreffe &
    Pinter's, ``"adversarial training"``) whose weights moved beyond :data:`FAR` while keeping
    the answers (Part VI, "A hundred seeds and ten flavours"); 0 for a model without one."""
    _check_result(result)
    cards = result[checks.choice(model, "model", result)]["cards"].values()
    return int(sum(c["values"].get("adversarial training", 0.0) > FAR for c in cards))


def table(result: dict, measures, models=None) -> tuple[list[str], list[list]]:
    """(models, rows): one row per model, one (median, low, high) or reason per measure."""
    _check_result(result)
    for name, names in (("measures", measures), ("models", models)):
        if names is None and name == "models":
            continue
        if isinstance(names, str) or not isinstance(names, (list, tuple)) or not names:
            raise TypeError(f"{name} must be a non-empty list of names, got {names!r}")
    models = list(result if models is None else models)
    return models, [[spread(result, m, measure) for measure in measures] for m in models]
