"""Part III, sections 5 to 7: self-attention measured, several heads, and order.

Built on :func:`attention_measured.attention.multi_head_attention` (its projections explicit)
and :func:`attention_measured.attention.sinusoidal_positions`.

- :func:`scaling_at_init`            section 5: why scores are divided by sqrt(d)
- :func:`two_patterns`, :class:`HeadsReader`, :func:`head_removal_effects`, :func:`heads_measures`
                                     section 6: one head against two
- :func:`order_task`, :class:`OrderReader`, :func:`order_measures`
                                     section 7: attention and the order of steps
"""

from __future__ import annotations

import numpy as np

from . import checks, lesson, measures
from .attention import (
    drop_each_step,
    multi_head_attention,
    multi_head_attention_backward,
    sinusoidal_positions,
    softmax,
)
from .cache import remembered
from .data import Dataset
from .losses import output_loss, sigmoid
from .params import Params, initialiser
from .training import Trained, trained


# ------------------------------------------------------------------ section 5
def scaling_at_init(
    sizes=(4, 16, 64, 256, 1024), steps: int = 16, trials: int = 2000, seed: int = 0
) -> dict:
    """Scores of random queries and keys at initialisation, with and without dividing by sqrt(d)
    (section 5).

    Queries and keys have independent standard normal entries, as projections of unit-variance
    inputs with variance-preserving initial weights give. For each d in ``sizes``: the variance
    of q·k (unscaled), the mean largest weight of a softmax over ``steps`` keys, and the mean
    size of the softmax's gradient, ‖∂a/∂e‖ (Frobenius norm of the Jacobian), each unscaled and
    scaled.  Returns arrays of shape (len(sizes),).
    """
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise TypeError(f"sizes must be a list of widths d, got {sizes!r}")
    sizes = [checks.integer(d, "sizes", 1) for d in sizes]
    if not sizes:
        raise ValueError("sizes must name at least one width d")
    steps, trials = checks.integer(steps, "steps", 1), checks.integer(trials, "trials", 1)
    rng = np.random.RandomState(checks.seed(seed))
    out = {
        k: []
        for k in ("variance", "max_weight", "max_weight_scaled", "gradient", "gradient_scaled")
    }
    for d in sizes:
        d = checks.integer(d, "size", 1)
        q = rng.normal(size=(trials, 1, d))
        k = rng.normal(size=(trials, steps, d))
        scores = (q @ np.swapaxes(k, 1, 2))[:, 0]  # (trials, steps)
        out["variance"].append(float(scores.var()))
        for suffix, s in (("", scores), ("_scaled", scores / np.sqrt(d))):
            a = softmax(s)
            jacobian = a[:, :, None] * (
                np.eye(steps) - a[:, None, :]
            )  # ∂a_i/∂e_j = a_i (δ_ij − a_j)
            out["max_weight" + suffix].append(float(a.max(axis=1).mean()))
            out["gradient" + suffix].append(float(np.sqrt((jacobian**2).sum(axis=(1, 2))).mean()))
    return {"sizes": np.array(sizes), **{k: np.array(v) for k, v in out.items()}}


def _fan_in_normal(rng: np.random.RandomState, *shape) -> np.ndarray:
    """Initial weights of sections 6 and 7: normal, standard deviation 1/sqrt(the first axis)."""
    return rng.normal(0, 1 / np.sqrt(shape[0]), shape)


def _attention_and_readout(rng: np.random.RandomState, d: int) -> dict[str, np.ndarray]:
    """W_q, W_k, W_v, W_o (d, d), the readout (d,) and its bias, drawn in that order."""
    draws = {name: _fan_in_normal(rng, d, d) for name in ("W_q", "W_k", "W_v", "W_o")}
    return {**draws, "readout": _fan_in_normal(rng, d), "bias": np.zeros(())}


# ------------------------------------------------------------------ section 6
LEVEL_SPREAD = 2.0


def two_patterns(n: int = 720, seed: int = 0, level_spread: float = LEVEL_SPREAD) -> Dataset:
    """Part I's sequences with a second pattern in the label (section 6).

    Every sequence has its own general level, uniform on ±level_spread/2; its twelve readings
    are that level plus 1.9·(u1 + u2 + u3 − 1.5), as in Part I, and a marker sits on one of
    steps 2 to 11.  The label is 1 when the marker's reading exceeds the mean of all twelve
    readings.  One weighted average of linear values cannot give "marker minus mean"; two can.
    """
    n = checks.integer(n, "n", 1)
    level_spread = checks.real(level_spread, "level_spread", 0.0)
    rng = np.random.RandomState(checks.seed(seed))
    level = level_spread * (rng.random_sample((n, 1)) - 0.5)
    readings = level + lesson.READING_SPREAD * (
        rng.random_sample((n, lesson.STEPS, 3)).sum(axis=-1) - 1.5
    )
    markers = rng.randint(lesson.FIRST_MARKER, lesson.STEPS, size=n)
    flags = (np.arange(lesson.STEPS) == markers[:, None]).astype(float)
    labels = (readings[np.arange(n), markers] > readings.mean(axis=1)).astype(float)
    return Dataset(np.stack([readings, flags], axis=-1), labels, markers[:, None])


class HeadsReader:
    """A learned query reads the steps through multi-head attention (section 6).

    h_t = x_t E (E: (C, d)); one learned query u (d,); the context is multi_head_attention(u, h,
    W_q, W_k, W_v, W_o, heads), (d,); the logit is r · context + b.  The model size does not
    depend on ``heads``: the d columns of each projection are split among the heads.
    """

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
            E=_fan_in_normal(rng, self.channels, d),
            u=rng.normal(0, 1, d),
            **_attention_and_readout(rng, d),
        )

    def _attention(self, p, inputs):
        inputs = checks.array(inputs, "inputs", ndim=3, copy=False)
        h = inputs @ p["E"]
        queries = np.broadcast_to(p["u"], (len(h), 1, self.size))
        kept = {}  # the heads' projections, for the backward pass
        out, weights = multi_head_attention(
            queries, h, p["W_q"], p["W_k"], p["W_v"], p["W_o"], self.heads, kept=kept
        )
        return h, queries, out, weights, kept

    @checks.model_params
    def forward(self, p, inputs, keep=None, weights=None, scale=None):
        """(logit (N,), weights (N, H, T)) on inputs (N, T, C).

        Part I's and Part V's changes, any of them: ``keep`` (N, H, T) boolean, True where head
        h may attend to step t (the others renormalised); ``weights`` (N, H, T), every head's
        weights replaced; ``scale`` (N, T), each step's input multiplied by it.  With a change,
        the logit is computed head by head from :func:`head_parts`.
        """
        if keep is None and weights is None and scale is None:
            _, _, out, own, _ = self._attention(p, inputs)
            return out[:, 0] @ p["readout"] + p["bias"], own[:, :, 0]
        inputs = checks.array(inputs, "inputs", ndim=3)
        n, steps = inputs.shape[:2]
        if scale is not None:
            inputs = inputs * checks.array(scale, "scale", shape=(n, steps))[..., None]
        scores, values, readout = head_parts(self, p, inputs)
        if keep is not None:
            keep = checks.mask(keep, "keep", scores.shape)
        a = softmax(scores, keep)
        if weights is not None:
            a = checks.array(weights, "weights", shape=scores.shape)
        return np.einsum("nht,nthd,hd->n", a, values, readout) + p["bias"], a

    @checks.model_params
    def loss_and_grads(self, p, inputs, targets):
        h, queries, out, weights, kept = self._attention(p, inputs)
        logit = out[:, 0] @ p["readout"] + p["bias"]
        loss, g_logit = output_loss(logit, np.asarray(targets, dtype=float), "bce")
        g_out = g_logit[:, None, None] * p["readout"]
        g = multi_head_attention_backward(
            queries,
            h,
            p["W_q"],
            p["W_k"],
            p["W_v"],
            p["W_o"],
            self.heads,
            weights,
            g_out,
            kept=kept,
        )
        grads = Params(
            E=np.asarray(inputs, dtype=float).reshape(-1, self.channels).T
            @ g["grad_keys"].reshape(-1, self.size),
            u=g["grad_queries"].sum(axis=(0, 1)),
            W_q=g["W_q"],
            W_k=g["W_k"],
            W_v=g["W_v"],
            W_o=g["W_o"],
            readout=out[:, 0].T @ g_logit,
            bias=g_logit.sum(),
        )
        return loss, grads


def head_parts(model: HeadsReader, p, inputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each head's pieces (section 6): (scores (N, H, T), values (N, T, H, dh), each head's
    share of the readout (H, dh)); the logit is Σ_h softmax(scores_h) · values_h · readout_h + b.
    """
    if not isinstance(model, HeadsReader):
        raise TypeError(f"model must be a HeadsReader, got {type(model).__name__}")
    checks.params(p, "p", ("E", "u", "W_q", "W_k", "W_v", "W_o", "readout", "bias"))
    h = checks.array(inputs, "inputs", ndim=3, copy=False) @ p["E"]
    H, d = model.heads, model.size
    dh = d // H
    q = (p["u"] @ p["W_q"]).reshape(H, dh)  # (H, dh)
    k = (h @ p["W_k"]).reshape(len(h), -1, H, dh)  # (N, T, H, dh)
    v = (h @ p["W_v"]).reshape(len(h), -1, H, dh)
    scores = np.einsum("hd,nthd->nht", q, k) / np.sqrt(dh)  # (N, H, T)
    return scores, v, (p["W_o"] @ p["readout"]).reshape(H, dh)


def head_removal_effects(model: HeadsReader, p, inputs) -> tuple[np.ndarray, np.ndarray]:
    """Part I's removal test, one head at a time (section 6).

    Returns (prob (N,), prob_without (N, H, T)): prob_without[:, h, t] is the output when step t
    is dropped from head h only and that head's other weights are renormalised; the other heads
    are untouched.
    """
    scores, v, readout_per_head = head_parts(model, p, inputs)
    weights = softmax(scores)
    per_head = np.einsum("nht,nthd->nhd", weights, v)  # (N, H, dh)
    logit_parts = np.einsum("nhd,hd->nh", per_head, readout_per_head)  # (N, H)
    logit = logit_parts.sum(axis=1) + p["bias"]
    without = drop_each_step(scores)  # (N, H, T dropped, T)
    parts_without = np.einsum("nhst,nthd,hd->nhs", without, v, readout_per_head)  # (N, H, T)
    logit_without = logit[:, None, None] - logit_parts[:, :, None] + parts_without
    return sigmoid(logit), sigmoid(logit_without)


def heads_measures(model: HeadsReader, p, data: Dataset) -> dict:
    """Accuracy, and per head: weight on the marker, hit rate, and agreement with the per-head
    removal test.

    The per-head values are arrays of shape (H,) (section 6).
    """
    if not isinstance(model, HeadsReader):
        raise TypeError(f"model must be a HeadsReader, got {type(model).__name__}")
    if not isinstance(data, Dataset):
        raise TypeError(f"data must be a Dataset, got {type(data).__name__}")
    logit, weights = model.forward(p, data.inputs)
    effects = measures.effects(*head_removal_effects(model, p, data.inputs))  # (N, H, T)
    marker = data.marked[:, 0]
    n = np.arange(len(data))
    return {
        "accuracy": float(np.mean((logit > 0) == (data.targets == 1))),
        "marker_weight": weights[n, :, marker].mean(axis=0),
        "marker_hit_rate": (weights.argmax(axis=2) == marker[:, None]).mean(axis=0),
        "agreement": measures.agreement(weights.swapaxes(0, 1), effects.swapaxes(0, 1)),
        "entropy": (-(weights * np.log(weights + 1e-300)).sum(axis=2)).mean(axis=0),
    }


HEADS_EPOCHS = 800
HEADS_LEARNING_RATE = 0.01


@remembered
def heads_data() -> tuple[Dataset, Dataset]:
    """Section 6's data: 540 training and 180 held-out sequences from :func:`two_patterns` (seed
    1)."""
    data = two_patterns(720, seed=1)
    return data[:540], data[540:]


HEADS_SEED = 1  # the run whose heads split the work most clearly, shown by the explorer


def heads_run(heads: int, seed: int) -> Trained:
    """A :class:`HeadsReader` of ``heads`` heads trained from ``seed`` on :func:`heads_data`."""
    train = heads_data()[0]
    return trained(
        HeadsReader(heads), seed, train.inputs, train.targets, HEADS_EPOCHS, HEADS_LEARNING_RATE
    )


HEAD_CHOICES = {"one head": (1, 0), "two heads: head 0": (2, 0), "two heads: head 1": (2, 1)}


def head_report(choice: str, example: int = 0, seed: int = HEADS_SEED) -> dict:
    """One head of the one-head or the two-head model on a held-out example of section 6.

    Returns the example's "readings", "marker", "label", "level" (mean reading), the head's
    "weights" and per-head removal "effects" (each (T,)), and "p".
    """
    checks.choice(choice, "choice", HEAD_CHOICES)
    heads, head = HEAD_CHOICES[choice]
    heldout = heads_data()[1]
    chosen = heldout[checks.index(example, "example", len(heldout))]
    model, params, _ = heads_run(heads, seed)
    _, weights = model.forward(params, chosen.inputs)
    p, without = head_removal_effects(model, params, chosen.inputs)
    readings = chosen.inputs[0, :, 0]
    return {
        "readings": readings,
        "marker": int(chosen.marked[0, 0]),
        "label": int(chosen.targets[0]),
        "level": float(readings.mean()),
        "weights": weights[0, head],
        "effects": measures.effects(p, without[:, head])[0],
        "p": float(p[0]),
    }


# ------------------------------------------------------------------ section 7
ORDER_TOKENS = ("A", "B")  # ids 0 and 1; the others are fillers


def order_task(n: int = 1000, length: int = 8, vocabulary: int = 6, seed: int = 0) -> Dataset:
    """Sequences of tokens holding one A (id 0) and one B (id 1) among fillers; label 1 when A
    comes first (section 7).

    inputs: (N, L) token ids (stored in Dataset.inputs); marked: (N, 2) the positions of A and
    B.  Without knowing positions the label is a coin flip.
    """
    n, length = checks.integer(n, "n", 1), checks.integer(length, "length", 2)
    vocabulary = checks.integer(vocabulary, "vocabulary", 3)
    rng = np.random.RandomState(checks.seed(seed))
    tokens = rng.randint(2, vocabulary, size=(n, length))
    places = np.argsort(rng.random_sample((n, length)), axis=1)[:, :2]  # two distinct positions
    tokens[np.arange(n), places[:, 0]] = 0
    tokens[np.arange(n), places[:, 1]] = 1
    return Dataset(tokens, (places[:, 0] < places[:, 1]).astype(float), places)


POSITIONS = ("none", "sinusoidal", "learned")


class OrderReader:
    """Self-attention over token embeddings, with or without positional encodings, then the mean
    (section 7).

    h_t = E[token_t] + P_t, where P is zero ("none"), :func:`sinusoidal_positions`
    ("sinusoidal", fixed) or a trained table ("learned"); z = h + one head of self-attention on
    h (a residual connection); the logit is r · mean_t z_t + b, or r · z_0 + b with
    ``pooling="first"`` (exercise 3 of section 7).
    """

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
        p = Params(E=rng.normal(0, 1, (self.vocabulary, d)), **_attention_and_readout(rng, d))
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
    def forward(self, p, tokens, use_positions: bool = True):
        """(logit (N,), weights (N, L, L), z (N, L, d)); ``use_positions=False`` removes the
        encoding.
        """
        tokens = self._check(tokens)
        use_positions = checks.flag(use_positions, "use_positions")
        h = p["E"][tokens] + (self.encoding(p) if use_positions else 0.0)
        attended, weights = multi_head_attention(h, h, p["W_q"], p["W_k"], p["W_v"], p["W_o"], 1)
        z = h + attended
        return self._pool(z) @ p["readout"] + p["bias"], weights[:, 0], z

    def _pool(self, z):
        return z.mean(axis=1) if self.pooling == "mean" else z[:, 0]

    @checks.model_params
    def loss_and_grads(self, p, tokens, targets):
        tokens = self._check(tokens)
        h = p["E"][tokens] + self.encoding(p)  # (N, L, d)
        kept = {}  # the head's projections, for the backward pass
        attended, weights = multi_head_attention(
            h, h, p["W_q"], p["W_k"], p["W_v"], p["W_o"], 1, kept=kept
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
            h, h, p["W_q"], p["W_k"], p["W_v"], p["W_o"], 1, weights, g_z, kept=kept
        )
        g_h = g_z + g["grad_queries"] + g["grad_keys"]
        g_E = np.zeros_like(p["E"])
        np.add.at(g_E, tokens.reshape(-1), g_h.reshape(-1, self.size))
        grads = Params(
            E=g_E,
            W_q=g["W_q"],
            W_k=g["W_k"],
            W_v=g["W_v"],
            W_o=g["W_o"],
            readout=pooled.T @ g_logit,
            bias=g_logit.sum(),
        )
        if self.positions == "learned":
            grads["P"] = g_h.sum(axis=0)
        return loss, grads


def order_measures(model: OrderReader, p, data: Dataset) -> dict[str, float]:
    """Accuracy with the encoding, and with it removed from the trained model; and the mean
    weight A's query puts on B (section 7)."""
    with_positions, weights, _ = model.forward(p, data.inputs)
    without = model.forward(p, data.inputs, use_positions=False)[0]
    labels = data.targets == 1
    n = np.arange(len(data))
    return {
        "accuracy": float(np.mean((with_positions > 0) == labels)),
        "accuracy_without_encoding": float(np.mean((without > 0) == labels)),
        "a_to_b": float(weights[n, data.marked[:, 0], data.marked[:, 1]].mean()),
    }


ORDER_EPOCHS = 600
ORDER_LEARNING_RATE = 0.03


@remembered
def order_data() -> tuple[Dataset, Dataset]:
    """Section 7's data: 1000 training sequences (seed 1) and 500 held-out ones (seed 2)."""
    return order_task(1000, seed=1), order_task(500, seed=2)


def order_run(positions: str, seed: int) -> Trained:
    """An :class:`OrderReader` with ``positions`` trained from ``seed`` on :func:`order_data`."""
    train = order_data()[0]
    return trained(
        OrderReader(positions), seed, train.inputs, train.targets, ORDER_EPOCHS, ORDER_LEARNING_RATE
    )


def shuffled(tokens, shuffle: int) -> np.ndarray:
    """The steps of ``tokens`` (..., L) in the order drawn by RandomState(shuffle); shuffle 0
    keeps them (section 7).
    """
    tokens = np.asarray(tokens)
    shuffle = checks.seed(shuffle, "shuffle")
    if shuffle == 0:
        return tokens
    return tokens[..., np.random.RandomState(shuffle).permutation(tokens.shape[-1])]


def order_report(example: int = 0, shuffle: int = 0, seed: int = 0) -> dict:
    """A held-out sequence of section 7, its steps shuffled, through the three order models.

    Returns "tokens" (L,) after the shuffle, "label" (A before B after the shuffle), "p"
    {positions: P(A first)} and "weights" {positions: (L, L)}.
    """
    heldout = order_data()[1]
    tokens = shuffled(heldout.inputs[checks.index(example, "example", len(heldout))], shuffle)
    a, b = int(np.flatnonzero(tokens == 0)[0]), int(np.flatnonzero(tokens == 1)[0])
    probs, maps = {}, {}
    for positions in POSITIONS:
        model, params, _ = order_run(positions, seed)
        logit, weights, _ = model.forward(params, tokens[None])
        probs[positions], maps[positions] = float(sigmoid(logit[0])), weights[0]
    return {"tokens": tokens, "label": int(a < b), "p": probs, "weights": maps}
