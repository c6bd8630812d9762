"""Part II, section 4, "What the memory remembers": what the trained head recalls, and why.

How well the head names the hidden token on the sentences it learned (:func:`top1_accuracy`) and
on sentences it never saw (:func:`heldout_experiment`, with three baselines that use no
attention:
:func:`most_frequent_token`, :func:`positional_guesses`,
:func:`cooccurrence_guesses`); how much of that comes from a query that sees
its own token (:func:`swapped_top1`); how the loss curve spikes (:func:`loss_spikes`); and, Part
I's rule, what dropping one key does (:func:`removal_effects`, :func:`sentence_report`).

The head's training is chaotic from a few hundred iterations on, so the section states bounds,
:data:`RECALL_FLOOR` and :data:`LOSS_CEILING`, measured with a margin over many nudged runs on
two kinds of processor: :func:`bound_runs` makes the runs, ``tools/bounds.py`` stores them with
the package as ``recall_bounds.json``, and :func:`stored_bounds` reads them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from . import checks, measures
from .attention import drop_each_step, softmax
from .params import Params
from .training import Trained
from .udhr import (
    DISPLAY,
    EPOCHS,
    SENTENCES,
    TOKEN_ID,
    VOCAB,
    WIDTH,
    Batch,
    attention_weights,
    check_query,
    check_sentences,
    decode,
    encode,
    forward,
    head_params,
    make_batch,
    query_kind,
    train,
)

# Bounds for the end of a chaotic run, with a margin over the worst of the stored runs
# (recall_bounds.json): the token and position queries from seed 0, each nudged by 0 to 12e-12
# (train(nudge=...)), on two kinds of processor arithmetic.
BOUNDS_FILE = Path(__file__).with_name("recall_bounds.json")
BOUND_QUERIES = ("token", "position")
BOUND_NUDGES = tuple(k * 0.5e-12 for k in range(25))
RECALL_FLOOR = 0.5  # every such run recalls more than half of the training tokens ...
LOSS_CEILING = 1  # ... and ends with a loss per token below 1 (it starts at 4.58)
SPIKE_FACTOR = 10.0  # a spike climbs above 10 times the lowest loss so far ...
SPIKE_RECOVERY = 2.0  # ... and is over once the loss is back below 2 times that lowest loss
ALWAYS_TRAINED = 0  # the DISPLAY sentence is in every training fold
# Held-out folds: sentence i (1..15) goes to fold (i - 1) % 5, so each fold
# holds three sentences from the start, middle and end of the corpus.
FOLDS: tuple[tuple[int, ...], ...] = tuple(tuple(range(1 + f, len(SENTENCES), 5)) for f in range(5))
SWAPS = ("next", "previous")
METHODS = (
    "token",
    "position",
    "mask",
    "token_swapped",
    "most_frequent",
    "positional",
    "cooccurrence",
)


def predict(model, tokens) -> np.ndarray:
    """(n, V) probabilities of every vocabulary token at each position of one sentence (section
    4)."""
    batch = make_batch([tokens])
    return forward(head_params(model), batch).probs


def _scored_batch(model, sentences) -> Batch:
    if sentences is None:
        if not isinstance(model, Trained):
            raise ValueError(
                "model must be a trained head (from train), which remembers its sentences, or "
                "the sentences to score must be given"
            )
        sentences = model.model.sentences
    return make_batch(check_sentences(sentences))


def top1_accuracy(model, sentences=None) -> float:
    """Share of positions whose most probable token is the true one (section 4).

    ``sentences``: token lists or strings from the vocabulary, held-out ones included; None
    means the sentences a trained head was trained on.
    """
    batch = _scored_batch(model, sentences)
    guesses = forward(head_params(model), batch).probs.argmax(axis=-1)
    return float(np.mean(guesses == batch.targets))


def swapped_query_ids(batch: Batch, swap: str = "next") -> np.ndarray:
    """(B, L) ids from which the swapped queries are built (section 4, "What the memory
    remembers").

    ``swap="next"``: position i of a sentence of n tokens takes the token at position (i + 1)
    mod n of the same sentence, so the last position takes the first token; ``"previous"`` takes
    (i - 1) mod n.  Padding positions keep id 0; their rows are masked anyway.  Raises
    ValueError for any other ``swap``.  Where a sentence repeats a token next to itself, the
    query is unchanged by the swap.
    """
    if not isinstance(swap, str) or swap not in SWAPS:
        raise ValueError(f"unknown swap {swap!r}; choose one of {', '.join(map(repr, SWAPS))}")
    if not isinstance(batch, Batch):
        raise ValueError(f"expected a Batch (from make_batch), got {type(batch).__name__}")
    lengths = batch.valid.sum(axis=1)[:, None]  # (B, 1)
    offset = 1 if swap == "next" else -1
    source = (np.arange(batch.ids.shape[1])[None, :] + offset) % lengths  # (B, L)
    return np.where(batch.valid, np.take_along_axis(batch.ids, source, axis=1), 0)


def _swapped_correct(params: Params, batch: Batch, swap: str) -> np.ndarray:
    """(N,) True where the head, with swapped queries, still names the true token."""
    query_ids = swapped_query_ids(batch, swap)
    return forward(params, batch, query_ids).probs.argmax(axis=-1) == batch.targets


def swapped_top1(model, sentences=None, swap: str = "next") -> float:
    """Top-1 accuracy of a "token" head whose queries come from the wrong token (section 4).

    Section 4, "What the memory remembers", asks how much of the token query's score (on
    held-out sentences above all) comes from the query looking at the very token it must name.
    Here every position's query is E[x_s] W_Q for the token x_s chosen by
    :func:`swapped_query_ids` (default: the next token, cyclically), while the keys, the values,
    the mask and the target stay those of the true sentence.  ``sentences`` as in
    :func:`top1_accuracy`.  The "mask" and "position" queries never read a
    token, so there is nothing to swap: they raise ValueError.
    """
    params = head_params(model)
    if query_kind(params) != "token":
        raise ValueError(
            f"the query swap needs the 'token' query; the {query_kind(params)!r} query "
            f"never reads the token at its position"
        )
    batch = _scored_batch(model, sentences)
    return float(np.mean(_swapped_correct(params, batch, swap)))


def loss_spikes(
    loss_curve, factor: float = SPIKE_FACTOR, recovery: float = SPIKE_RECOVERY
) -> np.ndarray:
    """Iterations (1-based) at which the training loss starts a spike (section 4).

    The rule, with m_t the lowest loss at the iterations before t: a spike starts at iteration t
    when loss_t > ``factor`` * m_t and no spike is under way; it lasts until the loss drops
    below ``recovery`` * m_t (m_t cannot move during a spike, as the loss stays above it).  Each
    spike is counted once, at its first iteration, however often it wobbles across the upper
    line, and a spike that never recovers is counted once too. The first iteration has nothing
    before it and never starts a spike. Section 4, "What the memory remembers", uses the
    defaults: a loss ten times its best so far, over once it is back within twice that best.

    loss_curve: (T,) positive finite losses.  factor > recovery >= 1. Returns an int array of
    the start iterations, in 1..T, ascending.
    """
    curve = checks.array(loss_curve, "loss_curve", ndim=1)
    if np.any(curve <= 0):
        raise ValueError(
            "loss_curve must hold positive numbers (the rule compares ratios of losses)"
        )
    factor, recovery = checks.real(factor, "factor"), checks.real(recovery, "recovery")
    if not factor > recovery >= 1:
        raise ValueError(
            f"need factor > recovery >= 1, got factor={factor!r}, recovery={recovery!r}"
        )
    best_before = np.minimum.accumulate(np.concatenate(([np.inf], curve[:-1])))  # m_t, inf at t = 0
    rises = curve > factor * best_before  # enter (or stay in) a spike
    settles = curve < recovery * best_before  # leave it
    # The state at t is set by the last rise or settle at or before t; between them it holds.
    steps = np.arange(len(curve))
    last_event = np.maximum.accumulate(np.where(rises | settles, steps, -1))
    in_spike = (last_event >= 0) & rises[np.maximum(last_event, 0)]
    starts = in_spike & ~np.concatenate(([False], in_spike[:-1]))
    return np.flatnonzero(starts) + 1


def most_frequent_token(sentences) -> str:
    """The token that occurs most often in ``sentences`` (section 4's first baseline).

    Every occurrence counts (a sentence with "and" twice adds two); ties go to the token that
    comes first in the alphabet.  ``sentences``: a list of token lists or strings from the
    vocabulary.
    """
    counts = np.bincount(
        np.concatenate([encode(s) for s in check_sentences(sentences)]), minlength=len(VOCAB)
    )
    return VOCAB[int(counts.argmax())]


def positional_guesses(sentences, length: int) -> list[str]:
    """Section 4's positional baseline: for each position i < ``length``, the training token
    most often at i.

    Counts every training sentence long enough to have a position i; ties go to the token that
    occurs more often in ``sentences`` overall, then to the alphabetically first.  Where no
    training sentence is that long, the guess is :func:`most_frequent_token`.  Returns
    ``length`` tokens.
    """
    training = [encode(s) for s in check_sentences(sentences)]
    length = checks.integer(length, "length", 1)
    V = len(VOCAB)
    overall = np.bincount(np.concatenate(training), minlength=V)
    at = np.zeros((int(length), V), dtype=np.int64)  # (length, V) counts per position
    for ids in training:
        reach = min(len(ids), int(length))
        at[np.arange(reach), ids[:reach]] += 1
    tie_rank = np.empty(V, dtype=np.int64)
    tie_rank[np.lexsort((np.arange(V), -overall))] = np.arange(V)  # best tie-break first
    key = at * V + (V - 1 - tie_rank)
    key[at.sum(axis=1) == 0] = V - 1 - tie_rank  # nobody that long: overall favourite
    return decode(key.argmax(axis=1))


def cooccurrence_guesses(sentences, tokens) -> list[str]:
    """Section 4's second baseline: one guess per position of ``tokens``, from co-occurrence
    counts.

    ``sentences`` are the training sentences (token lists or strings), and ``tokens`` one
    sentence of n tokens to fill in.  For position i, a candidate w (any token that occurs in
    ``sentences``) scores

        score_i(w) = number of pairs (s, j), s a training sentence and j != i
                     a position of ``tokens``, such that s contains both w
                     and tokens[j].

    Containment is set membership: repeats inside s do not count twice, but a token repeated at
    two positions j of ``tokens`` counts once per position, and w = tokens[j] counts for every
    training sentence that contains w.  The guess is the w of highest score; ties go to the
    token that occurs more often in ``sentences`` (every occurrence counted), then to the
    alphabetically first.  Returns n tokens.
    """
    training = [encode(s) for s in check_sentences(sentences)]
    ids = np.array(encode(tokens))
    V = len(VOCAB)
    present = np.zeros((len(training), V), dtype=np.int64)  # (S, V) 1 if s contains w
    for row, sentence_ids in zip(present, training):
        row[sentence_ids] = 1
    together = present.T @ present  # (V, V) sentences holding both
    counts = np.bincount(np.concatenate(training), minlength=V)
    bag = np.bincount(ids, minlength=V)  # how often each token is in `tokens`
    scores = (together @ bag)[None, :] - together[:, ids].T  # (n, V): sum over j != i
    order = np.lexsort((np.arange(V), -counts))  # best tie-break first
    tie_rank = np.empty(V, dtype=np.int64)
    tie_rank[order] = np.arange(V)
    key = np.where(counts > 0, scores * V + (V - 1 - tie_rank), -1)
    return decode(key.argmax(axis=1))


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
    nudge = checks.real(nudge, "nudge")
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
                forward(params, batch).probs.argmax(axis=-1) == batch.targets
            )
            if query == "token":
                hits["token_swapped"][f] = np.count_nonzero(_swapped_correct(params, batch, "next"))
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


def removal_effects(model, tokens=DISPLAY) -> tuple[np.ndarray, np.ndarray]:
    """What dropping each key does to each position's prediction, Part I's test (section 4).

    Returns ``(p, p_without)``: p (n,) the probability the head gives to the true token at each
    position of ``tokens``; p_without (n, n), entry [i, j] that probability when query i's
    weight on key j is dropped and the weights on its other allowed keys are renormalised to sum
    to one (:func:`attention_measured.attention.drop_each_step` with the sentence's allowed
    mask).  Queries, keys and values are those of the full sentence. A position never attends to
    itself, so p_without[i, i] = p[i].  If j was a position's only allowed key (a 2-token
    sentence), the read is zero and the prediction becomes uniform, 1/V per token.
    :func:`attention_measured.measures.effects` turns the pair into removal effects, which
    section 4 sets next to the weights: the heaviest key is not always the one the prediction
    depends on.
    """
    params = head_params(model)
    batch = make_batch([tokens])
    fwd = forward(params, batch)
    q, k, v = fwd.queries[0], fwd.keys[0], fwd.values[0]  # (n, d) each
    n = len(q)
    scores = q @ k.T / np.sqrt(WIDTH)  # (n, n)
    kept = drop_each_step(scores, batch.allowed[0])  # (n, n, n): [i, j] without key j
    probs = softmax((kept @ v) @ params.W_O)  # (n, n, V)
    rows = np.arange(n)
    p = fwd.probs[rows, batch.targets]  # (n,)
    p_without = probs[rows[:, None], rows[None, :], batch.targets[:, None]]  # (n, n)
    p_without[rows, rows] = p
    return p, p_without


def sentence_report(index: int, seed: int = 0, query: str = "token") -> dict:
    """One corpus sentence through a trained head: what section 4's sentence explorer shows.

    Returns tokens (n,), weights (n, n), predicted (n,) token strings, p_true (n,), heaviest
    (n,) key index per query, and effect (n,): how far p_true moves when that heaviest key is
    dropped and the rest renormalised.
    """
    tokens = SENTENCES[checks.index(index, "index", len(SENTENCES))]
    run = train(checks.seed(seed), query=check_query(query))
    weights = attention_weights(run, tokens)
    probs = predict(run, tokens)
    heaviest = weights.argmax(axis=1)
    effects = measures.effects(*removal_effects(run, tokens))
    rows = np.arange(len(tokens))
    return {
        "tokens": tokens,
        "weights": weights,
        "predicted": [VOCAB[i] for i in probs.argmax(axis=1)],
        "p_true": probs[rows, encode(tokens)],
        "heaviest": heaviest,
        "effect": effects[rows, heaviest],
    }


def bound_runs(queries=BOUND_QUERIES, nudges=BOUND_NUDGES, progress: bool = False) -> list[dict]:
    """Section 4's chaotic runs, on this machine's arithmetic: for each query of ``queries`` and
    each nudge of ``nudges`` (added to one initial weight, :func:`udhr.train`), the head trained
    from seed 0, as {"query", "nudge", "final loss", "recall"}: its last loss per token and the
    share of training tokens it recalls (:func:`top1_accuracy`).  ``progress``: a tqdm bar.
    """
    queries = [check_query(q) for q in queries]
    nudges = [checks.real(n, "nudge") for n in nudges]
    if not queries or not nudges:
        raise ValueError("bound_runs needs at least one query and one nudge")
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
