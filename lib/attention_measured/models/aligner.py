"""One learned query per output position over the source steps: the model of the alignment task
(Part V, section 3), soft or hard (steps drawn from the weights, trained by REINFORCE), with
:func:`gradient_noise`, how noisy REINFORCE's estimate is against the exact gradient."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.losses import log_softmax, softmax_cross_entropy
from ..core.params import Params, initialiser
from .flavours import (
    as_flavour,
    attend,
    attend_backward,
    reinforce_scores_gradient,
    sample_steps,
    scores_backward,
)
from .protocol import Output, changes


class Aligner:
    """Output position i asks a learned query q_i which source step to copy (section 3).

    h_j = E[token_j] + P_j (an embedding plus a learned position vector); s_i = q_i; context_i =
    Σ_j a_ij h_j; logits_i = W_out context_i + b_out. The loss is the mean cross-entropy of the
    target tokens (the source reversed).  With ``hard=True`` the context is a single step drawn
    from the weights (the argmax at evaluation), trained with REINFORCE.  It follows the book's
    model protocol (:mod:`.protocol`).
    """

    output_kind = "tokens"
    cannot: dict = {}

    def __init__(
        self, flavour, vocabulary: int = 10, length: int = 8, hidden: int = 16, hard: bool = False
    ):
        self.flavour = as_flavour(flavour)
        self.vocabulary, self.length = (
            checks.integer(vocabulary, "vocabulary", 2),
            checks.integer(length, "length", 2),
        )
        self.hidden, self.hard = checks.integer(hidden, "hidden", 1), checks.flag(hard, "hard")
        self.draws = self.hard  # hard attention draws its steps while it trains
        self.cannot = {"weights": "hard attention reads one drawn step"} if self.hard else {}
        if self.hard and self.flavour.windowed:
            raise ValueError(
                "hard attention samples from softmax weights; choose a flavour without a window"
            )

    @initialiser
    def init(self, seed: int = 0) -> Params:
        rng = np.random.RandomState(checks.seed(seed))
        d, L = self.hidden, self.length
        p = Params(
            embedding=rng.normal(0, 1, (self.vocabulary, d)),
            positions=rng.normal(0, 1, (L, d)),
            queries=rng.normal(0, 1, (L, d)),
        )
        p.update(self.flavour.init(rng, d, d, L))
        p.update(
            out_W=rng.normal(0, 1 / np.sqrt(d), (self.vocabulary, d)),
            out_b=np.zeros(self.vocabulary),
        )
        return p

    def _check(self, tokens) -> np.ndarray:
        return checks.token_ids(tokens, "tokens", self.vocabulary, (None, self.length))

    @checks.model_params
    def forward(self, p, tokens, *, keep=None, weights=None, scale=None, rng=None) -> Output:
        """The aligner on source sequences (N, L): the logits (N, L, V) of every output
        position and the weights (N, L, L), rows output positions, columns source steps; as
        parts the states ``h`` (N, L, d), the queries ``s``, the flavour's ``attention`` and,
        for hard attention, the ``chosen`` steps (N, L).

        With ``hard``, ``rng`` draws the attended steps; without one the heaviest step is taken.
        The changes: ``keep`` (N, L, L) boolean, the source steps each output may read;
        ``weights`` (N, L, L) in place of the flavour's (soft attention only); ``scale`` (N, L),
        each source token's embedding multiplied by it.
        """
        tokens = self._check(tokens)
        if rng is not None:
            rng = checks.random_state(rng, "rng")
        n = len(tokens)
        shape = (n, self.length, self.length)
        keep, weights, scale = changes(keep, weights, scale, shape, tokens.shape, self.cannot)
        embedded = p["embedding"][tokens]
        if scale is not None:
            embedded = embedded * scale[..., None]
        h = embedded + p["positions"]  # (N, L, d)
        s = np.broadcast_to(p["queries"], (n, self.length, self.hidden))
        att = attend(self.flavour, p, h, s, keep)
        parts = {"h": h, "attention": att, "s": s, "tokens": tokens}
        own = att.weights
        if self.hard:
            chosen = (
                sample_steps(att.weights, rng) if rng is not None else att.weights.argmax(axis=-1)
            )
            att.context = np.take_along_axis(h, chosen[..., None], axis=1)
            parts["chosen"] = chosen
        context = att.context
        if weights is not None:
            context, own = weights @ h, weights
        logits = context @ p["out_W"].T + p["out_b"]  # (N, L, V)
        return Output(logits, own, parts=parts)

    @checks.model_params
    def accuracy(self, p, tokens) -> float:
        """Share of output tokens right (the heaviest step for hard attention)."""
        tokens = self._check(tokens)
        return float(np.mean(self.forward(p, tokens).output.argmax(axis=-1) == tokens[:, ::-1]))

    def loss_and_grads(
        self, p, tokens, rng: np.random.RandomState | None = None, baseline: float | None = None
    ):
        """Mean cross-entropy and its gradients; with ``hard``, REINFORCE for the scores.

        For hard attention ``rng`` is required; ``baseline`` (default: this batch's mean loss)
        is subtracted from each token's loss.
        """
        tokens = self._check(tokens)
        if self.hard and rng is None:
            raise ValueError("hard attention needs an rng to draw the attended steps")
        if rng is not None:
            checks.random_state(rng)
        if baseline is not None:
            baseline = checks.real(baseline, "baseline")
        out = self.forward(p, tokens, rng=rng)
        h, attention, s = out.parts["h"], out.parts["attention"], out.parts["s"]
        losses, g_logits = softmax_cross_entropy(out.output, tokens[:, ::-1])
        count = losses.size
        g_logits /= count
        context = attention.context
        grads = Params(
            out_W=np.einsum("niv,nid->vd", g_logits, context), out_b=g_logits.sum(axis=(0, 1))
        )
        g_context = g_logits @ p["out_W"]
        if self.hard:
            chosen = out.parts["chosen"]
            g_h = np.zeros_like(h)
            np.add.at(
                g_h, (np.arange(len(tokens))[:, None], chosen), g_context
            )  # the path through h_chosen
            advantage = (losses - (losses.mean() if baseline is None else baseline)) / count
            g_scores = reinforce_scores_gradient(attention.weights, chosen, advantage)
            flavour_grads, g_h_scores, g_s = scores_backward(
                self.flavour, p, h, s, attention, g_scores
            )
            g_h = g_h + g_h_scores
        else:
            flavour_grads, g_h, g_s = attend_backward(self.flavour, p, h, s, attention, g_context)
        grads.update(flavour_grads)
        grads["queries"] = g_s.sum(axis=0) if g_s is not None else np.zeros_like(p["queries"])
        g_embedding = np.zeros_like(p["embedding"])
        np.add.at(g_embedding, tokens.reshape(-1), g_h.reshape(-1, self.hidden))
        grads.update(embedding=g_embedding, positions=g_h.sum(axis=0))
        return float(losses.mean()), grads

    @checks.model_params
    def expected_loss_gradient(self, p, tokens) -> np.ndarray:
        """The exact gradient of the expected loss with respect to the scores, for hard
        attention: (N, L, L).

        E[loss] = Σ_k a_k loss(h_k), so its gradient is a_k (loss_k − Σ_j a_j loss_j);
        :func:`gradient_noise` compares REINFORCE's single draws with it.
        """
        tokens = self._check(tokens)
        out = self.forward(p, tokens)
        n, L = tokens.shape
        logits = out.parts["h"] @ p["out_W"].T + p["out_b"]  # (N, m, V): copying step k
        targets = tokens[:, ::-1]
        loss_k = -np.take_along_axis(
            log_softmax(logits)[:, None, :, :], targets[:, :, None, None], axis=-1
        )[..., 0]
        # loss_k: (N, L, m), the loss of output i if it copied step k
        a = out.weights
        expected = (a * loss_k).sum(axis=-1, keepdims=True)
        return a * (loss_k - expected) / (n * L), loss_k


MAX_DRAWS = 100_000  # gradient_noise's most draws (the book takes 200 and 400)


def gradient_noise(model: Aligner, p, tokens, draws: int = 200, seed: int = 0) -> dict:
    """How noisy REINFORCE's gradient of the scores is, against the exact one (section 3).

    Draws the hard steps ``draws`` times on the same batch and returns the exact gradient's
    norm, the mean REINFORCE estimate's distance from it (relative), and the relative variance
    of a single draw: E‖g − g_exact‖² / ‖g_exact‖².
    """
    if not isinstance(model, Aligner):
        raise TypeError(f"model must be an Aligner built with hard=True, got {model!r}")
    if not model.hard:
        raise ValueError("gradient_noise measures hard attention; build the Aligner with hard=True")
    tokens = model._check(tokens)
    exact, loss_k = model.expected_loss_gradient(p, tokens)
    weights = model.forward(p, tokens).weights
    rng = np.random.RandomState(checks.seed(seed))
    n, L = tokens.shape
    estimates = []
    for _ in range(checks.integer(draws, "draws", 2, MAX_DRAWS)):
        chosen = sample_steps(weights, rng)
        losses = np.take_along_axis(loss_k, chosen[..., None], axis=-1)[..., 0]
        estimates.append(
            reinforce_scores_gradient(weights, chosen, (losses - losses.mean()) / (n * L))
        )
    estimates = np.array(estimates)
    norm2 = float((exact**2).sum())
    return {
        "exact_norm": float(np.sqrt(norm2)),
        "bias": float(np.sqrt(((estimates.mean(axis=0) - exact) ** 2).sum() / norm2)),
        "relative_variance": float(((estimates - exact) ** 2).sum(axis=(1, 2, 3)).mean() / norm2),
    }
