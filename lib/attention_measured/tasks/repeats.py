"""Random tokens whose end repeats the stretch before it: a next-token task whose cause is known
by construction (Part VII, induction heads).

Each sequence is L random tokens, except that its last S tokens copy the S tokens before them,
with S drawn for each sequence from [L/4, L/2].  In the repeated stretch, the only way to
predict the next token is to find the earlier copy of the current token and read the token that
followed it: the source of each such prediction is known.  Because S varies, no fixed offset
back finds the copy; a model must look the current token up (an induction circuit).  With a
repeat at a fixed offset, a model could copy from a fixed distance instead, with no lookup.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import checks


@dataclass(frozen=True)
class Repeats:
    """A batch of sequences: ``tokens`` (N, L) ids; ``repeat`` (N,), each sequence's S; and
    ``source`` (N, L): at each position t inside the repeated stretch but its last, whose token
    is a copy of the one at t − S, the position t − S + 1 that holds the next token to be
    predicted (the token after the earlier copy); −1 at every other position, where nothing
    earlier tells the next token (the first token of the copy cannot be foreseen either)."""

    tokens: np.ndarray
    repeat: np.ndarray
    source: np.ndarray

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def repeated(self) -> np.ndarray:
        """(N, L) True at the positions whose next token is a copy (the source is known)."""
        return self.source >= 0


def repeats(
    n: int, length: int = 32, vocabulary: int = 32, seed: int = 0, shortest=None, longest=None
) -> Repeats:
    """``n`` sequences of ``length`` tokens from ``vocabulary`` (Part VII): random tokens whose
    last S repeat the S before them, S drawn uniformly from [``shortest``, ``longest``] for each
    sequence, by default [length / 4, length / 2]."""
    n = checks.integer(n, "n", 1)
    length = checks.integer(length, "length", 4)
    vocabulary = checks.integer(vocabulary, "vocabulary", 2)
    shortest = checks.integer(length // 4 if shortest is None else shortest, "shortest", 1)
    longest = checks.integer(length // 2 if longest is None else longest, "longest", shortest)
    if 2 * longest > length:
        raise ValueError(f"longest must be at most half the length {length}, got {longest}")
    rng = np.random.RandomState(checks.seed(seed))
    tokens = rng.randint(0, vocabulary, size=(n, length))
    repeat = rng.randint(shortest, longest + 1, size=n)
    source = np.full((n, length), -1)
    for i, s in enumerate(repeat):
        tokens[i, length - s :] = tokens[i, length - 2 * s : length - s]
        # position t predicts t + 1: from t = L − S on, token t repeats token t − S, and the
        # answer, token t + 1, repeats token t − S + 1
        t = np.arange(length - s, length - 1)
        source[i, t] = t - s + 1
    return Repeats(tokens, repeat, source)


def with_start(data: Repeats, token: int) -> Repeats:
    """``data`` with ``token`` put before every sequence, as a language model's beginning-of-
    sequence token (Part VII, attention sinks): tokens (N, L + 1), the sources moved one place
    on, and −1 at the new first position."""
    if not isinstance(data, Repeats):
        raise TypeError(f"data must be Repeats (from repeats), got {type(data).__name__}")
    token = checks.integer(token, "token", 0)
    n = len(data)
    tokens = np.concatenate([np.full((n, 1), token), data.tokens], axis=1)
    moved = np.where(data.source >= 0, data.source + 1, -1)
    source = np.concatenate([np.full((n, 1), -1), moved], axis=1)
    return Repeats(tokens, data.repeat, source)
