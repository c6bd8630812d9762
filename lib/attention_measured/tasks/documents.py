"""Documents of sentences of word ids, labelled by one trigger word hidden among fillers (Part V,
section 2): the trigger is the known cause, at both levels of Yang et al.'s hierarchy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import checks


@dataclass(frozen=True)
class Documents:
    """tokens: (N, S, W) word ids; labels: (N,) 0/1; trigger: (N, 2) the (sentence, word) of the
    trigger.
    """

    tokens: np.ndarray
    labels: np.ndarray
    trigger: np.ndarray

    def __post_init__(self):
        """Refuse fields that do not describe the same N documents."""
        tokens = checks.integers(self.tokens, "tokens", 0)
        labels = checks.labels(self.labels, "labels")
        if labels.ndim != 1:
            raise ValueError(f"labels must be (N,), one per document, got shape {labels.shape}")
        trigger = checks.integers(self.trigger, "trigger", 0)
        n = len(labels)
        if tokens.ndim != 3 or len(tokens) != n or trigger.shape != (n, 2):
            raise ValueError(
                f"tokens (N, S, W), labels (N,) and trigger (N, 2) must describe the same "
                f"documents, got {tokens.shape}, {labels.shape} and {trigger.shape}"
            )

    def __len__(self) -> int:
        return len(self.labels)


DOCUMENT_WORDS = ("good", "bad")  # word 0 makes a document positive, word 1 negative


def documents(
    n: int = 600, sentences: int = 4, words: int = 6, vocabulary: int = 16, seed: int = 0
) -> Documents:
    """Synthetic documents: every word a filler (ids 2..V-1) except one trigger (section 2).

    The trigger, "good" (id 0) or "bad" (id 1), sits at a random word of a random sentence and
    sets the label: 1 for "good".
    """
    n, sentences, words = (
        checks.integer(n, "n", 1),
        checks.integer(sentences, "sentences", 1),
        checks.integer(words, "words", 1),
    )
    vocabulary = checks.integer(vocabulary, "vocabulary", 3)
    rng = np.random.RandomState(checks.seed(seed))
    tokens = rng.randint(2, vocabulary, size=(n, sentences, words))
    labels = rng.randint(0, 2, size=n)
    trigger = np.stack([rng.randint(0, sentences, size=n), rng.randint(0, words, size=n)], axis=1)
    tokens[np.arange(n), trigger[:, 0], trigger[:, 1]] = 1 - labels
    return Documents(tokens, labels.astype(float), trigger)
