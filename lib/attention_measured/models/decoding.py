"""Reading a translation out of a trained model: greedy decoding and beam search (Part III,
decoding).

A translator gives, at each step, scores for the next word given the words so far.  Greedy
decoding takes the most likely word each time.  Beam search keeps the ``beam`` most likely
prefixes, scored by their log-probability log p(y_1 … y_t | x) = Σ_t log p(y_t | y_<t, x),
extends each by every word, and keeps the best ``beam`` again; a prefix that has written
</s> is finished and keeps its score.  Both work with any model that offers

- ``decoder_start(p, source)``: the decoder's state before its first word, a dict whose
  arrays have one row per sentence;
- ``decoder_next(p, state, words, t)``: (logits (N, V), weights (N, m) or None, new state)
  for the previous words (N,) at position t.

Beam search can prune the greedy prefix and end on a worse sentence than greedy decoding
(Koehn and Knowles 2017 list it among beam search's known faults), so :func:`beam_search`
decodes greedily too and returns the greedy sentence when it scores higher: a wider beam
never returns a lower log-probability.  Scores are not divided by length; the book's task
fixes the length of every translation, and a model that ends early is wrong, not brief.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core import checks
from ..core.losses import log_softmax
from ..machinery.blas import one_thread
from ..tasks.translation import MAX_STEPS

MAX_BEAM = 64  # the widest beam: each step scores beam × V prefixes per sentence


class Decoded(NamedTuple):
    """Decoded sentences: ``ids`` (N, steps), each row read up to and including its first
    </s> and padded after it with </s>; ``log_prob`` (N,), the model's log-probability of
    those words; ``lengths`` (N,), the words up to and including the first </s> (steps when
    there is none)."""

    ids: np.ndarray
    log_prob: np.ndarray
    lengths: np.ndarray


def take(state, rows: np.ndarray):
    """The decoder state with every array's first axis indexed by ``rows``: how a beam follows
    the prefixes it keeps (dicts and lists are walked, other values kept)."""
    rows = checks.integers(rows, "rows", 0)
    if not isinstance(state, (dict, list, np.ndarray)):
        raise TypeError(f"state must be a decoder's state (a dict), got {state!r}")
    return _take(state, rows)


def _take(state, rows: np.ndarray):
    if isinstance(state, np.ndarray):
        if rows.size and rows.max() >= len(state):
            raise ValueError(f"rows must be below the state's {len(state)} rows, got {rows.max()}")
        return state[rows]
    if isinstance(state, dict):
        return {key: _take(value, rows) for key, value in state.items()}
    if isinstance(state, list):
        return [_take(value, rows) for value in state]
    return state


def _check(model, beam, eos):
    for name in ("decoder_start", "decoder_next", "bos"):
        if not hasattr(model, name):
            raise TypeError(f"model must offer decoder_start, decoder_next and bos, lacks {name}")
    beam = checks.integer(beam, "beam", 1, MAX_BEAM)
    return beam, checks.integer(eos, "eos", 0)


@one_thread
def greedy(model, p, source, eos: int = 2, steps: int | None = None) -> Decoded:
    """Greedy decoding of source ids (N, m): the most likely word at every step, for ``steps``
    steps (default m + 1, at most :data:`~.translation.MAX_STEPS`) or until every sentence has
    written ``eos``."""
    return beam_search(model, p, source, 1, eos, steps)


@one_thread
def beam_search(model, p, source, beam: int, eos: int = 2, steps: int | None = None) -> Decoded:
    """Beam search of width ``beam`` over source ids (N, m) (see the module's docstring).

    ``beam`` 1 is greedy decoding, at most :data:`MAX_BEAM`.  For a wider beam, each
    sentence's result is its best finished prefix, or greedy decoding's sentence where that
    scores higher.  ``steps``: as for :func:`greedy`.
    """
    beam, eos = _check(model, beam, eos)
    state = model.decoder_start(p, source)
    N, m = np.shape(source)
    steps = m + 1 if steps is None else checks.integer(steps, "steps", 1, MAX_STEPS)
    state = take(state, np.repeat(np.arange(N), beam))
    words = np.full(N * beam, model.bos)
    scores = np.full((N, beam), -np.inf)
    scores[:, 0] = 0.0  # every row starts from one empty prefix, copied beam times
    done = np.zeros((N, beam), dtype=bool)
    history = np.empty((N, beam, 0), dtype=int)
    for t in range(steps):
        logits, _, state = model.decoder_next(p, state, words, t)
        log_probs = log_softmax(logits).reshape(N, beam, -1)
        V = log_probs.shape[-1]
        if eos >= V:
            raise ValueError(f"eos must be a word of the model's vocabulary, below {V}; got {eos}")
        # a finished prefix is extended only by </s>, at no cost, so it keeps its score
        log_probs[done] = -np.inf
        log_probs[done, eos] = 0.0
        total = (scores[:, :, None] + log_probs).reshape(N, beam * V)
        best = np.argsort(-total, axis=1, kind="stable")[:, :beam]
        origin, words = best // V, best % V
        scores = np.take_along_axis(total, best, axis=1)
        history = np.concatenate(
            [np.take_along_axis(history, origin[:, :, None], axis=1), words[:, :, None]], axis=2
        )
        done = np.take_along_axis(done, origin, axis=1) | (words == eos)
        state = take(state, (np.arange(N)[:, None] * beam + origin).ravel())
        words = words.ravel()
        if done.all():
            break
    pick = scores.argmax(axis=1)  # the first of equals: the beam keeps them in order
    ids = history[np.arange(N), pick]
    ids = np.concatenate([ids, np.full((N, steps - ids.shape[1]), eos)], axis=1)
    out = Decoded(ids, scores[np.arange(N), pick], _lengths(ids, eos))
    if beam == 1:
        return out
    plain = beam_search(model, p, source, 1, eos, steps)
    better = plain.log_prob > out.log_prob
    return Decoded(*(np.where(_rows(better, a), g, a) for a, g in zip(out, plain)))


def _rows(chosen: np.ndarray, a: np.ndarray) -> np.ndarray:
    return chosen.reshape(chosen.shape + (1,) * (a.ndim - 1))


def _lengths(ids: np.ndarray, eos: int) -> np.ndarray:
    ended = ids == eos
    return np.where(ended.any(axis=1), ended.argmax(axis=1) + 1, ids.shape[1])
