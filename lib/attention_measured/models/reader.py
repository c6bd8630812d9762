"""A reader: each step's hidden state from that step alone, one attention of any flavour, a linear
readout (Part V, sections 1 and 4).  Part I's network is the reader whose encoder is linear
and whose flavour is the scaled dot product with a learned query."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.attention import step_contributions
from ..core.losses import output_loss, sigmoid
from ..core.params import Params, initialiser
from ..tasks import marked_step
from .flavours import LocalP, as_flavour, attend, attend_backward
from .protocol import Output, changes, drop_step


class Reader:
    """Each step's hidden state from that step alone, one attention, a linear readout (sections
    1, 4).

    h_t = E x_t + c (``encoder="linear"``, as in Part I) or tanh(E x_t + c); flavours that need
    a query get one learned vector q (D,) for every example; output = w · context + b, a logit
    (``loss="bce"``) or a value (``loss="mse"``).  Shapes: inputs (N, T, C), E (D, C).  It
    follows the book's model protocol (:mod:`.protocol`); local-p's weights sum to less than
    one (``weights_sum_to_one`` is False).
    """

    def __init__(
        self,
        flavour,
        channels: int = 2,
        hidden: int = 3,
        steps: int = marked_step.STEPS,
        encoder: str = "linear",
        loss: str = "bce",
    ):
        if encoder not in ("linear", "tanh"):
            raise ValueError(f"encoder must be 'linear' or 'tanh', got {encoder!r}")
        if loss not in ("bce", "mse"):
            raise ValueError(f"loss must be 'bce' or 'mse', got {loss!r}")
        self.flavour = as_flavour(flavour)
        self.channels, self.hidden = (
            checks.integer(channels, "channels", 1),
            checks.integer(hidden, "hidden", 1),
        )
        self.steps, self.encoder, self.loss = checks.integer(steps, "steps", 1), encoder, loss
        self.output_kind = "logit" if loss == "bce" else "value"
        # local-p's Gaussian scales its softmax, so that its weights sum to less than one
        self.weights_sum_to_one = not isinstance(self.flavour, LocalP)
        self.cannot = {}
        if self.flavour.sized_by_steps:
            self.cannot["delete"] = (
                f"{self.flavour.name} has a parameter for each of its {self.steps} steps, so it "
                "cannot read a sequence with a step deleted"
            )

    def __repr__(self) -> str:
        return f"Reader({self.flavour.name!r}, encoder={self.encoder!r}, loss={self.loss!r})"

    @initialiser
    def init(self, seed: int = 0) -> Params:
        rng = np.random.RandomState(checks.seed(seed))
        d = self.hidden
        p = Params(
            enc_E=rng.normal(0, 1 / np.sqrt(self.channels), (d, self.channels)), enc_c=np.zeros(d)
        )
        if self.flavour.needs_query:
            p["query"] = rng.normal(0, 1 / np.sqrt(d), d)
        p.update(self.flavour.init(rng, d, d, self.steps))
        p.update(readout=rng.normal(0, 1 / np.sqrt(d), d), bias=np.zeros(()))
        return p

    def _check(self, inputs) -> np.ndarray:
        inputs = checks.array(inputs, "inputs", copy=False)
        if inputs.ndim != 3 or inputs.shape[-1] != self.channels:
            raise ValueError(f"inputs must have shape (N, T, {self.channels}), got {inputs.shape}")
        return inputs

    def queries(self, p, n: int):
        """The learned query, one copy for each of ``n`` examples, (n, 1, D), or None for a
        flavour that needs none."""
        checks.params(p, "p", ("query",) if self.flavour.needs_query else ())
        n = checks.integer(n, "n", 1)
        return (
            np.broadcast_to(p["query"], (n, 1, self.hidden)) if self.flavour.needs_query else None
        )

    @checks.model_params
    def forward(self, p, inputs, *, keep=None, weights=None, scale=None) -> Output:
        """The reader on inputs (N, T, C): the output (N,) and the weights (N, T), with the
        hidden states ``h`` (N, T, D) and the flavour's ``attention``
        (:class:`~.flavours.Attention`, the flavour's own weights even where ``weights``
        replaced them) as parts.

        The changes: ``keep`` boolean (N, T), True for steps the attention may use (the removal
        test); ``weights`` (N, T) in place of the flavour's, the output then being readout ·
        Σ_t w_t h_t + b; ``scale`` (N, T), each step's input multiplied by it."""
        inputs = self._check(inputs)
        keep, weights, scale = changes(keep, weights, scale, inputs.shape[:2], inputs.shape[:2])
        if scale is not None:
            inputs = inputs * scale[..., None]
        h = inputs @ p["enc_E"].T + p["enc_c"]  # (N, T, D)
        if self.encoder == "tanh":
            np.tanh(h, out=h)  # h is this call's own array
        keep = None if keep is None else keep[:, None, :]
        att = attend(self.flavour, p, h, self.queries(p, len(inputs)), keep)
        parts = {"h": h, "attention": att}
        if weights is None:
            output = att.context[:, 0] @ p["readout"] + p["bias"]
            return Output(output, att.weights[:, 0], parts=parts)
        output = np.einsum("nt,ntd->nd", weights, h) @ p["readout"] + p["bias"]
        return Output(output, weights, parts=parts)

    @checks.model_params
    def contributions(self, p, inputs) -> np.ndarray:
        """What each step adds to the context, a_t h_t (Part VI, Kobayashi et al.'s α f(x)):
        (N, T, D) for inputs (N, T, C)."""
        out = self.forward(p, inputs)
        return step_contributions(out.weights[:, None, :], out.parts["h"])[:, 0]

    def without_step(self, inputs, step) -> np.ndarray:
        """inputs (N, T, C) without each sequence's step ``step`` (N,): (N, T − 1, C), Jain &
        Wallace's leave-one-out (Part VI); refused by a flavour sized by its steps."""
        if "delete" in self.cannot:
            raise ValueError(self.cannot["delete"])
        return drop_step(self._check(inputs), step)

    @checks.model_params
    def predict(self, p, inputs) -> np.ndarray:
        """P(label 1) for "bce", the value for "mse": (N,)."""
        out = self.forward(p, inputs).output
        return sigmoid(out) if self.loss == "bce" else out

    @checks.model_params
    def loss_and_grads(self, p, inputs, targets):
        inputs = self._check(inputs)
        out = self.forward(p, inputs)
        loss, g_out = output_loss(out.output, targets, self.loss)
        return loss, self.backward(p, inputs, out, g_out)

    @checks.model_params
    def backward(self, p, inputs, out: Output, grad_output, grad_weights=None) -> Params:
        """The parameters' gradients from the gradient of the output (N,) and, when a loss reads
        the attention weights too (Part VI, section 2's adversary), of the weights (N, T)."""
        inputs = self._check(inputs)
        if not isinstance(out, Output) or "attention" not in out.parts:
            raise TypeError(f"out must be the Output of forward, got {type(out).__name__}")
        g_out = checks.array(grad_output, "grad_output", shape=inputs.shape[:1], copy=False)
        if grad_weights is not None:
            grad_weights = checks.array(
                grad_weights, "grad_weights", shape=inputs.shape[:2], copy=False
            )[:, None]
        h, attention = out.parts["h"], out.parts["attention"]
        grads = Params(readout=attention.context[:, 0].T @ g_out, bias=g_out.sum())
        g_context = g_out[:, None, None] * p["readout"]
        s = self.queries(p, len(inputs))
        flavour_grads, g_h, g_s = attend_backward(
            self.flavour,
            p,
            h,
            s,
            attention,
            g_context,
            grad_weights,
        )
        grads.update(flavour_grads)
        if self.flavour.needs_query:
            grads["query"] = g_s.sum(axis=(0, 1))
        if self.encoder == "tanh":
            g_h *= 1 - h**2  # g_h is attend_backward's own array
        grads.update(enc_E=np.einsum("ntd,ntc->dc", g_h, inputs), enc_c=g_h.sum(axis=(0, 1)))
        return grads
