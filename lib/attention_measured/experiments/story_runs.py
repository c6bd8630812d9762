"""Memory networks of one to three hops on stories of one and two facts (Part V, section 5): the
data, the trainings and what each hop looks at."""

from __future__ import annotations

import numpy as np

from ..core.training import Trained, trained
from ..machinery.cache import remembered
from ..models.memory_network import MemoryNetwork
from ..tasks.stories import Stories, encode, stories


def hop_measures(model: MemoryNetwork, p, data: Stories) -> dict:
    """Accuracy, and for each hop the share of stories whose heaviest slot is the first or the
    second supporting fact: arrays (K,) under "on_first" and "on_second" (section 8)."""
    out = model.forward(p, encode(data))
    logits = out.output
    heaviest = out.weights.argmax(axis=2).T  # (K, N)
    return {
        "accuracy": float(np.mean(logits.argmax(axis=1) == data.answers)),
        "on_first": (heaviest == data.facts[:, 0]).mean(axis=1),
        "on_second": (heaviest == data.facts[:, 1]).mean(axis=1),
    }


MEMORY_EPOCHS = 400


MEMORY_LEARNING_RATE = 0.02


@remembered
def memory_data(facts: int) -> tuple[Stories, Stories]:
    """Section 8's data for one task: 1000 training stories (seed 1) and 500 test stories (seed
    2)."""
    return stories(1000, facts, seed=1), stories(500, facts, seed=2)


def memory_run(facts: int, hops: int, seed: int) -> Trained:
    """A :class:`MemoryNetwork` with ``hops`` hops trained from ``seed`` on :func:`memory_data`:
    a Trained (model, params, curve).
    """
    train = memory_data(facts)[0]
    return trained(
        MemoryNetwork(hops), seed, encode(train), train.answers, MEMORY_EPOCHS, MEMORY_LEARNING_RATE
    )
