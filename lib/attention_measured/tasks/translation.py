"""A small language and its translation, generated with the true alignment of every word (Part
IV, a language to translate).

:func:`sentence` draws a source sentence from a grammar; :func:`translate` gives its
translation, which reorders adjectives, prepositional phrases and verbs, and where each target
word comes from.  :func:`corpus` and :func:`book_data` make the book's training and test sets
(1800 sentences of 5 to 22 words; 20 of every length from 5 to 40), :func:`draw_batch` and
:func:`draw_padded_batch` the training batches, :func:`shifted_right` the decoder's inputs under
teacher forcing.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core import checks
from ..machinery.cache import remembered

# source word → target word, by part of speech (the dictionary is the whole of both languages)
LEXICON = {
    "determiner": {"the": "lo", "a": "na", "every": "oma"},
    "adjective": {
        "red": "ruda",
        "small": "mika",
        "old": "vesa",
        "quiet": "sila",
        "quick": "rapa",
        "green": "vera",
    },
    "noun": {
        "fox": "fuxo",
        "dog": "kani",
        "tree": "trea",
        "river": "riva",
        "child": "kido",
        "bird": "ava",
        "house": "doma",
        "stone": "peto",
        "farmer": "kulo",
        "boat": "nava",
    },
    "verb": {
        "sees": "vidas",
        "follows": "sekas",
        "finds": "trovas",
        "carries": "portas",
        "likes": "amas",
        "hears": "audas",
        "paints": "pentas",
        "watches": "gardas",
    },
    "preposition": {"near": "pesa", "under": "suba", "behind": "posa", "beside": "latea"},
    "conjunction": {"and": "ta"},
}


PAD, BOS, EOS = "<pad>", "<s>", "</s>"


SPECIALS = (PAD, BOS, EOS)  # ids 0, 1, 2 in both vocabularies


SOURCE_WORDS = SPECIALS + tuple(word for words in LEXICON.values() for word in words)


TARGET_WORDS = SPECIALS + tuple(word for words in LEXICON.values() for word in words.values())


DICTIONARY = {source: target for words in LEXICON.values() for source, target in words.items()}


PART_OF_SPEECH = {word: kind for kind, words in LEXICON.items() for word in words}  # source words


SOURCE_IDS = {word: i for i, word in enumerate(SOURCE_WORDS)}


TARGET_IDS = {word: i for i, word in enumerate(TARGET_WORDS)}


SHORTEST, LONGEST = 5, 47  # one clause without adjectives or place; four clauses with both

MAX_CLAUSES = 4  # the grammar joins up to four clauses with "and"

MAX_STEPS = 2 * LONGEST  # the most words a decoder may be asked to write: twice the longest


TRAIN_LENGTHS = (5, 22)  # sentence lengths the models train on


TEST_LENGTHS = (5, 40)  # the length curve, including lengths never seen in training


TRAIN_PER_LENGTH, TEST_PER_LENGTH = 100, 20


DATA_SEED = 2015  # the seed of the book's corpus (Bahdanau et al.'s year)


ADJECTIVE_SHARE = 0.5  # how often a noun phrase has an adjective


PLACE_SHARE = 0.5  # how often a clause has a place


class Sentence(NamedTuple):
    """One sentence pair: source words, their translation, and the true alignment.

    alignment[i] is the source position that target word i translates.
    """

    source: tuple[str, ...]
    target: tuple[str, ...]
    alignment: tuple[int, ...]


_BY_KIND = {kind: tuple(words) for kind, words in LEXICON.items()}


def _pick(rng: np.random.RandomState, kind: str) -> str:
    words = _BY_KIND[kind]
    return words[rng.randint(len(words))]


def _noun_phrase(rng: np.random.RandomState) -> list[str]:
    """The words of one noun phrase, in source order."""
    words = [_pick(rng, "determiner")]
    if rng.random_sample() < ADJECTIVE_SHARE:
        words.append(_pick(rng, "adjective"))
    return words + [_pick(rng, "noun")]


def _phrase_order(start: int, length: int) -> list[int]:
    """Source positions of a noun phrase in target order: determiner, noun, then adjective."""
    return [start, start + 1] if length == 2 else [start, start + 2, start + 1]


def _clause(rng: np.random.RandomState) -> list[str]:
    """One clause's source words."""
    words = _noun_phrase(rng) + [_pick(rng, "verb")] + _noun_phrase(rng)
    if rng.random_sample() < PLACE_SHARE:
        words += [_pick(rng, "preposition")] + _noun_phrase(rng)
    return words


def _source_words(source) -> tuple[str, ...]:
    """A source sentence given as one string or as a sequence of words, as a tuple of words."""
    if isinstance(source, str):
        source = source.split()
    elif not isinstance(source, (list, tuple)) or not all(isinstance(w, str) for w in source):
        raise TypeError(f"source must be a sentence, a string or a list of words; got {source!r}")
    if not source:
        raise ValueError("source must hold a sentence, got no words")
    return tuple(source)


def translate(source) -> Sentence:
    """The translation of a source sentence (words or one string) and its true alignment.

    Raises ValueError for a word outside the dictionary or a sentence the grammar cannot
    parse; the rules are undone clause by clause, so only grammatical sentences translate.
    """
    words = _source_words(source)
    unknown = sorted({w for w in words if w not in DICTIONARY})
    if unknown:
        raise ValueError(f"unknown source words {unknown}; the dictionary is translation.LEXICON")
    order, position = [], 0

    def phrase(at: int) -> int:
        """Parse a noun phrase at ``at``; return its length."""
        if at < len(words) and PART_OF_SPEECH[words[at]] == "determiner":
            if at + 1 < len(words) and PART_OF_SPEECH[words[at + 1]] == "noun":
                return 2
            if at + 2 < len(words) and PART_OF_SPEECH[words[at + 1]] == "adjective":
                if PART_OF_SPEECH[words[at + 2]] == "noun":
                    return 3
        raise ValueError(f"expected a noun phrase at word {at} of {' '.join(words)!r}")

    while True:
        start, subject = position, phrase(position)
        verb_at = position + subject
        if verb_at >= len(words) or PART_OF_SPEECH[words[verb_at]] != "verb":
            raise ValueError(f"expected a verb at word {verb_at} of {' '.join(words)!r}")
        obj = phrase(verb_at + 1)
        clause = _phrase_order(start, subject) + _phrase_order(verb_at + 1, obj)
        position = verb_at + 1 + obj
        if position < len(words) and PART_OF_SPEECH[words[position]] == "preposition":
            place = phrase(position + 1)
            clause += _phrase_order(position + 1, place) + [position]
            position += 1 + place
        order += clause + [verb_at]
        if position == len(words):
            break
        if PART_OF_SPEECH[words[position]] != "conjunction":
            raise ValueError(f"expected 'and' or the end at word {position} of {' '.join(words)!r}")
        order.append(position)
        position += 1
    return Sentence(words, tuple(DICTIONARY[words[i]] for i in order), tuple(order))


def sentence(rng: np.random.RandomState, clauses: int) -> Sentence:
    """A random sentence of ``clauses`` (1 to :data:`MAX_CLAUSES`) clauses joined by "and",
    drawn from ``rng``, with its translation."""
    rng = checks.random_state(rng, "rng")
    clauses = checks.integer(clauses, "clauses", 1, MAX_CLAUSES)
    words: list[str] = []
    for c in range(clauses):
        if c:
            words.append("and")
        words += _clause(rng)
    return translate(words)


class Corpus(NamedTuple):
    """Sentence pairs as token ids, grouped for batching by source length.

    source: (N, m) ids; target: (N, m + 1) ids ending in </s>; alignment: (N, m) true
    alignments; every sentence in one Corpus has the same length m.
    """

    source: np.ndarray
    target: np.ndarray
    alignment: np.ndarray

    @property
    def length(self) -> int:
        return self.source.shape[1]


def encode_source(words) -> np.ndarray:
    """Source token ids (m,) for words (or a string); unknown words are refused."""
    if not isinstance(words, str) and not hasattr(words, "__iter__"):
        raise TypeError(f"words must be a sentence or a list of words, got {type(words).__name__}")
    words = words.split() if isinstance(words, str) else list(words)
    unknown = sorted({str(w) for w in words if w not in SOURCE_IDS or w in SPECIALS})
    if unknown:
        raise ValueError(f"words holds unknown tokens {unknown}; the vocabulary is SOURCE_WORDS")
    return np.array([SOURCE_IDS[w] for w in words])


def decode_target(ids) -> tuple[str, ...]:
    """Target words for ids, stopping before the first </s> (a model's output read back)."""
    ids = checks.integers(ids, "ids", 0, len(TARGET_WORDS) - 1)
    words = []
    for i in np.ravel(ids):
        if TARGET_WORDS[i] == EOS:
            break
        words.append(TARGET_WORDS[i])
    return tuple(words)


def _times(a: dict[int, int], b: dict[int, int]) -> dict[int, int]:
    """The product of two counts by length, {length: count}: every way to follow a with b."""
    out: dict[int, int] = {}
    for n, x in a.items():
        for m, y in b.items():
            out[n + m] = out.get(n + m, 0) + x * y
    return out


def sentence_counts() -> dict[int, int]:
    """How many distinct source sentences the grammar makes of each length, {length: count}.

    Counted, not drawn: a noun phrase is 2 or 3 words, a clause is a noun phrase, a verb and a
    noun phrase, perhaps followed by a preposition and a third, and up to four clauses are
    joined by "and".
    """
    size = {kind: len(words) for kind, words in LEXICON.items()}
    phrase = {2: size["determiner"] * size["noun"]}
    phrase[3] = phrase[2] * size["adjective"]
    clause = _times(_times(phrase, {1: size["verb"]}), phrase)
    clause = _times(clause, {0: 1, **_times({1: size["preposition"]}, phrase)})
    counts: dict[int, int] = {}
    joined = clause
    for clauses in range(1, 5):
        if clauses > 1:
            joined = _times(_times(joined, {1: size["conjunction"]}), clause)
        for n, count in joined.items():
            counts[n] = counts.get(n, 0) + count
    return dict(sorted(counts.items()))


def corpus(per_length: int, lengths=TRAIN_LENGTHS, seed: int = DATA_SEED) -> dict[int, Corpus]:
    """``per_length`` distinct sentences of every length in ``lengths`` (inclusive), by length.

    Sentences are drawn from ``seed`` with one to four clauses and kept when their length is
    wanted and not yet drawn, so no sentence appears twice.  Returns {length: Corpus}.
    """
    per_length = checks.integer(per_length, "per_length", 1)
    if isinstance(lengths, (str, bytes)) or not hasattr(lengths, "__len__") or len(lengths) != 2:
        raise TypeError(f"lengths must be a pair (shortest, longest), got {lengths!r}")
    low, high = (checks.integer(x, "lengths", SHORTEST, LONGEST) for x in lengths)
    if low > high:
        raise ValueError(f"lengths must run from low to high, got {lengths}")
    rng = np.random.RandomState(checks.seed(seed))
    possible = sentence_counts()
    short = [n for n in range(low, high + 1) if possible.get(n, 0) < per_length]
    if short:  # refused before drawing: the draw would search for minutes and fail
        raise ValueError(
            f"the grammar makes fewer than {per_length} distinct sentences of lengths {short} "
            f"(length {short[0]}: {possible.get(short[0], 0)}); see translation.sentence_counts()"
        )
    found: dict[int, dict[tuple, Sentence]] = {n: {} for n in range(low, high + 1)}
    clauses = [c for c in range(1, 5) if 5 * c + c - 1 <= high and 10 * c + c - 1 >= low]
    for _ in range(10_000 * per_length * len(found)):
        pair = sentence(rng, clauses[rng.randint(len(clauses))])
        bucket = found.get(len(pair.source))
        if bucket is not None and len(bucket) < per_length:
            bucket.setdefault(pair.source, pair)
        if all(len(b) == per_length for b in found.values()):
            break
    else:
        short = [n for n, b in found.items() if len(b) < per_length]
        raise ValueError(f"the grammar gives fewer than {per_length} sentences of lengths {short}")
    return {n: _as_corpus(list(bucket.values())) for n, bucket in found.items()}


def _as_corpus(pairs: list[Sentence]) -> Corpus:
    source = np.array([[SOURCE_IDS[w] for w in p.source] for p in pairs])
    target = np.array([[TARGET_IDS[w] for w in p.target] + [TARGET_IDS[EOS]] for p in pairs])
    return Corpus(source, target, np.array([p.alignment for p in pairs]))


def _check_corpora(corpora, name: str = "corpora") -> dict:
    """``corpora`` if it is a non-empty {length: Corpus}, as :func:`corpus` makes."""
    if not isinstance(corpora, dict) or not all(isinstance(c, Corpus) for c in corpora.values()):
        raise TypeError(f"{name} must be a dict of Corpus by length, got {type(corpora).__name__}")
    if not corpora:
        raise ValueError(f"{name} holds no sentences")
    return corpora


def split(corpora: dict[int, Corpus], held_out: int, seed: int = DATA_SEED):
    """(train, test): ``held_out`` sentences of each length moved into the test set.

    A length with no more than ``held_out`` sentences goes wholly to the test set.
    """
    _check_corpora(corpora)
    held_out = checks.integer(held_out, "held_out", 0)
    rng = np.random.RandomState(checks.seed(seed))
    train, test = {}, {}
    for n, c in corpora.items():
        order = rng.permutation(len(c.source))
        test[n] = Corpus(*(a[order[:held_out]] for a in c))
        if len(order) > held_out:
            train[n] = Corpus(*(a[order[held_out:]] for a in c))
    return train, test


def shifted_right(target, first: int) -> np.ndarray:
    """Teacher forcing's inputs (Part V, section 6): each target row (N, n) moved one place
    right, ``first`` (the start-of-sentence id) in front and the last word dropped, so that
    position i reads the true words before word i."""
    target = checks.integers(target, "target", 0)
    if target.ndim != 2:
        raise ValueError(f"target must be token ids (N, n), got shape {target.shape}")
    first = checks.integer(first, "first", 0, len(TARGET_WORDS) - 1)
    return np.concatenate([np.full((len(target), 1), first), target[:, :-1]], axis=1)


def draw_batch(corpora: dict[int, Corpus], rng: np.random.RandomState, size: int):
    """(source, target): ``size`` sentences of one length, the length drawn first, uniformly.

    A training step's batch: every sentence in it has the same length, so none needs padding.
    """
    _check_corpora(corpora)
    lengths = sorted(corpora)
    corpus = corpora[lengths[rng.randint(len(lengths))]]
    chosen = rng.choice(len(corpus.source), min(size, len(corpus.source)), replace=False)
    return corpus.source[chosen], corpus.target[chosen]


def pad(rows, value: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Sentences of different lengths as one array: (ids (N, longest), lengths (N,)), each
    row filled after its end with ``value`` (the id of <pad>, 0 in both vocabularies)."""
    if isinstance(rows, str) or not isinstance(rows, (list, tuple)):
        raise TypeError(f"rows must be a list of 1-d id arrays, got {rows!r}")
    rows = [checks.integers(row, "rows", 0) for row in rows]
    if not rows or any(row.ndim != 1 or not row.size for row in rows):
        raise ValueError("rows must be a non-empty list of non-empty 1-d id arrays")
    lengths = np.array([len(row) for row in rows])
    ids = np.full((len(rows), lengths.max()), checks.integer(value, "value", 0))
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
    return ids, lengths


def draw_padded_batch(corpora: dict[int, Corpus], rng: np.random.RandomState, size: int):
    """(source, target, source_lengths, target_lengths): ``size`` sentences drawn from every
    length alike, without replacement, each padded with <pad> to the batch's longest
    (Part III, batches of mixed lengths)."""
    _check_corpora(corpora)
    rng = checks.random_state(rng, "rng")
    size = checks.integer(size, "size", 1)
    lengths = sorted(corpora)
    owners = np.concatenate([np.full(len(corpora[n].source), n) for n in lengths])
    rows = np.concatenate([np.arange(len(corpora[n].source)) for n in lengths])
    chosen = rng.choice(len(owners), min(size, len(owners)), replace=False)
    source, source_lengths = pad([corpora[owners[k]].source[rows[k]] for k in chosen])
    target, target_lengths = pad([corpora[owners[k]].target[rows[k]] for k in chosen])
    return source, target, source_lengths, target_lengths


@remembered
def book_data() -> tuple[dict[int, Corpus], dict[int, Corpus]]:
    """The book's (train, test), each {length: Corpus} (Part III, the task).

    Training: 100 sentences of every length from 5 to 22.  Test: 20 other sentences of every
    length from 5 to 40, so lengths 23 to 40 are never seen in training.
    """
    low, high = TRAIN_LENGTHS
    train, test = split(corpus(TRAIN_PER_LENGTH + TEST_PER_LENGTH, (low, high)), TEST_PER_LENGTH)
    test.update(corpus(TEST_PER_LENGTH, (high + 1, TEST_LENGTHS[1]), seed=DATA_SEED + 1))
    return train, test
