"""What a trained cloze head recalls (Part IV, section 4): how often it names the hidden token
(:func:`top1_accuracy`), and when its queries come from the wrong token (:func:`swapped_top1`);
how its loss spikes (:func:`loss_spikes`); and three guessers that use no attention, the
baselines (:func:`most_frequent_token`, :func:`positional_guesses`,
:func:`cooccurrence_guesses`)."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.params import Params
from ..core.training import Trained
from ..models.cloze_head import Head, head_params, query_kind
from ..tasks.cloze import VOCAB, Batch, check_sentences, decode, encode, make_batch

SWAPS = ("next", "previous")


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
    guesses = Head().forward(head_params(model), batch).parts["probs"].argmax(axis=-1)
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


def swapped_correct(params: Params, batch: Batch, swap: str) -> np.ndarray:
    """(N,) True where the head, with swapped queries, still names the true token."""
    query_ids = swapped_query_ids(batch, swap)
    probs = Head().forward(params, batch, query_ids=query_ids).parts["probs"]
    return probs.argmax(axis=-1) == batch.targets


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
    return float(np.mean(swapped_correct(params, batch, swap)))


SPIKE_FACTOR = 10.0  # a spike climbs above 10 times the lowest loss so far ...


SPIKE_RECOVERY = 2.0  # ... and is over once the loss is back below 2 times that lowest loss


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
