"""Yang et al.'s hierarchical attention without its recurrent encoders (Part V, section 2): a
context vector pools each sentence's words, a second pools the sentences."""

from __future__ import annotations

import numpy as np

from ..core import checks
from ..core.losses import output_loss
from ..core.params import Params, initialiser
from .flavours import attend, attend_backward
from .protocol import Output, changes


class Hierarchical:
    """Yang et al.'s two levels, without their recurrent encoders (section 2).

    Words are embedded (E: (V, D)); a word-level context vector pools each sentence's words into
    a sentence vector, a sentence-level one pools the sentences into a document vector, and w ·
    document + b is the logit.  It follows the book's model protocol (:mod:`.protocol`).
    """

    output_kind = "logit"
    cannot: dict = {}

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
    def forward(self, p, tokens, *, keep=None, weights=None, scale=None) -> Output:
        """The model on documents of token ids (N, S, W): the logit (N,) and the sentence-level
        weights (N, S), with as parts each sentence's ``word weights`` (N, S, W), the sentence
        vectors ``h`` (N, S, D), and what the backward pass reads.

        The changes reach the sentence level: ``keep`` boolean (N, S), the sentences the
        document may use; ``weights`` (N, S) in place of its own; ``scale`` (N, S), every word
        of a sentence multiplied by it.
        """
        tokens = checks.token_ids(tokens, "tokens", self.vocabulary, (None, None, None))
        n, s, w = tokens.shape
        keep, weights, scale = changes(keep, weights, scale, (n, s), (n, s))
        h_words = p["embedding"][tokens]
        if scale is not None:
            h_words = h_words * scale[..., None, None]
        h_words = h_words.reshape(n * s, w, self.hidden)
        words = attend(self.words, p, h_words)
        h_sentences = words.context.reshape(n, s, self.hidden)
        keep = None if keep is None else keep[..., None, :]
        sentences = attend(self.sentences, p, h_sentences, None, keep)
        document = sentences.context[:, 0]
        own = sentences.weights[:, 0]
        if weights is not None:
            document, own = np.einsum("ns,nsd->nd", weights, h_sentences), weights
        parts = {
            "word weights": words.weights.reshape(n, s, w),
            "h": h_sentences,
            "sentences": sentences,
            "h_words": h_words,
            "words": words,
            "tokens": tokens,
        }
        return Output(document @ p["readout"] + p["bias"], own, parts=parts)

    @checks.model_params
    def loss_and_grads(self, p, tokens, targets):
        out = self.forward(p, tokens)
        parts = out.parts
        loss, g_out = output_loss(out.output, targets, "bce")
        grads = Params(readout=parts["sentences"].context[:, 0].T @ g_out, bias=g_out.sum())
        g_doc = g_out[:, None, None] * p["readout"]
        sent_grads, g_sentences, _ = attend_backward(
            self.sentences, p, parts["h"], None, parts["sentences"], g_doc
        )
        n, s, w = parts["tokens"].shape
        g_word_context = g_sentences.reshape(n * s, 1, self.hidden)
        word_grads, g_words, _ = attend_backward(
            self.words,
            p,
            parts["h_words"],
            None,
            parts["words"],
            g_word_context,
        )
        g_embedding = np.zeros_like(p["embedding"])
        np.add.at(g_embedding, parts["tokens"].reshape(-1), g_words.reshape(-1, self.hidden))
        grads.update(sent_grads, **word_grads, embedding=g_embedding)
        return loss, grads
