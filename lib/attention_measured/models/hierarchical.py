"""Yang et al.'s hierarchical attention without its recurrent encoders (Part III, section 2): a
context vector pools each sentence's words, a second pools the sentences."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.losses import output_loss
from ..core.params import Params, initialiser
from .flavours import attend, attend_backward
from .reader import Pass


class Hierarchical:
    """Yang et al.'s two levels, without their recurrent encoders (section 2).

    Words are embedded (E: (V, D)); a word-level context vector pools each sentence's words into
    a sentence vector, a sentence-level one pools the sentences into a document vector, and w ·
    document + b is the logit.
    """

    def __init__(self, vocabulary: int = 16, hidden: int = 8, units: int = 8):
        from .flavours import ContextVector

        self.vocabulary, self.hidden = (
            checks.integer(vocabulary, "vocabulary", 1),
            checks.integer(hidden, "hidden", 1),
        )
        self.words = ContextVector(units, prefix="word_")
        self.sentences = ContextVector(units, prefix="sent_")

    @initialiser
    def init(self, seed: int = 0) -> Params:
        rng = np.random.RandomState(checks.seed(seed))
        d = self.hidden
        p = Params(embedding=rng.normal(0, 1, (self.vocabulary, d)))
        p.update(self.words.init(rng, d))
        p.update(self.sentences.init(rng, d))
        p.update(readout=rng.normal(0, 1 / np.sqrt(d), d), bias=np.zeros(()))
        return p

    @checks.model_params
    def forward(self, p, tokens, keep_sentences=None) -> Pass:
        """keep_sentences: boolean, broadcastable to (N, S), True for sentences the document
        level may use.
        """
        tokens = checks.token_ids(tokens, "tokens", self.vocabulary, (None, None, None))
        n, s, w = tokens.shape
        h_words = p["embedding"][tokens].reshape(n * s, w, self.hidden)
        words = attend(self.words, p, h_words)
        h_sentences = words.context.reshape(n, s, self.hidden)
        keep = (
            None if keep_sentences is None else np.asarray(keep_sentences, dtype=bool)[..., None, :]
        )
        sentences = attend(self.sentences, p, h_sentences, None, keep)
        return Pass(
            h_sentences,
            sentences,
            sentences.context[:, 0] @ p["readout"] + p["bias"],
            {"h_words": h_words, "words": words, "tokens": tokens},
        )

    def word_weights(self, fwd: Pass) -> np.ndarray:
        """(N, S, W): each sentence's weights over its words."""
        n, s, w = fwd.extra["tokens"].shape
        return fwd.extra["words"].weights.reshape(n, s, w)

    @checks.model_params
    def loss_and_grads(self, p, tokens, labels):
        fwd = self.forward(p, tokens)
        loss, g_out = output_loss(fwd.output, np.asarray(labels, dtype=float), "bce")
        grads = Params(readout=fwd.attention.context[:, 0].T @ g_out, bias=g_out.sum())
        g_doc = g_out[:, None, None] * p["readout"]
        sent_grads, g_sentences, _ = attend_backward(
            self.sentences, p, fwd.h, None, fwd.attention, g_doc
        )
        n, s, w = fwd.extra["tokens"].shape
        g_word_context = g_sentences.reshape(n * s, 1, self.hidden)
        word_grads, g_words, _ = attend_backward(
            self.words,
            p,
            fwd.extra["h_words"],
            None,
            fwd.extra["words"],
            g_word_context,
        )
        g_embedding = np.zeros_like(p["embedding"])
        np.add.at(g_embedding, fwd.extra["tokens"].reshape(-1), g_words.reshape(-1, self.hidden))
        grads.update(sent_grads, **word_grads, embedding=g_embedding)
        return loss, grads
