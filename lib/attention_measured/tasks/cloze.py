"""Sixteen sentences of the Universal Declaration of Human Rights, and the cloze task on them: name
the token at each position from the others (Part IV, sections 1 and 2).

:data:`ARTICLES` and :data:`CORPUS` hold the sentences (public domain), :func:`tokenize` their
lowercase words, :data:`VOCAB` the 98 tokens, :func:`encode` and :func:`decode` turn tokens into
ids and back.  :func:`make_batch` pads sentences into one :class:`Batch`, whose ``allowed`` mask
keeps every position from attending to itself or to padding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..core import checks

# Sixteen sentences and clauses from thirteen articles of the UDHR (adopted by
# the UN in 1948 as resolution 217 A; public domain), each with its article number.
ARTICLES: list[tuple[int, str]] = [
    (1, "All human beings are born free and equal in dignity and rights."),
    (
        1,
        "They are endowed with reason and conscience and should act towards one another in a "
        "spirit of brotherhood.",
    ),
    (3, "Everyone has the right to life, liberty and security of person."),
    (4, "No one shall be held in slavery or servitude."),
    (4, "Slavery and the slave trade shall be prohibited in all their forms."),
    (
        5,
        "No one shall be subjected to torture or to cruel, inhuman or degrading treatment or "
        "punishment.",
    ),
    (6, "Everyone has the right to recognition everywhere as a person before the law."),
    (
        7,
        "All are equal before the law and are entitled without any discrimination to equal "
        "protection of the law.",
    ),
    (9, "No one shall be subjected to arbitrary arrest, detention or exile."),
    (
        13,
        "Everyone has the right to freedom of movement and residence within the borders of each "
        "state.",
    ),
    (17, "Everyone has the right to own property alone as well as in association with others."),
    (17, "No one shall be arbitrarily deprived of his property."),
    (18, "Everyone has the right to freedom of thought, conscience and religion."),
    (19, "Everyone has the right to freedom of opinion and expression."),
    (
        24,
        "Everyone has the right to rest and leisure, including reasonable limitation of working "
        "hours and periodic holidays with pay.",
    ),
    (26, "Everyone has the right to education."),
]


CORPUS = "\n".join(sentence for _, sentence in ARTICLES)  # one sentence to a line


def tokenize(sentence: str) -> list[str]:
    """The runs of letters in ``sentence``, lowercased (section 1); punctuation and case vanish."""
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a string, got {type(sentence).__name__}")
    return re.findall(r"[a-z]+", sentence.lower())


# Lines of fewer than two tokens would leave a lone token with no other token to
# attend to; the demo drops them (the corpus has none).
SENTENCES: list[list[str]] = [t for t in map(tokenize, CORPUS.strip().splitlines()) if len(t) >= 2]


VOCAB: list[str] = sorted({word for tokens in SENTENCES for word in tokens})


TOKEN_ID: dict[str, int] = {word: i for i, word in enumerate(VOCAB)}


# The first sentence of Article 1, the sentence whose attention matrix is drawn.
DISPLAY: list[str] = tokenize("All human beings are born free and equal in dignity and rights.")


MAX_LEN = max(len(tokens) for tokens in SENTENCES)  # rows of the "position" query table


def _tokens(sentence_or_tokens) -> list[str]:
    if isinstance(sentence_or_tokens, str):
        return tokenize(sentence_or_tokens)
    if isinstance(sentence_or_tokens, np.ndarray) or not hasattr(sentence_or_tokens, "__iter__"):
        raise TypeError(
            f"sentence_or_tokens must be a sentence (str) or a list of tokens, got "
            f"{sentence_or_tokens!r}"
        )
    tokens = list(sentence_or_tokens)
    if not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"sentence_or_tokens must hold tokens, strings; got {tokens!r}")
    return tokens


def encode(sentence_or_tokens) -> list[int]:
    """Token ids (rows of E, columns of the read-out) of a sentence or a token list (section 1).

    A string is tokenized first.  Raises ValueError for words outside the vocabulary (naming
    them) and for sentences of fewer than two tokens. Returns a list of n ints in 0..V-1.
    """
    tokens = _tokens(sentence_or_tokens)
    unknown = list(dict.fromkeys(t for t in tokens if t not in TOKEN_ID))
    if unknown:
        words = ", ".join(repr(w) for w in unknown)
        raise ValueError(
            f"not in the vocabulary: {words}. The head only knows the {len(VOCAB)} tokens "
            f"of the corpus; see attention_measured.tasks.cloze.VOCAB for the list"
        )
    if len(tokens) < 2:
        raise ValueError(
            f"a sentence needs at least two tokens, got {tokens!r}: a token may not attend "
            f"to itself, so a single token would have nothing to attend to"
        )
    return [TOKEN_ID[t] for t in tokens]


def decode(ids) -> list[str]:
    """The tokens of a sequence of ids, each in 0..V-1 (section 1)."""
    ids = checks.integers(ids, "ids", 0, len(VOCAB) - 1)
    if ids.ndim != 1:
        raise ValueError(f"ids must be one-dimensional, got shape {ids.shape}")
    return [VOCAB[int(i)] for i in ids]


def check_sentences(sentences) -> list[list[str]]:
    """``sentences`` as token lists, each checked by :func:`encode`, or an error saying why not."""
    if isinstance(sentences, str) or not hasattr(sentences, "__iter__"):
        raise TypeError(f"sentences must be a list of token lists or strings, got {sentences!r}")
    token_lists = [_tokens(s) for s in sentences]
    if not token_lists:
        raise ValueError("sentences must hold at least one sentence")
    for tokens in token_lists:
        encode(tokens)  # vocabulary and length checks
    return token_lists


@dataclass(frozen=True)
class Batch:
    """B sentences padded to a common length L (section 2).

    ids: (B, L) token ids, 0 in padding;  valid: (B, L), True on the N real tokens;  allowed:
    (B, L, L), True where query i may attend to key j (both real tokens and j != i; padding rows
    are all False and get zero weights); real: (N,) flat indices of the real tokens in a (B * L)
    stack; targets: (N,) their token ids, the tokens to be predicted.
    """

    ids: np.ndarray
    valid: np.ndarray
    allowed: np.ndarray
    real: np.ndarray
    targets: np.ndarray

    def __post_init__(self):
        """Refuse arrays that do not describe one batch (make_batch always makes one)."""
        ids = checks.integers(self.ids, "ids", 0, len(VOCAB) - 1)
        if ids.ndim != 2:
            raise ValueError(f"ids must be (B, L) token ids, got shape {ids.shape}")
        B, L = ids.shape
        for name, shape in (("valid", (B, L)), ("allowed", (B, L, L))):
            value = getattr(self, name)
            if not isinstance(value, np.ndarray) or value.dtype != bool or value.shape != shape:
                raise ValueError(f"{name} must be a boolean array of shape {shape}")
        n = int(self.valid.sum())
        real = checks.integers(self.real, "real", 0, B * L - 1)
        targets = checks.integers(self.targets, "targets", 0, len(VOCAB) - 1)
        if real.shape != (n,) or targets.shape != (n,):
            raise ValueError(f"real and targets must hold one entry per real token, ({n},)")

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_predicted(self) -> int:
        """N, the number of positions with a target: every real token."""
        return len(self.targets)

    def take(self, rows) -> Batch:
        """The batch of the sentences ``rows`` (an index array), padded as this one is."""
        rows = checks.integers(rows, "rows", 0, len(self) - 1)
        ids, valid = self.ids[rows], self.valid[rows]
        return Batch(ids, valid, self.allowed[rows], np.flatnonzero(valid), ids[valid])


def make_batch(sentences) -> Batch:
    """A :class:`Batch` of B sentences (strings or token lists), each checked by :func:`encode`
    (section 2).
    """
    id_lists = [encode(s) for s in check_sentences(sentences)]
    if not id_lists:
        raise ValueError("a batch needs at least one sentence")
    lengths = np.array([len(ids) for ids in id_lists])
    longest = int(lengths.max())
    valid = np.arange(longest) < lengths[:, None]
    ids = np.zeros(valid.shape, dtype=np.intp)
    ids[valid] = np.concatenate(id_lists)
    allowed = valid[:, :, None] & valid[:, None, :] & ~np.eye(longest, dtype=bool)
    return Batch(ids, valid, allowed, np.flatnonzero(valid), ids[valid])
