"""Order with and without positional encodings (Part II, section 3): the data, the trainings and
what they measure."""

from __future__ import annotations

import numpy as np

from ..core.data import Dataset
from ..core.training import Trained, trained
from ..machinery.cache import remembered
from ..models.order_reader import OrderReader
from ..tasks.order import order_task


def order_measures(model: OrderReader, p, data: Dataset) -> dict[str, float]:
    """Accuracy with the encoding, and with it removed from the trained model; and the mean
    weight A's query puts on B (section 7)."""
    out = model.forward(p, data.inputs)
    with_positions, weights = out.output, out.weights
    without = model.forward(p, data.inputs, use_positions=False).output
    labels = data.targets == 1
    n = np.arange(len(data))
    return {
        "accuracy": float(np.mean((with_positions > 0) == labels)),
        "accuracy_without_encoding": float(np.mean((without > 0) == labels)),
        "a_to_b": float(weights[n, data.marked[:, 0], data.marked[:, 1]].mean()),
    }


ORDER_EPOCHS = 600


ORDER_LEARNING_RATE = 0.03


@remembered
def order_data() -> tuple[Dataset, Dataset]:
    """Section 7's data: 1000 training sequences (seed 1) and 500 held-out ones (seed 2)."""
    return order_task(1000, seed=1), order_task(500, seed=2)


def order_run(positions: str, seed: int) -> Trained:
    """An :class:`OrderReader` with ``positions`` trained from ``seed`` on :func:`order_data`."""
    train = order_data()[0]
    return trained(
        OrderReader(positions), seed, train.inputs, train.targets, ORDER_EPOCHS, ORDER_LEARNING_RATE
    )
