"""A learned query reads the steps through multi-head attention (Part II, section 2), with each
head's pieces apart (:meth:`HeadsReader.head_parts`) and the removal test one head at a time
(:meth:`HeadsReader.removal_effects`)."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.attention import (
    drop_each_step,
    multi_head_attention,
    multi_head_attention_backward,
    softmax,
    step_contributions,
)
from ..core.losses import output_loss, sigmoid
from ..core.params import Params, fan_in_normal, initialiser
from .protocol import Output, changes, drop_step


def init_attention_and_readout(rng: np.random.RandomState, d: int) -> dict[str, np.ndarray]:
    """W_Q, W_K, W_V, W_O (d, d), the readout (d,) and its bias, drawn in that order."""
    rng, d = checks.random_state(rng, "rng"), checks.integer(d, "d", 1)
    draws = {name: fan_in_normal(rng, d, d, fan_in=d) for name in ("W_Q", "W_K", "W_V", "W_O")}
    return {**draws, "readout": fan_in_normal(rng, d), "bias": np.zeros(())}


class HeadsReader:
    """A learned query reads the steps through multi-head attention (section 6).

    h_t = x_t E (E: (C, d)); one learned query u (d,); the context is multi_head_attention(u, h,
    W_Q, W_K, W_V, W_O, heads), (d,); the logit is r · context + b.  The model size does not
    depend on ``heads``: the d columns of each projection are split among the heads.  It
    follows the book's model protocol (:mod:`.protocol`); its weights are (N, H, T), one row per
    head.
    """

    output_kind = "logit"
    cannot: dict = {}

    def __init__(self, heads: int = 1, size: int = 8, channels: int = 2):
        self.heads, self.size, self.channels = (
            checks.integer(heads, "heads", 1),
            checks.integer(size, "size", 1),
            checks.integer(channels, "channels", 1),
        )
        if self.size % self.heads:
            raise ValueError(f"size {self.size} does not split into {self.heads} heads")

    @initialiser
    def init(self, seed: int = 0) -> Params:
        rng = np.random.RandomState(checks.seed(seed))
        d = self.size
        return Params(
            E=fan_in_normal(rng, self.channels, d, fan_in=self.channels),
            u=rng.normal(0, 1, d),
            **init_attention_and_readout(rng, d),
        )

    def _attention(self, p, inputs):
        inputs = checks.array(inputs, "inputs", ndim=3, copy=False)
        h = inputs @ p["E"]
        queries = np.broadcast_to(p["u"], (len(h), 1, self.size))
        kept = {}  # the heads' projections, for the backward pass
        out, weights = multi_head_attention(
            queries, h, p["W_Q"], p["W_K"], p["W_V"], p["W_O"], self.heads, kept=kept
        )
        return h, queries, out, weights, kept

    @checks.model_params
    def forward(self, p, inputs, *, keep=None, weights=None, scale=None) -> Output:
        """The reader on inputs (N, T, C), head by head (:meth:`head_parts`): the logit (N,) =
        Σ_h softmax(scores_h) · values_h · readout_h + b and the weights (N, H, T), with the
        ``scores`` (N, H, T), ``values`` (N, T, H, dh) and ``readout per head`` (H, dh) as parts.
        Training computes the same numbers through
        :func:`~.attention.multi_head_attention` (a test holds the two equal).

        The changes: ``keep`` (N, H, T) boolean, True where head h may attend to step t (the
        others renormalised); ``weights`` (N, H, T), the heads' weights replaced; ``scale``
        (N, T), each step's input multiplied by it.
        """
        inputs = checks.array(inputs, "inputs", ndim=3, copy=False)
        shape = (len(inputs), self.heads, inputs.shape[1])
        keep, weights, scale = changes(keep, weights, scale, shape, inputs.shape[:2])
        if scale is not None:
            inputs = inputs * scale[..., None]
        scores, values, readout = self.head_parts(p, inputs)
        a = softmax(scores, keep) if weights is None else weights
        logit = np.einsum("nht,nthd,hd->n", a, values, readout) + p["bias"]
        parts = {"scores": scores, "values": values, "readout per head": readout}
        return Output(logit, a, parts=parts)

    @checks.model_params
    def head_parts(self, p, inputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each head's pieces (section 6): (scores (N, H, T), values (N, T, H, dh), each head's
        share of the readout (H, dh)); the logit is Σ_h softmax(scores_h) · values_h ·
        readout_h + b."""
        h = checks.array(inputs, "inputs", ndim=3, copy=False) @ p["E"]
        H, d = self.heads, self.size
        dh = d // H
        q = (p["u"] @ p["W_Q"]).reshape(H, dh)  # (H, dh)
        k = (h @ p["W_K"]).reshape(len(h), -1, H, dh)  # (N, T, H, dh)
        v = (h @ p["W_V"]).reshape(len(h), -1, H, dh)
        scores = np.einsum("hd,nthd->nht", q, k) / np.sqrt(dh)  # (N, H, T)
        return scores, v, (p["W_O"] @ p["readout"]).reshape(H, dh)

    @checks.model_params
    def contributions(self, p, inputs) -> np.ndarray:
        """What each step adds through each head, a_{h,t} v_{t,h} W_O^h (Part VI, Kobayashi et
        al.'s α f(x), one head at a time, since each head is a row of the weights): (N, H, T,
        d) for inputs (N, T, C)."""
        inputs = checks.array(inputs, "inputs", ndim=3, copy=False)
        scores, values, _ = self.head_parts(p, inputs)
        weights, dh = softmax(scores), self.size // self.heads
        return np.concatenate(
            [
                step_contributions(
                    weights[:, h, None, :], values[:, :, h], W_O=p["W_O"][h * dh : (h + 1) * dh]
                )
                for h in range(self.heads)
            ],
            axis=1,
        )

    def without_step(self, inputs, step) -> np.ndarray:
        """inputs (N, T, C) without each sequence's step ``step`` (N,): (N, T − 1, C), gone
        from every head (Jain & Wallace's leave-one-out, Part VI)."""
        return drop_step(checks.array(inputs, "inputs", ndim=3, copy=False), step)

    @checks.model_params
    def removal_effects(self, p, inputs) -> tuple[np.ndarray, np.ndarray]:
        """Part I's removal test, one head at a time (section 6), in closed form: (p (N,),
        p_without (N, H, T)), p_without[:, h, t] the probability when step t is dropped from
        head h only and that head's other weights are renormalised, the other heads untouched.
        Equal to :func:`~attention_measured.measures.removal.removal_effects` (a test holds the
        two equal)."""
        scores, v, readout_per_head = self.head_parts(p, inputs)
        weights = softmax(scores)
        per_head = np.einsum("nht,nthd->nhd", weights, v)  # (N, H, dh)
        logit_parts = np.einsum("nhd,hd->nh", per_head, readout_per_head)  # (N, H)
        logit = logit_parts.sum(axis=1) + p["bias"]
        without = drop_each_step(scores)  # (N, H, T dropped, T)
        parts_without = np.einsum("nhst,nthd,hd->nhs", without, v, readout_per_head)  # (N, H, T)
        logit_without = logit[:, None, None] - logit_parts[:, :, None] + parts_without
        return sigmoid(logit), sigmoid(logit_without)

    @checks.model_params
    def loss_and_grads(self, p, inputs, targets):
        h, queries, out, weights, kept = self._attention(p, inputs)
        logit = out[:, 0] @ p["readout"] + p["bias"]
        loss, g_logit = output_loss(logit, targets, "bce")
        g_out = g_logit[:, None, None] * p["readout"]
        g = multi_head_attention_backward(
            queries,
            h,
            p["W_Q"],
            p["W_K"],
            p["W_V"],
            p["W_O"],
            self.heads,
            weights,
            g_out,
            kept=kept,
        )
        grads = Params(
            E=np.asarray(inputs, dtype=float).reshape(-1, self.channels).T
            @ g["grad_keys"].reshape(-1, self.size),
            u=g["grad_queries"].sum(axis=(0, 1)),
            W_Q=g["W_Q"],
            W_K=g["W_K"],
            W_V=g["W_V"],
            W_O=g["W_O"],
            readout=out[:, 0].T @ g_logit,
            bias=g_logit.sum(),
        )
        return loss, grads
