"""Part IV's trainings of the cloze head and what they show (Part IV, sections 3 and 4).

:func:`train` is the demo's training (full-batch Adam, 4000 iterations), remembered;
:func:`write_csvs` writes the demo's two CSV files.  :func:`heldout_experiment` trains on folds
and names tokens of sentences never seen.  The end of a long run is chaotic, so the pages state
bounds, :data:`RECALL_FLOOR` and :data:`LOSS_CEILING`, with a margin over many nudged runs on
two kinds of processor: :func:`bound_runs` makes the runs, ``tools/bounds.py`` stores them with
the package as ``cloze_bounds.json``, and :func:`stored_bounds` reads them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ..core import checks
from ..core.training import Trained, fit
from ..machinery.cache import remembered
from ..measures.cloze_recall import (
    cooccurrence_guesses,
    most_frequent_token,
    positional_guesses,
    swapped_correct,
    top1_accuracy,
)
from ..models.cloze_head import QUERIES, Head, attention_weights, check_query
from ..tasks.cloze import DISPLAY, SENTENCES, TOKEN_ID, check_sentences, encode, make_batch

LEARNING_RATE = 0.02


EPOCHS = 4000

MAX_NUDGE = 1e-6  # a nudge moves the last digits of one weight (section 4 uses 1e-12)


CSV_EVERY = 20  # the loss CSV keeps iteration 1 and every 20th


@remembered(ignore=("progress",))
def train(
    seed: int = 0,
    epochs: int = EPOCHS,
    query: str = "token",
    sentences=None,
    progress: bool = False,
    nudge: float = 0.0,
) -> Trained:
    """Full-batch Adam on the cloze loss, every sentence in every iteration (section 3).

    Returns a :class:`~attention_measured.core.training.Trained`: the :class:`Head` (which knows its
    query and the sentences it was trained on), the trained Params, and the loss curve (epochs,),
    the mean loss per predicted token at each iteration before its update.

    ``sentences=None`` trains on all 16 :data:`SENTENCES`; otherwise a list of token lists (or
    strings) from the vocabulary, e.g. a training fold.  Each iteration sums the gradients of
    all sentences' summed losses and divides by the number of sentences before the Adam step, as
    the demo does. ``progress=True`` shows a tqdm bar.  ``nudge``: a number no larger than
    :data:`MAX_NUDGE` in size, added to the single initial weight E[0, 0] before the first step;
    section 4 "What the memory remembers" sets it to +-1e-12 to show that the end of a long run
    is chaotic.  The default 0.0 leaves every weight exactly as drawn.
    """
    seed, query = checks.seed(seed), check_query(query)
    nudge = checks.real(nudge, "nudge", -MAX_NUDGE, MAX_NUDGE)
    token_lists = [list(s) for s in SENTENCES] if sentences is None else check_sentences(sentences)
    batch = make_batch(token_lists)
    head = Head(query, token_lists)
    params = head.init(seed)
    if nudge:
        params.E[0, 0] += nudge
    curve = fit(head, params, batch, None, epochs, LEARNING_RATE, progress=progress)
    return Trained(head, params, curve)


def loss_csv_rows(loss_curve) -> list[tuple[int, float]]:
    """(iteration, loss) for iteration 1 and every 20th iteration, counted from 1 (section 3)."""
    curve = checks.array(loss_curve, "loss_curve", ndim=1)
    return [
        (i, float(curve[i - 1])) for i in range(1, len(curve) + 1) if i == 1 or i % CSV_EVERY == 0
    ]


def write_csvs(result: Trained, directory=".") -> tuple[Path, Path]:
    """Write attention_loss.csv (iter,loss) and attention_weights.csv (q,k,w) (section 3).

    The weights are the :data:`DISPLAY` sentence's matrix in long form, one row per (query, key)
    cell.  Every number is written as %.6f, headers without a comment sign, as the demo writes
    them.  Returns the two paths.
    """
    if not (isinstance(result, Trained) and isinstance(result.model, Head)):
        raise TypeError(f"result must be a trained head (from train), got {type(result).__name__}")
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"directory must be a folder's path, got {directory!r}")
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    weights = attention_weights(result, DISPLAY)
    cells = [
        (q, k, weights[q, k]) for q in range(weights.shape[0]) for k in range(weights.shape[1])
    ]
    paths = folder / "attention_loss.csv", folder / "attention_weights.csv"
    for path, header, rows in zip(
        paths, ("iter,loss", "q,k,w"), (loss_csv_rows(result.curve), cells)
    ):
        np.savetxt(
            path, np.array(rows, dtype=float), delimiter=",", header=header, comments="", fmt="%.6f"
        )
    return paths


# Bounds for the end of a chaotic run, with a margin over the worst of the stored runs
# (recall_bounds.json): the token and position queries from seed 0, each nudged by 0 to 12e-12
# (train(nudge=...)), on two kinds of processor arithmetic.
BOUNDS_FILE = Path(__file__).with_name("cloze_bounds.json")


BOUND_QUERIES = ("token", "position")


BOUND_NUDGES = tuple(k * 0.5e-12 for k in range(25))


RECALL_FLOOR = 0.5  # every such run recalls more than half of the training tokens ...


LOSS_CEILING = 1  # ... and ends with a loss per token below 1 (it starts at 4.58)


ALWAYS_TRAINED = 0  # the DISPLAY sentence is in every training fold


# Held-out folds: sentence i (1..15) goes to fold (i - 1) % 5, so each fold
# holds three sentences from the start, middle and end of the corpus.
FOLDS: tuple[tuple[int, ...], ...] = tuple(tuple(range(1 + f, len(SENTENCES), 5)) for f in range(5))


METHODS = (
    "token",
    "position",
    "mask",
    "token_swapped",
    "most_frequent",
    "positional",
    "cooccurrence",
)


def _check_queries(queries) -> tuple[str, ...]:
    if isinstance(queries, str) or not hasattr(queries, "__iter__"):
        raise ValueError(f"queries must be a tuple of query names, got {queries!r}")
    chosen = tuple(check_query(q) for q in queries)
    if not chosen or len(set(chosen)) != len(chosen):
        raise ValueError(f"queries must name at least one query, each once, got {queries!r}")
    return chosen


def heldout_experiment(
    seed: int = 0,
    epochs: int = EPOCHS,
    queries=("token", "position", "mask"),
    progress: bool = False,
    nudge: float = 0.0,
) -> dict:
    """Top-1 accuracy on sentences the head never saw, fold by fold (section 4).

    Section 4, "What the memory remembers", asks whether the head learned associations or a
    lookup table.  For each fold of :data:`FOLDS` (5 folds of 3 sentence indices; sentence
    :data:`ALWAYS_TRAINED` = 0, the DISPLAY sentence, is never held out) and each of
    ``queries``, a head is trained with :func:`train` (this ``seed`` and ``epochs``) on the
    other 13 sentences and scored at every position of the fold's 3 sentences.  The same
    positions are scored for:

    - "token_swapped" (only when "token" is among ``queries``): the trained
      token head with each query built from the next token of the sentence
      (:func:`swapped_top1`, swap="next");
    - "most_frequent": always guess :func:`most_frequent_token` of the 13
      training sentences;
    - "positional": :func:`positional_guesses`, the training token most often
      found at each position;
    - "cooccurrence": :func:`cooccurrence_guesses` from the 13 sentences.

    Returns a dict with "folds" (5 tuples of 3 indices), "positions" (5,) int: held-out
    positions per fold; "per_fold": {method: (5,) accuracy}, methods from :data:`METHODS`;
    "mean": {method: float}, the accuracy over all held-out positions pooled (each of the 15
    held-out sentences is held out once, so this is the score on the whole corpus seen as unseen
    text); "unseen_share" (5,) and "unseen_share_mean": the share of held-out positions whose
    true token occurs nowhere in that fold's training sentences.  Such a token's embedding was
    never trained and its read-out column was only ever pushed down, so nothing learned can name
    it, though the token query still reads its (untrained) embedding. Also "seed", "epochs",
    "queries".  ``progress=True`` shows one tqdm bar over the len(FOLDS) * len(queries)
    trainings (15 by default, about 30 s). ``nudge`` is passed to every :func:`train`, to see
    how much of a result survives a perturbation of the size of a rounding difference.
    """
    seed, epochs = checks.seed(seed), checks.integer(epochs, "epochs", 1)
    queries, progress = _check_queries(queries), checks.flag(progress, "progress")
    nudge = checks.real(nudge, "nudge", -MAX_NUDGE, MAX_NUDGE)
    methods = [
        m
        for m in METHODS
        if m in queries
        or m in ("most_frequent", "positional", "cooccurrence")
        or (m == "token_swapped" and "token" in queries)
    ]
    hits = {m: np.zeros(len(FOLDS), dtype=np.int64) for m in methods}
    positions = np.zeros(len(FOLDS), dtype=np.int64)
    unseen = np.zeros(len(FOLDS), dtype=np.int64)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(FOLDS) * len(queries), desc="held-out folds", unit="training")
    for f, fold in enumerate(FOLDS):
        training = [SENTENCES[i] for i in range(len(SENTENCES)) if i not in fold]
        heldout = [SENTENCES[i] for i in fold]
        batch = make_batch(heldout)
        positions[f] = batch.n_predicted
        seen = np.unique(np.concatenate([encode(s) for s in training]))
        unseen[f] = np.count_nonzero(~np.isin(batch.targets, seen))
        frequent = TOKEN_ID[most_frequent_token(training)]
        hits["most_frequent"][f] = np.count_nonzero(batch.targets == frequent)
        guesses = np.concatenate([encode(cooccurrence_guesses(training, s)) for s in heldout])
        hits["cooccurrence"][f] = np.count_nonzero(guesses == batch.targets)
        by_position = np.concatenate(
            [encode(positional_guesses(training, len(s))) for s in heldout]
        )
        hits["positional"][f] = np.count_nonzero(by_position == batch.targets)
        for query in queries:
            params = train(seed, epochs, query, sentences=training, nudge=nudge).params
            hits[query][f] = np.count_nonzero(
                Head().forward(params, batch).parts["probs"].argmax(axis=-1) == batch.targets
            )
            if query == "token":
                hits["token_swapped"][f] = np.count_nonzero(swapped_correct(params, batch, "next"))
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return {
        "seed": seed,
        "epochs": epochs,
        "queries": queries,
        "folds": FOLDS,
        "positions": positions,
        "per_fold": {m: hits[m] / positions for m in methods},
        "mean": {m: float(hits[m].sum() / positions.sum()) for m in methods},
        "unseen_share": unseen / positions,
        "unseen_share_mean": float(unseen.sum() / positions.sum()),
    }


def bound_runs(queries=BOUND_QUERIES, nudges=BOUND_NUDGES, progress: bool = False) -> list[dict]:
    """Section 4's chaotic runs, on this machine's arithmetic: for each query of ``queries`` and
    each nudge of ``nudges`` (added to one initial weight, :func:`train`), the head trained
    from seed 0, as {"query", "nudge", "final loss", "recall"}: its last loss per token and the
    share of training tokens it recalls (:func:`top1_accuracy`).  ``progress``: a tqdm bar.
    """
    for name, values in (("queries", queries), ("nudges", nudges)):
        if isinstance(values, str) or not isinstance(values, (list, tuple)):
            raise TypeError(f"{name} must be a list, got {values!r}")
        if not values:
            raise ValueError(f"{name} must hold at least one entry: bound_runs runs each pair")
    queries = [checks.choice(q, "queries", QUERIES) for q in queries]
    nudges = [checks.real(n, "nudges", -MAX_NUDGE, MAX_NUDGE) for n in nudges]
    progress = checks.flag(progress, "progress")
    from tqdm.auto import tqdm

    runs = []
    pairs = [(q, n) for q in queries for n in nudges]
    for query, nudge in tqdm(pairs, desc="nudged runs", disable=not progress):
        result = train(seed=0, query=query, nudge=nudge)
        runs.append(
            {
                "query": query,
                "nudge": nudge,
                "final loss": float(result.curve[-1]),
                "recall": top1_accuracy(result),
            }
        )
    return runs


def stored_bounds() -> dict:
    """The stored runs behind :data:`LOSS_CEILING` and :data:`RECALL_FLOOR` (section 4):
    {"arithmetic": {name: how that processor's arithmetic was set}, "runs": {name: the
    :func:`bound_runs` made with it}, "runs made": how many, "worst final loss": the highest
    final loss of all, "worst recall": the lowest recall of all}.
    """
    stored = json.loads(BOUNDS_FILE.read_text())
    runs = [run for made in stored["runs"].values() for run in made]
    return {
        **stored,
        "runs made": len(runs),
        "worst final loss": max(run["final loss"] for run in runs),
        "worst recall": min(run["recall"] for run in runs),
    }
