"""Sukhbaatar et al.'s end-to-end memory network with hops (Part III, section 8): stored
sentences as bags of words, a question that reads them once per hop."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.attention import as_rows, softmax, softmax_backward
from ..core.losses import softmax_cross_entropy
from ..core.params import Params, initialiser
from ..tasks.stories import PLACES, SLOTS, WORDS


class MemoryNetwork:
    """Sukhbaatar et al.'s end-to-end memory network with adjacent weight tying (section 8).

    K + 1 word embeddings E_0..E_K (d, V) and slot vectors T_0..T_K (M, d) (the paper's temporal
    encoding).  Hop k (from 0) matches on m_i = E_k x_i + T_k[i] and returns c_i = E_{k+1} x_i +
    T_{k+1}[i]: the output embedding of one hop is the input embedding of the next.  The
    question enters as u_0 = E_0 q; a = softmax(u_k · m) over the used slots; u_{k+1} = u_k +
    Σ_i a_i c_i; the answer is softmax(W u_K) over the places.
    """

    def __init__(self, hops: int = 1, size: int = 20):
        self.hops, self.size = checks.integer(hops, "hops", 1), checks.integer(size, "size", 1)

    @initialiser
    def init(self, seed: int = 0) -> Params:
        rng = np.random.RandomState(checks.seed(seed))
        K, d, V = self.hops, self.size, len(WORDS)
        return Params(
            E=rng.normal(0, 0.1, (K + 1, d, V)),
            T=rng.normal(0, 0.1, (K + 1, SLOTS, d)),
            W=rng.normal(0, 0.1, (len(PLACES), d)),
        )

    @checks.model_params
    def forward(self, p, memories, questions, used, weights=None, scale=None):
        """Logits over the places (N, P), each hop's weights (K, N, M), and the intermediates
        for backward.

        ``used`` (N, M) is True where a slot holds a sentence; it is also Part I's ``keep``.
        Part V's changes: ``weights`` (K, N, M), each hop's weights replaced; ``scale`` (N, M),
        each stored sentence multiplied by it.
        """
        if scale is not None:
            memories = memories * checks.array(scale, "scale", shape=used.shape)[..., None]
        if weights is not None:
            weights = checks.array(weights, "weights", shape=(self.hops, *used.shape))
        embedded = []  # m_i or c_i = E_k x_i + T_k[i] for every hop k: (N, M, d) each
        for k in range(self.hops + 1):
            shape = memories.shape[:2] + (self.size,)
            embedded.append((as_rows(memories) @ p["E"][k].T).reshape(shape) + p["T"][k])
        u = [questions @ p["E"][0].T]  # u_0: (N, d)
        hops = []
        for k in range(self.hops):
            if weights is None:
                a = softmax(np.einsum("nd,nmd->nm", u[-1], embedded[k]), used)
            else:
                a = weights[k]
            u.append(u[-1] + np.einsum("nm,nmd->nd", a, embedded[k + 1]))
            hops.append(a)
        return u[-1] @ p["W"].T, np.array(hops), (u, embedded)

    @checks.model_params
    def loss_and_grads(self, p, data: tuple, answers):
        """data = :func:`encode`'s three arrays; mean cross-entropy over the stories and its
        gradients.
        """
        memories, questions, used = data
        answers = np.asarray(answers)
        logits, weights, (u, embedded) = self.forward(p, memories, questions, used)
        n = len(answers)
        losses, g_logits = softmax_cross_entropy(logits, answers)
        loss = float(losses.mean())
        g_logits /= n
        g_embedded = [np.zeros(e.shape) for e in embedded]
        g_u = g_logits @ p["W"]  # (N, d)
        for k in reversed(range(self.hops)):
            a = weights[k]
            # u_{k+1} = u_k + Σ a c
            g_embedded[k + 1] += a[..., None] * g_u[:, None, :]
            g_scores = softmax_backward(a, np.einsum("nmd,nd->nm", embedded[k + 1], g_u))
            # scores = u_k · m
            g_embedded[k] += g_scores[..., None] * u[k][:, None, :]
            g_u = g_u + np.einsum("nm,nmd->nd", g_scores, embedded[k])
        # E_k's gradient sums every story's and slot's outer product: one matrix product each
        g_E = np.array([as_rows(g).T @ as_rows(memories) for g in g_embedded])
        g_E[0] += g_u.T @ questions  # u_0 = E_0 q
        return loss, Params(
            E=g_E, T=np.array([g.sum(axis=0) for g in g_embedded]), W=g_logits.T @ u[-1]
        )
