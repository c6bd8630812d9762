"""Self-attention over token embeddings with or without positional encodings, then the mean
(Part II, section 3): the model that shows what attention cannot see without positions."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.attention import (
    multi_head_attention,
    multi_head_attention_backward,
    sinusoidal_positions,
)
from ..core.losses import output_loss
from ..core.params import Params, initialiser
from .heads import init_attention_and_readout
from .protocol import Output, changes

POSITIONS = ("none", "sinusoidal", "learned")


class OrderReader:
    """Self-attention over token embeddings, with or without positional encodings, then the mean
    (section 7).

    h_t = E[token_t] + P_t, where P is zero ("none"), :func:`sinusoidal_positions`
    ("sinusoidal", fixed) or a trained table ("learned"); z = h + one head of self-attention on
    h (a residual connection); the logit is r · mean_t z_t + b, or r · z_0 + b with
    ``pooling="first"`` (exercise 3 of section 7).  It follows the book's model protocol
    (:mod:`.protocol`).
    """

    output_kind = "logit"
    cannot: dict = {}

    def __init__(
        self,
        positions: str = "sinusoidal",
        vocabulary: int = 6,
        length: int = 8,
        size: int = 8,
        pooling: str = "mean",
    ):
        if positions not in POSITIONS:
            raise ValueError(f"positions must be one of {POSITIONS}, got {positions!r}")
        if pooling not in ("mean", "first"):
            raise ValueError(f"pooling must be 'mean' or 'first', got {pooling!r}")
        self.positions, self.pooling = positions, pooling
        self.vocabulary, self.length = (
            checks.integer(vocabulary, "vocabulary", 1),
            checks.integer(length, "length", 1),
        )
        self.size = checks.integer(size, "size", 1)

    @initialiser
    def init(self, seed: int = 0) -> Params:
        rng = np.random.RandomState(checks.seed(seed))
        d = self.size
        p = Params(E=rng.normal(0, 1, (self.vocabulary, d)), **init_attention_and_readout(rng, d))
        if self.positions == "learned":
            p["P"] = rng.normal(0, 1, (self.length, d))
        return p

    @checks.model_params
    def encoding(self, p) -> np.ndarray:
        if self.positions == "learned":
            return p["P"]
        if self.positions == "sinusoidal":
            return sinusoidal_positions(self.length, self.size)
        return np.zeros((self.length, self.size))

    def _check(self, tokens) -> np.ndarray:
        return checks.token_ids(tokens, "tokens", self.vocabulary, (None, self.length))

    @checks.model_params
    def forward(
        self, p, tokens, *, keep=None, weights=None, scale=None, use_positions: bool = True
    ) -> Output:
        """The reader on token ids (N, L): the logit (N,) and the head's weights (N, L, L), with
        ``z`` (N, L, d), h plus the attended values, as a part; ``use_positions=False`` removes
        the encoding from a trained model.

        The changes: ``keep`` (N, L, L) boolean, where each position may attend; ``weights``
        (N, L, L) in place of the head's; ``scale`` (N, L), each token's embedding multiplied
        by it before the encoding is added.
        """
        tokens = self._check(tokens)
        use_positions = checks.flag(use_positions, "use_positions")
        n = len(tokens)
        shape = (n, self.length, self.length)
        keep, weights, scale = changes(keep, weights, scale, shape, tokens.shape)
        embedded = p["E"][tokens]
        if scale is not None:
            embedded = embedded * scale[..., None]
        h = embedded + (self.encoding(p) if use_positions else 0.0)
        if weights is None:
            attended, a = multi_head_attention(
                h, h, p["W_Q"], p["W_K"], p["W_V"], p["W_O"], 1, keep
            )
            a = a[:, 0]
        else:  # one head: its values read with the weights given, then W_O
            attended, a = (weights @ (h @ p["W_V"])) @ p["W_O"], weights
        z = h + attended
        return Output(self._pool(z) @ p["readout"] + p["bias"], a, parts={"z": z, "h": h})

    def _pool(self, z):
        return z.mean(axis=1) if self.pooling == "mean" else z[:, 0]

    @checks.model_params
    def loss_and_grads(self, p, tokens, targets):
        tokens = self._check(tokens)
        h = p["E"][tokens] + self.encoding(p)  # (N, L, d)
        kept = {}  # the head's projections, for the backward pass
        attended, weights = multi_head_attention(
            h, h, p["W_Q"], p["W_K"], p["W_V"], p["W_O"], 1, kept=kept
        )
        pooled = self._pool(h + attended)
        logit = pooled @ p["readout"] + p["bias"]
        loss, g_logit = output_loss(logit, np.asarray(targets, dtype=float), "bce")
        g_pooled = g_logit[:, None] * p["readout"]
        if self.pooling == "mean":
            g_z = np.broadcast_to(g_pooled[:, None, :] / self.length, h.shape)  # every step's
        else:
            g_z = np.zeros(h.shape)
            g_z[:, 0] = g_pooled
        g = multi_head_attention_backward(
            h, h, p["W_Q"], p["W_K"], p["W_V"], p["W_O"], 1, weights, g_z, kept=kept
        )
        g_h = g_z + g["grad_queries"] + g["grad_keys"]
        g_E = np.zeros_like(p["E"])
        np.add.at(g_E, tokens.reshape(-1), g_h.reshape(-1, self.size))
        grads = Params(
            E=g_E,
            W_Q=g["W_Q"],
            W_K=g["W_K"],
            W_V=g["W_V"],
            W_O=g["W_O"],
            readout=pooled.T @ g_logit,
            bias=g_logit.sum(),
        )
        if self.positions == "learned":
            grads["P"] = g_h.sum(axis=0)
        return loss, grads
