"""One head against two on the two-pattern task (Part II, section 2): the data, the settings and
the remembered trainings."""

from __future__ import annotations

from ..core.data import Dataset
from ..core.training import Trained, trained
from ..machinery.cache import remembered
from ..models.heads import HeadsReader
from ..tasks.two_patterns import two_patterns

HEADS_EPOCHS = 800


HEADS_LEARNING_RATE = 0.01


@remembered
def heads_data() -> tuple[Dataset, Dataset]:
    """Section 6's data: 540 training and 180 held-out sequences from :func:`two_patterns` (seed
    1)."""
    data = two_patterns(720, seed=1)
    return data[:540], data[540:]


HEADS_SEED = 1  # the run whose heads split the work most clearly, shown by the explorer


def heads_run(heads: int, seed: int) -> Trained:
    """A :class:`HeadsReader` of ``heads`` heads trained from ``seed`` on :func:`heads_data`."""
    train = heads_data()[0]
    return trained(
        HeadsReader(heads), seed, train.inputs, train.targets, HEADS_EPOCHS, HEADS_LEARNING_RATE
    )


HEAD_CHOICES = {"one head": (1, 0), "two heads: head 0": (2, 0), "two heads: head 1": (2, 1)}
