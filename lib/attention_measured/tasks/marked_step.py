"""The marked-step task: 720 sequences of 12 steps, each a reading and a flag marking one step;
the label says whether the marked step's reading exceeds 0.35 (Part I, section 1).

The cause of every label is known by construction: the marked step.  :func:`make_sequences`
draws the sequences from the lesson's random stream (:mod:`~attention_measured.core.rng`), bit for
bit; :func:`split` makes the 360 / 180 / 180 split (training, set aside, held-out);
:func:`majority_baseline` is the accuracy to beat.  :func:`lesson_data` is (training, held-out),
and :func:`shifted_lesson_data` moves the marker between training and test (Part V, section 1).

Shapes: N sequences, T = 12 steps, C = 2 channels (the reading and the marker flag).
"""

from __future__ import annotations

import numpy as np

from ..core import checks, rng
from ..core.data import Dataset

STEPS = 12  # T


CHANNELS = 2  # C: the reading and the marker flag


DATA_SEED = 20260218


N_SEQUENCES = 720


SPLIT = (360, 180, 180)  # training, set aside (never used), held-out


THRESHOLD = 0.35  # the label: marker reading above this


FIRST_MARKER = 2  # the marker sits on steps 2..11


READING_SPREAD = 1.9  # readings are 1.9 * (u1 + u2 + u3 - 1.5), rounded to 3 places


def check_step(step) -> int:
    """A step index 0..11, or an error naming the range."""
    return checks.index(step, "step", STEPS)


class Sequences(Dataset):
    """Part I's sequences (section 1): a :class:`~.data.Dataset` with Part I's names.

    inputs (N, T, 2): the reading and the marker flag of every step, what the network sees;
    targets (N,): the labels; marked (N, 1): the marker step.
    """

    @property
    def readings(self) -> np.ndarray:
        """(N, T) the readings; step 0 is always 0.0."""
        return self.inputs[..., 0]

    @property
    def markers(self) -> np.ndarray:
        """(N,) the marked step of each sequence, in 2..11."""
        return self.marked[:, 0]

    @property
    def labels(self) -> np.ndarray:
        """(N,) int, 1 where the marker's reading exceeds 0.35."""
        return self.targets.astype(int)


def _sequences(readings: np.ndarray, markers: np.ndarray) -> Sequences:
    flags = (np.arange(readings.shape[1]) == markers[:, None]).astype(float)
    labels = (readings[np.arange(len(markers)), markers] > THRESHOLD).astype(float)
    return Sequences(np.stack([readings, flags], axis=-1), labels, markers[:, None])


def make_sequences(n: int = N_SEQUENCES, seed: int = DATA_SEED) -> Sequences:
    """Sequence i is drawn from the lesson's stream seeded with ``seed + i``.

    Each stream gives 35 draws: one picks a region the task never uses, 33 make the 11 readings
    after step 0 (three draws each), and the last places the marker.  Returns :class:`Sequences`
    with N = n.
    """
    n = checks.integer(n, "n", 1)
    seed = rng.check_seed(seed, "seed")
    u = rng.draws(range(seed, seed + n), 35)
    triples = u[:, 1:34].reshape(n, STEPS - 1, 3)
    raw = (triples[..., 0] + triples[..., 1] + triples[..., 2] - 1.5) * READING_SPREAD
    # Python's round() is correctly rounded; np.round can differ in the last place.
    rounded = np.array([round(x, 3) for x in raw.ravel().tolist()]).reshape(raw.shape)
    readings = np.concatenate([np.zeros((n, 1)), rounded], axis=1)
    markers = FIRST_MARKER + (u[:, 34] * (STEPS - FIRST_MARKER)).astype(int)
    return _sequences(readings, markers)


def split(data: Sequences) -> tuple[Sequences, Sequences, Sequences]:
    """The 360 / 180 / 180 split: training, set aside, held-out (the last 180)."""
    if not isinstance(data, Sequences):
        raise TypeError(f"data must be the Sequences of make_sequences, got {type(data).__name__}")
    if len(data) != sum(SPLIT):
        raise ValueError(f"expected {sum(SPLIT)} sequences to split, got {len(data)}")
    a, b = SPLIT[0], SPLIT[0] + SPLIT[1]
    return data[:a], data[a:b], data[b:]


def majority_baseline(labels: np.ndarray) -> float:
    """Accuracy of giving every sequence the most frequent label (labels (N,) of 0 and 1)."""
    labels = checks.array(labels, "labels", ndim=1)
    if labels.size == 0 or not np.all((labels == 0) | (labels == 1)):
        raise ValueError("labels must be a non-empty array of 0s and 1s")
    rate = float(np.mean(labels))
    return max(rate, 1.0 - rate)


def lesson_data(data_seed: int = DATA_SEED) -> tuple[Sequences, Sequences]:
    """Part I's 360 training and 180 held-out sequences, as (train, heldout) (sections 1 and 4)."""
    train, _, heldout = split(make_sequences(seed=checks.seed(data_seed, "data_seed", 2**64)))
    return train, heldout


def shifted_lesson_data(last_early_step: int = 6, data_seed: int = DATA_SEED):
    """Part I's data with the marker's position shifted between training and test (section 1).

    Returns (train, same, moved): the training sequences whose marker sits on a step up to
    ``last_early_step``, and the held-out sequences whose marker sits there too (same) or later
    (moved).
    """
    step = checks.integer(last_early_step, "last_early_step", FIRST_MARKER)
    if step >= STEPS - 1:
        raise ValueError(f"last_early_step must leave later steps for the test, got {step}")
    train, heldout = lesson_data(data_seed)
    early_train = train.marked[:, 0] <= step
    early_test = heldout.marked[:, 0] <= step
    return train[early_train], heldout[early_test], heldout[~early_test]
