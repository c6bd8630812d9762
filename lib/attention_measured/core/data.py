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


def _numbers(value, name: str) -> np.ndarray:
    """``value`` as an array of numbers with an example axis, kept in its own kind (token ids
    stay integers): no strings, no booleans, no NaN."""
    out = np.asarray(value)
    if out.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of numbers, got dtype {out.dtype}")
    if out.ndim < 1:
        raise ValueError(f"{name} must have an example axis, got a single number")
    if out.dtype.kind == "f" and not np.isfinite(out).all():
        raise ValueError(f"{name} must hold finite numbers (no NaN or infinity)")
    return out


@dataclass(frozen=True)
class Dataset:
    """inputs (N, T, C) or (N, T); targets (N,); marked (N, k) steps. Indexing keeps the example
    axis.
    """

    inputs: np.ndarray
    targets: np.ndarray
    marked: np.ndarray

    def __post_init__(self):
        for name in ("inputs", "targets", "marked"):
            object.__setattr__(self, name, _numbers(getattr(self, name), name))
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
