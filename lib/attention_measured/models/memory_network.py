"""Sukhbaatar et al.'s end-to-end memory network with hops (Part V, section 5): stored
sentences as bags of words, a question that reads them once per hop."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.attention import as_rows, softmax, softmax_backward, step_contributions
from ..core.losses import softmax_cross_entropy
from ..core.params import Params, initialiser
from ..tasks.stories import PLACES, SLOTS, WORDS
from .protocol import Output, changes, drop_step


class MemoryNetwork:
    """Sukhbaatar et al.'s end-to-end memory network with adjacent weight tying (section 8).

    K + 1 word embeddings E_0..E_K (d, V) and slot vectors T_0..T_K (M, d) (the paper's temporal
    encoding).  Hop k (from 0) matches on m_i = E_k x_i + T_k[i] and returns c_i = E_{k+1} x_i +
    T_{k+1}[i]: the output embedding of one hop is the input embedding of the next.  The
    question enters as u_0 = E_0 q; a = softmax(u_k · m) over the used slots; u_{k+1} = u_k +
    Σ_i a_i c_i; the answer is softmax(W u_K) over the places.  It follows the book's model
    protocol (:mod:`.protocol`); its weights are (N, K, M), one row per hop.
    """

    output_kind = "classes"
    cannot: dict = {}

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
    def forward(self, p, inputs, *, keep=None, weights=None, scale=None) -> Output:
        """The network on ``inputs`` = (memories (N, M, V), questions (N, V), used (N, M)), as
        :func:`~.stories.encode` makes them: the logits over the places (N, P) and each hop's
        weights (N, K, M); the mask is ``used``, True where a slot holds a sentence; as parts
        ``u``, the question's state before and after each hop, and ``embedded``, the memories
        embedded for each hop (what the backward pass reads).

        The changes: ``keep`` (N, K, M) boolean, the slots each hop may read beside the used
        ones; ``weights`` (N, K, M), each hop's weights replaced; ``scale`` (N, M), each stored
        sentence multiplied by it.
        """
        memories, questions, used = self._inputs(inputs)
        n, slots = used.shape
        shape = (n, self.hops, slots)
        keep, weights, scale = changes(keep, weights, scale, shape, used.shape)
        if scale is not None:
            memories = memories * scale[..., None]
        embedded = []  # m_i or c_i = E_k x_i + T_k[i] for every hop k: (N, M, d) each
        for k in range(self.hops + 1):
            shape = memories.shape[:2] + (self.size,)
            embedded.append((as_rows(memories) @ p["E"][k].T).reshape(shape) + p["T"][k])
        u = [questions @ p["E"][0].T]  # u_0: (N, d)
        hops = []
        for k in range(self.hops):
            if weights is None:
                allowed = used if keep is None else used & keep[:, k]
                a = softmax(np.einsum("nd,nmd->nm", u[-1], embedded[k]), allowed)
            else:
                a = weights[:, k]
            u.append(u[-1] + np.einsum("nm,nmd->nd", a, embedded[k + 1]))
            hops.append(a)
        parts = {"u": u, "embedded": embedded, "memories": memories}
        return Output(u[-1] @ p["W"].T, np.stack(hops, axis=1), used[:, None, :], parts=parts)

    @checks.model_params
    def contributions(self, p, inputs) -> np.ndarray:
        """What each slot adds to the state at each hop, a_{k,i} c_i (Part VI, Kobayashi et al.'s
        α f(x)): (N, K, M, d)."""
        out = self.forward(p, inputs)
        return np.stack(
            [
                step_contributions(out.weights[:, k, None, :], out.parts["embedded"][k + 1])[:, 0]
                for k in range(self.hops)
            ],
            axis=1,
        )

    def without_step(self, inputs, step) -> tuple:
        """The stories without each one's sentence ``step`` (N,), as if it had never been told
        (Jain & Wallace's leave-one-out, Part VI): the later sentences move up a slot (and take
        its slot vectors), and the last slot is left empty."""
        memories, questions, used = self._inputs(inputs)
        empty_memory = np.zeros_like(memories[:, :1])
        empty_slot = np.zeros_like(used[:, :1])
        return (
            np.concatenate([drop_step(memories, step), empty_memory], axis=1),
            questions,
            np.concatenate([drop_step(used, step), empty_slot], axis=1),
        )

    def _inputs(self, inputs) -> tuple:
        if not (isinstance(inputs, tuple) and len(inputs) == 3):
            raise TypeError(
                "inputs must be (memories, questions, used), as stories.encode makes them"
            )
        memories = checks.array(inputs[0], "memories", ndim=3, copy=False)
        questions = checks.array(inputs[1], "questions", ndim=2, copy=False)
        used = checks.mask(inputs[2], "used", memories.shape[:2])
        if questions.shape[0] != len(memories):
            raise ValueError("memories and questions must hold the same stories")
        return memories, questions, used

    @checks.model_params
    def loss_and_grads(self, p, inputs: tuple, targets):
        """``inputs`` = :func:`encode`'s three arrays, ``targets`` the answers (N,); the mean
        cross-entropy over the stories and its gradients.
        """
        memories, questions, _ = self._inputs(inputs)
        out = self.forward(p, inputs)
        logits, u, embedded = out.output, out.parts["u"], out.parts["embedded"]
        losses, g_logits = softmax_cross_entropy(logits, targets)
        n = len(losses)
        loss = float(losses.mean())
        g_logits /= n
        g_embedded = [np.zeros(e.shape) for e in embedded]
        g_u = g_logits @ p["W"]  # (N, d)
        for k in reversed(range(self.hops)):
            a = out.weights[:, k]
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
