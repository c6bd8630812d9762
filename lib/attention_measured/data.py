"""The one container for a labelled set of sequences, used by Parts I and III.

A :class:`Dataset` holds N examples: ``inputs`` (N, T, C) or token ids (N, T), ``targets`` (N,)
labels 0/1 or real values, and ``marked`` (N, k), the steps that decide each target (Part I's
marker; the two marked values of the addition problem; A and B of the order task): the cause
known by construction, against which the book tests every attention weight.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Dataset:
    """inputs (N, T, C) or (N, T); targets (N,); marked (N, k) steps. Indexing keeps the example
    axis.
    """

    inputs: np.ndarray
    targets: np.ndarray
    marked: np.ndarray

    def __post_init__(self):
        n = len(self.targets)
        if len(self.inputs) != n or len(self.marked) != n:
            raise ValueError(
                f"inputs, targets and marked must describe the same examples, got lengths "
                f"{len(self.inputs)}, {n} and {len(self.marked)}"
            )

    def __len__(self) -> int:
        return len(self.targets)

    def __getitem__(self, index):
        """A subset of the same kind: ``data[3]`` is a one-example set, ``data[:10]`` ten."""
        if isinstance(index, (bool, np.bool_)):
            raise TypeError("index a Dataset with an integer, a slice or an array of indices")
        if isinstance(index, numbers.Integral):
            if not -len(self) <= index < len(self):
                raise IndexError(f"example index {index} out of range for {len(self)} examples")
            index = slice(index, index + 1 if index != -1 else None)
        return type(self)(self.inputs[index], self.targets[index], self.marked[index])
