"""Wiegreffe and Pinter's uniform baseline: a model trained with its attention weights held at
1/T (Part VI, "Retrained with uniform weights").

:class:`Uniform` wraps any model of the book's protocol (:mod:`.protocol`) whose scores are all
products with one array of its parameters, a learned query or the question's embedding: held at
zero, that array makes every score 0, and the softmax then gives each step it may attend to the
same weight.  The wrapper sets the arrays at zero when it draws the parameters and zeroes their
gradients at every step, so that no optimiser moves them (Adam's update of a parameter whose
gradients are all 0 is exactly 0).  Everything else trains as in the model itself.
"""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.params import Params, initialiser


class Uniform:
    """``model`` with the arrays ``zeroed`` held at zero: {name: None for the whole array, or an
    index of its first axis}.  Its weights are 1/T over the steps the model may attend to
    (:meth:`check` says so, or refuses), so it is trained with uniform weights, as Wiegreffe and
    Pinter's baseline is (Part VI).  It follows the book's model protocol by passing each call
    on to ``model``."""

    def __init__(self, model, zeroed: dict):
        for method in ("init", "forward", "loss_and_grads"):
            if not callable(getattr(model, method, None)):
                raise TypeError(f"model must follow the book's protocol: it has no {method}")
        if not isinstance(zeroed, dict) or not zeroed:
            raise TypeError(f"zeroed must name the arrays to hold at zero, got {zeroed!r}")
        for name, index in zeroed.items():
            if not isinstance(name, str):
                raise TypeError(f"zeroed's keys must be parameter names, got {name!r}")
            if index is not None:
                checks.integer(index, f"zeroed[{name!r}]", 0)
        self.model, self.zeroed = model, dict(zeroed)
        self.output_kind = model.output_kind
        self.cannot = dict(getattr(model, "cannot", {}))
        self.draws = getattr(model, "draws", False)

    def __repr__(self) -> str:
        return f"Uniform({self.model!r})"

    def _zero(self, arrays: Params) -> Params:
        for name, index in self.zeroed.items():
            if name not in arrays:
                raise ValueError(f"the model has no parameter {name!r} to hold at zero")
            if index is None:
                arrays[name] = np.zeros_like(arrays[name])
            else:
                arrays[name][index] = 0.0
        return arrays

    @initialiser
    def init(self, seed) -> Params:
        """The model's parameters drawn from ``seed``, with the ``zeroed`` arrays at 0 (a nudge
        multiplies them, so they stay 0)."""
        return self._zero(self.model.init(seed))

    def forward(self, params, inputs, **changes):
        """The model's forward pass (see :mod:`.protocol`)."""
        return self.model.forward(params, inputs, **changes)

    def loss_and_grads(self, params, *data, **options):
        """The model's loss and gradients, the ``zeroed`` arrays' gradients set to 0."""
        loss, grads = self.model.loss_and_grads(params, *data, **options)
        return loss, self._zero(grads)

    def check(self, params, inputs) -> np.ndarray:
        """The weights (as the model returns them) on ``inputs``, refusing any that are not 1/T
        over the steps the model may attend to."""
        out = self.model.forward(params, inputs)
        weights = np.asarray(out.weights, dtype=float)
        allowed = (
            np.ones(weights.shape, dtype=bool)
            if out.mask is None
            else np.broadcast_to(out.mask, weights.shape)
        )
        counts = allowed.sum(axis=-1, keepdims=True)
        expected = np.where(allowed, 1.0 / np.maximum(counts, 1), 0.0)
        if not np.allclose(weights, expected, rtol=0, atol=1e-15):
            raise ValueError("the weights are not uniform: params must hold the zeroed arrays at 0")
        return weights
