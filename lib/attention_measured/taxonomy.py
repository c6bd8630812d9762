"""Part III: the tasks, models, training and measures that put the flavours to work.

Tasks (generated in code, seeds explicit):

- :func:`lesson_data`, :func:`shifted_lesson_data`  Part I's marker task (sections 1 and 4)
- :func:`addition_problem`  Raffel & Ellis's two marked values (section 1)
- :func:`documents`         sentences of tokens, labelled by one trigger word (section 2)
- :func:`reversal`          copy a sequence backwards, an alignment task (section 3)

Models, each with ``init(seed)``, ``forward`` and ``loss_and_grads``:

- :class:`Reader`        hidden states from each step alone, one attention, a readout
                         (sections 1 and 4)
- :class:`Hierarchical`  word-level and sentence-level context vectors (section 2)
- :class:`Aligner`       one query per output position over the source (section 3)

:func:`attention_measured.training.trained` trains any of them with
full-batch Adam; :func:`removal_effects` and :func:`measure` are Part I's measures for any
flavour, and :func:`flavour_report` what section 4's explorer shows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import checks, lesson, measures
from .cache import remembered
from .data import Dataset
from .flavours import (
    FLAVOURS,
    Attention,
    Flavour,
    attend,
    attend_backward,
    make,
    reinforce_scores_gradient,
    sample_steps,
)
from .losses import log_softmax, output_loss, sigmoid, softmax_cross_entropy
from .params import Params, initialiser
from .training import Trained, trained


def _flavour(flavour) -> Flavour:
    if isinstance(flavour, Flavour):
        return flavour
    if not isinstance(flavour, str):
        raise TypeError(
            f"flavour must be a flavour's name or a Flavour, got {type(flavour).__name__}"
        )
    return make(checks.choice(flavour, "flavour", FLAVOURS))


# ------------------------------------------------------------------ tasks
def lesson_data(data_seed: int = lesson.DATA_SEED) -> tuple[lesson.Sequences, lesson.Sequences]:
    """Part I's 360 training and 180 held-out sequences, as (train, heldout) (sections 1 and 4)."""
    train, _, heldout = lesson.split(
        lesson.make_sequences(seed=checks.seed(data_seed, "data_seed", 2**64))
    )
    return train, heldout


def shifted_lesson_data(last_early_step: int = 6, data_seed: int = lesson.DATA_SEED):
    """Part I's data with the marker's position shifted between training and test (section 1).

    Returns (train, same, moved): the training sequences whose marker sits on a step up to
    ``last_early_step``, and the held-out sequences whose marker sits there too (same) or later
    (moved).
    """
    step = checks.integer(last_early_step, "last_early_step", lesson.FIRST_MARKER)
    if step >= lesson.STEPS - 1:
        raise ValueError(f"last_early_step must leave later steps for the test, got {step}")
    train, heldout = lesson_data(data_seed)
    early_train = train.marked[:, 0] <= step
    early_test = heldout.marked[:, 0] <= step
    return train[early_train], heldout[early_test], heldout[~early_test]


ADDITION_TOLERANCE = 0.04  # Raffel & Ellis: a sequence is solved when |error| < 0.04
CONSTANT_MSE = 1 / 24  # the variance of 0.5 + (x1 + x2)/4 with x uniform on [-1, 1]


def addition_problem(n: int = 1000, steps: int = 50, seed: int = 0) -> Dataset:
    """Hochreiter & Schmidhuber's addition problem as Raffel & Ellis set it (section 1).

    Every step holds a value uniform on [-1, 1] and a flag; two steps are flagged, one in each
    half.  The target is 0.5 + (x1 + x2) / 4.
    """
    n, steps = checks.integer(n, "n", 1), checks.integer(steps, "steps", 2)
    rng = np.random.RandomState(checks.seed(seed))
    values = rng.uniform(-1.0, 1.0, size=(n, steps))
    half = steps // 2
    marked = np.stack([rng.randint(0, half, size=n), rng.randint(half, steps, size=n)], axis=1)
    flags = np.zeros((n, steps))
    flags[np.arange(n)[:, None], marked] = 1.0
    targets = 0.5 + values[np.arange(n)[:, None], marked].sum(axis=1) / 4
    return Dataset(np.stack([values, flags], axis=-1), targets, marked)


@dataclass(frozen=True)
class Documents:
    """tokens: (N, S, W) word ids; labels: (N,) 0/1; trigger: (N, 2) the (sentence, word) of the
    trigger.
    """

    tokens: np.ndarray
    labels: np.ndarray
    trigger: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)


DOCUMENT_WORDS = ("good", "bad")  # word 0 makes a document positive, word 1 negative


def documents(
    n: int = 600, sentences: int = 4, words: int = 6, vocabulary: int = 16, seed: int = 0
) -> Documents:
    """Synthetic documents: every word a filler (ids 2..V-1) except one trigger (section 2).

    The trigger, "good" (id 0) or "bad" (id 1), sits at a random word of a random sentence and
    sets the label: 1 for "good".
    """
    n, sentences, words = (
        checks.integer(n, "n", 1),
        checks.integer(sentences, "sentences", 1),
        checks.integer(words, "words", 1),
    )
    vocabulary = checks.integer(vocabulary, "vocabulary", 3)
    rng = np.random.RandomState(checks.seed(seed))
    tokens = rng.randint(2, vocabulary, size=(n, sentences, words))
    labels = rng.randint(0, 2, size=n)
    trigger = np.stack([rng.randint(0, sentences, size=n), rng.randint(0, words, size=n)], axis=1)
    tokens[np.arange(n), trigger[:, 0], trigger[:, 1]] = 1 - labels
    return Documents(tokens, labels.astype(float), trigger)


def reversal(n: int = 500, length: int = 8, vocabulary: int = 10, seed: int = 0) -> np.ndarray:
    """Source sequences (N, L) of random token ids; the target of each is the sequence reversed
    (section 3).
    """
    n, length, vocabulary = (
        checks.integer(n, "n", 1),
        checks.integer(length, "length", 2),
        checks.integer(vocabulary, "vocabulary", 2),
    )
    return np.random.RandomState(checks.seed(seed)).randint(0, vocabulary, size=(n, length))


# ------------------------------------------------------------------ Reader
@dataclass
class Pass:
    """One forward pass of a model: hidden states, the attention (or attentions), the outputs."""

    h: np.ndarray
    attention: Attention
    output: np.ndarray
    extra: dict | None = None


class Reader:
    """Each step's hidden state from that step alone, one attention, a linear readout (sections
    1, 4).

    h_t = E x_t + c (``encoder="linear"``, as in Part I) or tanh(E x_t + c); flavours that need
    a query get one learned vector q (D,) for every example; output = w · context + b, a logit
    (``loss="bce"``) or a value (``loss="mse"``).  Shapes: inputs (N, T, C), E (D, C).
    """

    def __init__(
        self,
        flavour,
        channels: int = 2,
        hidden: int = 3,
        steps: int = lesson.STEPS,
        encoder: str = "linear",
        loss: str = "bce",
    ):
        if encoder not in ("linear", "tanh"):
            raise ValueError(f"encoder must be 'linear' or 'tanh', got {encoder!r}")
        if loss not in ("bce", "mse"):
            raise ValueError(f"loss must be 'bce' or 'mse', got {loss!r}")
        self.flavour = _flavour(flavour)
        self.channels, self.hidden = (
            checks.integer(channels, "channels", 1),
            checks.integer(hidden, "hidden", 1),
        )
        self.steps, self.encoder, self.loss = checks.integer(steps, "steps", 1), encoder, loss

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
        return (
            np.broadcast_to(p["query"], (n, 1, self.hidden)) if self.flavour.needs_query else None
        )

    @checks.model_params
    def forward(self, p, inputs, keep=None, weights=None, scale=None) -> Pass:
        """The reader on inputs (N, T, C), with Part I's and Part V's changes, any of them:
        ``keep`` boolean (N, T), True for steps the attention may use (the removal test);
        ``weights`` (N, T) in place of the flavour's, the output then being readout · Σ_t w_t h_t
        + b (``attention`` still holds the flavour's own); ``scale`` (N, T), each step's input
        multiplied by it."""
        inputs = self._check(inputs)
        if scale is not None:
            inputs = inputs * checks.array(scale, "scale", shape=inputs.shape[:2])[..., None]
        h = inputs @ p["enc_E"].T + p["enc_c"]  # (N, T, D)
        if self.encoder == "tanh":
            np.tanh(h, out=h)  # h is this call's own array
        if keep is not None:
            keep = checks.mask(keep, "keep", inputs.shape[:2])[:, None, :]
        att = attend(self.flavour, p, h, self.queries(p, len(inputs)), keep)
        if weights is None:
            return Pass(h, att, att.context[:, 0] @ p["readout"] + p["bias"])
        weights = checks.array(weights, "weights", shape=inputs.shape[:2])
        return Pass(h, att, np.einsum("nt,ntd->nd", weights, h) @ p["readout"] + p["bias"])

    @checks.model_params
    def predict(self, p, inputs) -> np.ndarray:
        """P(label 1) for "bce", the value for "mse": (N,)."""
        out = self.forward(p, inputs).output
        return sigmoid(out) if self.loss == "bce" else out

    @checks.model_params
    def loss_and_grads(self, p, inputs, targets):
        inputs = self._check(inputs)
        fwd = self.forward(p, inputs)
        loss, g_out = output_loss(fwd.output, np.asarray(targets, dtype=float), self.loss)
        return loss, self.backward(p, inputs, fwd, g_out)

    @checks.model_params
    def backward(self, p, inputs, fwd: Pass, grad_output, grad_weights=None) -> Params:
        """The parameters' gradients from the gradient of the output (N,) and, when a loss reads
        the attention weights too (Part V, section 2's adversary), of the weights (N, T)."""
        inputs = self._check(inputs)
        if not isinstance(fwd, Pass):
            raise TypeError(f"fwd must be the Pass of forward, got {type(fwd).__name__}")
        g_out = checks.array(grad_output, "grad_output", shape=inputs.shape[:1], copy=False)
        if grad_weights is not None:
            grad_weights = checks.array(
                grad_weights, "grad_weights", shape=inputs.shape[:2], copy=False
            )[:, None]
        grads = Params(readout=fwd.attention.context[:, 0].T @ g_out, bias=g_out.sum())
        g_context = g_out[:, None, None] * p["readout"]
        s = self.queries(p, len(inputs))
        flavour_grads, g_h, g_s = attend_backward(
            self.flavour,
            p,
            fwd.h,
            s,
            fwd.attention,
            g_context,
            grad_weights,
        )
        grads.update(flavour_grads)
        if self.flavour.needs_query:
            grads["query"] = g_s.sum(axis=(0, 1))
        if self.encoder == "tanh":
            g_h *= 1 - fwd.h**2  # g_h is attend_backward's own array
        grads.update(enc_E=np.einsum("ntd,ntc->dc", g_h, inputs), enc_c=g_h.sum(axis=(0, 1)))
        return grads


# ------------------------------------------------------------------ Hierarchical
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


def document_measures(model: Hierarchical, p, docs: Documents) -> dict[str, float]:
    """Section 2's measures: accuracy, weight on the trigger word within its sentence (in all
    documents, and separately where it is "good" and where it is "bad"), weight on the
    trigger's sentence, and sentence-level agreement (heaviest sentence = the one whose
    removal moves p most)."""
    fwd = model.forward(p, docs.tokens)
    n, s = np.arange(len(docs)), docs.trigger[:, 0]
    prob = sigmoid(fwd.output)
    sentence_weights = fwd.attention.weights[:, 0]
    without = np.stack(
        [
            sigmoid(model.forward(p, docs.tokens, np.arange(sentence_weights.shape[1]) != k).output)
            for k in range(sentence_weights.shape[1])
        ],
        axis=1,
    )
    effects = np.abs(without - prob[:, None])
    on_trigger = model.word_weights(fwd)[n, s, docs.trigger[:, 1]]
    return {
        "accuracy": float(np.mean((prob > 0.5) == (docs.labels == 1))),
        "trigger_word_weight": float(on_trigger.mean()),
        "good_word_weight": float(on_trigger[docs.labels == 1].mean()),
        "bad_word_weight": float(on_trigger[docs.labels == 0].mean()),
        "trigger_sentence_weight": float(sentence_weights[n, s].mean()),
        "agreement": float(np.mean(sentence_weights.argmax(1) == effects.argmax(1))),
    }


# ------------------------------------------------------------------ Aligner
class Aligner:
    """Output position i asks a learned query q_i which source step to copy (section 3).

    h_j = E[token_j] + P_j (an embedding plus a learned position vector); s_i = q_i; context_i =
    Σ_j a_ij h_j; logits_i = W_out context_i + b_out. The loss is the mean cross-entropy of the
    target tokens (the source reversed).  With ``hard=True`` the context is a single step drawn
    from the weights (the argmax at evaluation), trained with REINFORCE.
    """

    def __init__(
        self, flavour, vocabulary: int = 10, length: int = 8, hidden: int = 16, hard: bool = False
    ):
        self.flavour = _flavour(flavour)
        self.vocabulary, self.length = (
            checks.integer(vocabulary, "vocabulary", 2),
            checks.integer(length, "length", 2),
        )
        self.hidden, self.hard = checks.integer(hidden, "hidden", 1), checks.flag(hard, "hard")
        self.draws = self.hard  # hard attention draws its steps while it trains
        if self.hard and type(self.flavour).weigh is not Flavour.weigh:
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
    def forward(self, p, tokens, rng: np.random.RandomState | None = None) -> Pass:
        """With ``hard``, ``rng`` draws the attended steps; without one the heaviest step is
        taken."""
        tokens = self._check(tokens)
        n = len(tokens)
        h = p["embedding"][tokens] + p["positions"]  # (N, L, d)
        s = np.broadcast_to(p["queries"], (n, self.length, self.hidden))
        att = attend(self.flavour, p, h, s)
        extra = {"tokens": tokens, "s": s}
        if self.hard:
            chosen = (
                sample_steps(att.weights, rng) if rng is not None else att.weights.argmax(axis=-1)
            )
            att.context = np.take_along_axis(h, chosen[..., None], axis=1)
            extra["chosen"] = chosen
        logits = att.context @ p["out_W"].T + p["out_b"]  # (N, L, V)
        return Pass(h, att, logits, extra)

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
        fwd = self.forward(p, tokens, rng)
        losses, g_logits = softmax_cross_entropy(fwd.output, tokens[:, ::-1])
        count = losses.size
        g_logits /= count
        context = fwd.attention.context
        grads = Params(
            out_W=np.einsum("niv,nid->vd", g_logits, context), out_b=g_logits.sum(axis=(0, 1))
        )
        g_context = g_logits @ p["out_W"]
        s = fwd.extra["s"]
        if self.hard:
            chosen = fwd.extra["chosen"]
            g_h = np.zeros_like(fwd.h)
            np.add.at(
                g_h, (np.arange(len(tokens))[:, None], chosen), g_context
            )  # the path through h_chosen
            advantage = (losses - (losses.mean() if baseline is None else baseline)) / count
            g_scores = reinforce_scores_gradient(fwd.attention.weights, chosen, advantage)
            flavour_grads, g_h_scores, g_s = self.flavour.scores_backward(
                p, fwd.h, s, fwd.attention.score_cache, g_scores
            )
            g_h = g_h + g_h_scores
        else:
            flavour_grads, g_h, g_s = attend_backward(
                self.flavour, p, fwd.h, s, fwd.attention, g_context
            )
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
        fwd = self.forward(p, tokens)
        n, L = tokens.shape
        logits = fwd.h @ p["out_W"].T + p["out_b"]  # (N, m, V): copying step k
        targets = tokens[:, ::-1]
        loss_k = -np.take_along_axis(
            log_softmax(logits)[:, None, :, :], targets[:, :, None, None], axis=-1
        )[..., 0]
        # loss_k: (N, L, m), the loss of output i if it copied step k
        a = fwd.attention.weights
        expected = (a * loss_k).sum(axis=-1, keepdims=True)
        return a * (loss_k - expected) / (n * L), loss_k


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
    weights = model.forward(p, tokens).attention.weights
    rng = np.random.RandomState(checks.seed(seed))
    n, L = tokens.shape
    estimates = []
    for _ in range(checks.integer(draws, "draws", 2)):
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


ALIGNMENT_FLAVOURS = (
    "additive",
    "dot",
    "general",
    "concat",
    "location",
    "local-m (general)",
    "local-p (general)",
)


def alignment(model: Aligner, p, tokens) -> dict:
    """Section 3's measures on source sequences (N, L): token accuracy, the mean weight on the
    anti-diagonal (output i reading source step L-1-i, where reversal needs it) and the mean
    weight map (L, L), rows output positions, columns source steps."""
    tokens = model._check(tokens)
    weights = model.forward(p, tokens).attention.weights.mean(axis=0)
    return {
        "accuracy": model.accuracy(p, tokens),
        "anti_diagonal": float(np.diag(weights[:, ::-1]).mean()),
        "map": weights,
    }


# ------------------------------------------------------------------ measures (Part I's, for any
# flavour)
def removal_effects(model, inputs) -> tuple[np.ndarray, np.ndarray]:
    """Part I's removal test for any flavour (section 4): ``(p (N,), p_without (N, T))``.

    ``model`` is a trained Reader, as :func:`lesson_run` returns it (a Trained) or as a
    (model, params) pair; p is its output on ``inputs`` (N, T, C) (the
    probability of label 1, or the value for a regression), and p_without[:, t] the output when
    step t is dropped and the other weights are renormalised.
    """
    if isinstance(model, (str, bytes)) or not isinstance(model, tuple) or len(model) < 2:
        raise TypeError(f"model must be a trained Reader, (model, params), got {model!r}")
    reader, p = model[0], model[1]  # a Trained, or a (model, params) pair
    if not isinstance(reader, Reader):
        raise TypeError(f"model must be a trained Reader, got {type(reader).__name__}")
    inputs = reader._check(inputs)

    def output(keep):
        out = reader.forward(p, inputs, keep).output
        return sigmoid(out) if reader.loss == "bce" else out

    return measures.removal_effects(output, inputs.shape[:2])


def measure(model: Reader, p, data: Dataset) -> dict[str, float]:
    """Part I's measures on one held-out set: accuracy, weight on the marker, hit rate,
    agreement."""
    if not isinstance(model, Reader):
        raise TypeError(f"model must be a trained Reader, got {type(model).__name__}")
    if not isinstance(data, Dataset):
        raise TypeError(f"data must be a Dataset, got {type(data).__name__}")
    fwd = model.forward(p, data.inputs)
    weights = fwd.attention.weights[:, 0]  # (N, T)
    marker = data.marked[:, 0]
    prob, without = removal_effects((model, p), data.inputs)
    effects = measures.effects(prob, without)
    heaviest = weights.argmax(axis=-1)
    return {
        "accuracy": float(np.mean((prob > 0.5) == (data.targets == 1))),
        "marker_weight": float(weights[np.arange(len(data)), marker].mean()),
        "marker_hit_rate": float(np.mean(heaviest == marker)),
        "agreement": float(measures.agreement(weights, effects)),
    }


def addition_scores(model: Reader, p, data: Dataset) -> dict[str, float]:
    """The addition problem's measures (section 1): mean squared error, share solved, weight on
    the two marked steps.

    Also the correlation, over the sequences, between the weight on the two marked steps and x1
    + x2: how much the weights themselves carry the sum (NaN when the weights never vary, as
    with mean pooling).
    """
    error = model.predict(p, data.inputs) - data.targets
    weights = model.forward(p, data.inputs).attention.weights[:, 0]
    marked = np.take_along_axis(weights, data.marked, axis=1).sum(axis=1)
    total = 4 * (data.targets - 0.5)
    spread = np.std(marked)
    return {
        "mse": float(np.mean(error**2)),
        "solved": float(np.mean(np.abs(error) < ADDITION_TOLERANCE)),
        "marked_weight": float(marked.mean()),
        "weight_sum_correlation": float(np.corrcoef(marked, total)[0, 1])
        if spread > 0
        else float("nan"),
    }


# ------------------------------------------------------------------ the lesson's task, every
# flavour (section 4)
LESSON_EPOCHS = 400
LESSON_LEARNING_RATE = 0.05
SIDE_BY_SIDE = (
    "mean pooling",
    "feed-forward",
    "feed-forward, bias per position",
    "context vector",
    "additive",
    "dot",
    "general",
    "concat",
    "location",
    "local-p (general)",
)


@remembered
def train_reader(
    flavour,
    data: Dataset,
    seed: int = 0,
    epochs: int = LESSON_EPOCHS,
    learning_rate: float = LESSON_LEARNING_RATE,
    **model_options,
):
    """Build a :class:`Reader`, train it from ``seed`` on ``data``: a Trained (model, params,
    loss curve)."""
    model = Reader(
        flavour, steps=data.inputs.shape[1], channels=data.inputs.shape[2], **model_options
    )
    return trained(model, seed, data.inputs, data.targets, epochs, learning_rate)


def lesson_run(flavour: str, seed: int) -> Trained:
    """One flavour trained on Part I's 360 training sequences from ``seed``: (model, params,
    curve), remembered.
    """
    checks.choice(flavour, "flavour", SIDE_BY_SIDE)
    return train_reader(flavour, lesson_data()[0], checks.seed(seed))


@remembered
def lesson_measures(flavour: str, seed: int) -> dict[str, float]:
    """Part I's measures of :func:`lesson_run` on the 180 held-out sequences, remembered."""
    model, params, _ = lesson_run(flavour, seed)
    return measure(model, params, lesson_data()[1])


def side_by_side(flavours=SIDE_BY_SIDE, seeds=(0, 1)) -> dict[str, list[dict]]:
    """Part I's measures on the 180 held-out sequences: {flavour: [measures of each seed]}."""
    seeds = checks.seeds(seeds)
    if isinstance(flavours, str) or not all(isinstance(f, str) for f in flavours):
        raise TypeError(f"flavours must be a sequence of flavour names, got {flavours!r}")
    return {name: [lesson_measures(name, seed) for seed in seeds] for name in flavours}


FLAVOUR_EXAMPLE = 0  # the held-out example section 4's explorer shows every flavour on


def flavour_report(flavour: str, seeds=(0,), example: int = FLAVOUR_EXAMPLE) -> dict:
    """One flavour, trained from each seed, on one held-out example of Part I (Part III, section
    4).

    Returns the example's "readings", "marker" and "label", and per seed its "weights" and
    removal "effects" (each (seeds, T)), "p" (seeds,) and the held-out "measures" (dicts from
    :func:`measure`).
    """
    seeds = checks.seeds(seeds)
    heldout = lesson_data()[1]
    chosen = heldout[checks.index(example, "example", len(heldout))]
    weights, effects, probs, results = [], [], [], []
    for seed in seeds:
        model, params, _ = lesson_run(flavour, seed)
        p, p_without = removal_effects((model, params), chosen.inputs)
        weights.append(model.forward(params, chosen.inputs).attention.weights[0, 0])
        effects.append(measures.effects(p, p_without)[0])
        probs.append(float(p[0]))
        results.append(lesson_measures(flavour, seed))
    return {
        "readings": chosen.inputs[0, :, 0],
        "marker": int(chosen.marked[0, 0]),
        "label": int(chosen.targets[0]),
        "weights": np.array(weights),
        "effects": np.array(effects),
        "p": probs,
        "measures": results,
    }
