"""A small decoder-only Transformer that predicts the next token, by hand (Part VII).

Tokens (N, L) become vectors x = E[tokens] (+ a position vector, for learned or sinusoidal
positions); each of ``layers`` layers adds causal multi-head self-attention to x, and, with
``mlp``, a feed-forward block; with ``norm``, each block reads x through a LayerNorm first
(pre-norm, as GPT-2) and a last LayerNorm precedes the unembedding U, which gives every
position's logits over the vocabulary for the next token.  Training scores every position at
once: the causal mask lets position t read positions up to t only, so the one pass makes L − 1
predictions, none of which can see its own answer.

Head h of a layer: q, k, v = x W_Q, x W_K, x W_V split into H blocks of width d = E / H; the
scores q_t · k_s / sqrt(d) for s ≤ t, with the positions of :data:`POSITIONS`:

- ``"none"``: the causal mask alone;
- ``"learned"``: a learned vector added to x at each position;
- ``"sinusoidal"``: Vaswani et al.'s fixed vectors added to x (Part II, order);
- ``"rotary"``: q and k turned by an angle proportional to the position (RoPE, Su et al.),
  so that q_t · k_s depends on the positions only through t − s (:func:`rotate`);
- ``"alibi"``: no position vector; −m_h (t − s) added to the score (Press et al.'s ALiBi), with
  a slope m_h for each head (:func:`alibi_slopes`).

With ``kv_heads`` = G below H, the heads share keys and values: W_K and W_V have G blocks of
width d, and query head h reads block h // (H / G) (grouped-query attention; G = 1 is
multi-query attention), which divides the key-value cache by H / G.  With ``window`` = w, query
t reads only the keys s with t − w < s ≤ t (a sliding window).

With ``null_key``, each head's softmax has one more logit, fixed at 0, whose weight goes nowhere
(a key with a zero value): a head may then give little weight to every position, the remedy
for attention sinks measured in Part VII.  The heads' outputs are joined and multiplied by W_O.
``ablate`` in :meth:`LanguageModel.forward` zeroes chosen heads' outputs (the removal test of
Part VII).  :meth:`LanguageModel.next_logits` decodes one position at a time through a
key-value cache, and :meth:`LanguageModel.generate` samples with a temperature and top-k.
Shapes: N sequences, L positions, V tokens, E the width, H heads, F the feed-forward width.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from ..core import checks
from ..core.attention import (
    causal_mask,
    merge_heads,
    sinusoidal_positions,
    softmax,
    softmax_backward,
    split_heads,
)
from ..core.losses import softmax_cross_entropy
from ..core.params import Params, initialiser
from .protocol import Output, changes
from .transformer import layer_norm_and_parts, layer_norm_backward

POSITIONS = ("none", "learned", "sinusoidal", "rotary", "alibi")

ROTARY_BASE = 10000.0  # RoPE's base, as in Su et al. and most models since


def alibi_slopes(heads: int) -> np.ndarray:
    """The ALiBi slope of each head (H,): 4^−(h+1), so 1/4 and 1/16 for two heads.  Press et
    al.'s are 2^−8(h+1)/H, 1/16 and 1/256 for two heads, too gentle for this book's short
    sequences: with them the two-head model never learned to copy (Part VII)."""
    heads = checks.integer(heads, "heads", 1)
    return 4.0 ** -(np.arange(heads) + 1.0)


def rotate(x, positions, base: float = ROTARY_BASE) -> np.ndarray:
    """RoPE: x (..., L, d) with each pair of columns (2i, 2i + 1) turned by the angle
    position · base^(−2i/d), positions (L,) (Part VII, positions).  Turning q by t and k by s
    leaves q · k a function of t − s alone.  A negative position turns back (the backward pass
    is the turn by −position)."""
    if not checks.trusting():  # inside train's loop, the first step checked what the rest get
        x = checks.array(x, "x", copy=False)
        if x.ndim < 2 or x.shape[-1] % 2:
            raise ValueError(f"x must be (..., L, d) with d even, got {x.shape}")
        positions = checks.array(positions, "positions", shape=(x.shape[-2],), copy=False)
        base = checks.real(base, "base", positive=True)
    cos, sin = _turns(np.asarray(positions, dtype=float).tobytes(), x.shape[-1], base)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty(x.shape)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


@functools.lru_cache(maxsize=64)
def _turns(positions: bytes, d: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """The cosines and sines of :func:`rotate`'s angles (L, d/2), computed once for each set of
    positions (a training step turns the same 0 … L − 1 four times a layer)."""
    angles = np.frombuffer(positions)[:, None] * base ** (-np.arange(0, d, 2) / d)
    cos, sin = np.cos(angles), np.sin(angles)
    cos.flags.writeable = sin.flags.writeable = False  # shared by every later call
    return cos, sin


class LanguageModel:
    """The next-token model of the module docstring under the book's model protocol
    (:mod:`.protocol`) (Part VII).  ``forward`` returns the logits (N, L, V) and, as weights,
    the last layer's attention averaged over its heads (N, L, L); its parts hold every layer's
    weights by head (N, H, L, L).  ``loss_and_grads(params, tokens)`` is the mean cross-entropy
    of the L − 1 predictions of every sequence and its gradients."""

    output_kind = "tokens"

    def __init__(
        self,
        vocabulary: int = 32,
        context: int = 32,
        width: int = 32,
        heads: int = 2,
        layers: int = 2,
        positions: str = "rotary",
        mlp: bool = False,
        norm: bool = False,
        feed_forward: int = 128,
        null_key: bool = False,
        kv_heads=None,
        window=None,
    ):
        self.vocabulary = checks.integer(vocabulary, "vocabulary", 2)
        self.context = checks.integer(context, "context", 2)
        self.width = checks.integer(width, "width", 2)
        self.heads = checks.integer(heads, "heads", 1)
        if self.width % self.heads or (self.width // self.heads) % 2:
            raise ValueError(
                f"width {self.width} must split into {self.heads} heads of an even width"
            )
        self.layers = checks.integer(layers, "layers", 1)
        self.positions = checks.choice(positions, "positions", POSITIONS)
        self.mlp, self.norm = checks.flag(mlp, "mlp"), checks.flag(norm, "norm")
        self.feed_forward = checks.integer(feed_forward, "feed_forward", 1)
        self.null_key = checks.flag(null_key, "null_key")
        self.kv_heads = self.heads if kv_heads is None else checks.integer(kv_heads, "kv_heads", 1)
        if self.heads % self.kv_heads:
            raise ValueError(
                f"kv_heads must divide the {self.heads} heads into equal groups, got {kv_heads}"
            )
        self.window = None if window is None else checks.integer(window, "window", 1)
        self.cannot = {
            change: "Part VII's language model takes its own removal test (ablate), not Part "
            "VI's changes"
            for change in ("keep", "weights", "scale")
        }

    def __repr__(self) -> str:
        return (
            f"LanguageModel(layers={self.layers}, heads={self.heads}, width={self.width}, "
            f"positions={self.positions!r}, mlp={self.mlp}, norm={self.norm}, "
            f"null_key={self.null_key}, kv_heads={self.kv_heads}, window={self.window})"
        )

    @initialiser
    def init(self, seed: int = 0) -> Params:
        """Parameters drawn from ``seed``: E (V, E) and, for learned positions, P (context, E)
        standard normal; every matrix normal with variance 1 / its input width; biases 0,
        LayerNorms 1 and 0."""
        rng = np.random.RandomState(checks.seed(seed))
        E, F, V = self.width, self.feed_forward, self.vocabulary
        p = Params(embed=rng.normal(0.0, 1.0, (V, E)))
        if self.positions == "learned":
            p["positions"] = rng.normal(0.0, 1.0, (self.context, E))
        for i in range(self.layers):
            shared = self.kv_heads * (E // self.heads)  # the columns of W_K and W_V
            for name in ("W_Q", "W_K", "W_V", "W_O"):
                width = shared if name in ("W_K", "W_V") else E
                p[f"{i}.{name}"] = rng.normal(0.0, 1.0 / np.sqrt(E), (E, width))
            if self.mlp:
                p[f"{i}.W_1"] = rng.normal(0.0, 1.0 / np.sqrt(E), (E, F))
                p[f"{i}.b_1"] = np.zeros(F)
                p[f"{i}.W_2"] = rng.normal(0.0, 1.0 / np.sqrt(F), (F, E))
                p[f"{i}.b_2"] = np.zeros(E)
            if self.norm:
                for block in ("attention", "mlp") if self.mlp else ("attention",):
                    p[f"{i}.norm_{block}.weight"] = np.ones(E)
                    p[f"{i}.norm_{block}.bias"] = np.zeros(E)
        if self.norm:
            p["norm.weight"], p["norm.bias"] = np.ones(E), np.zeros(E)
        p["unembed"] = rng.normal(0.0, 1.0 / np.sqrt(E), (E, V))
        return p

    # ---------------------------------------------------------------- forward
    def _tokens(self, tokens) -> np.ndarray:
        tokens = checks.token_ids(tokens, "tokens", self.vocabulary, (None, None))
        if not 1 <= tokens.shape[1] <= self.context:
            raise ValueError(
                f"tokens must hold sequences of 1 to {self.context} tokens (the model's context), "
                f"got {tokens.shape[1]}"
            )
        return tokens

    def _ablated(self, ablate) -> set:
        if ablate is None:
            return set()
        out = set()
        for pair in ablate:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise TypeError(f"ablate must hold (layer, head) pairs, got {pair!r}")
            out.add(
                (
                    checks.index(pair[0], "ablate's layer", self.layers),
                    checks.index(pair[1], "ablate's head", self.heads),
                )
            )
        return out

    def _attend(self, p, i: int, z, ablated: set):
        """Layer i's attention on z (N, L, E): (output (N, L, E), weights (N, H, L, L), back)."""
        L, H, G = z.shape[1], self.heads, self.kv_heads
        d = self.width // H
        q = split_heads(z @ p[f"{i}.W_Q"], H)
        k, v = (split_heads(z @ p[f"{i}.{n}"], G) for n in ("W_K", "W_V"))  # (N, G, L, d)
        where = np.arange(L, dtype=float)
        if self.positions == "rotary":
            q, k = rotate(q, where), rotate(k, where)
        shared_k, shared_v = _shared(k, H), _shared(v, H)  # each query head's block, (N, H, L, d)
        scores = q @ np.swapaxes(shared_k, -1, -2) / np.sqrt(d)  # (N, H, L, L)
        if self.positions == "alibi":
            distance = where[:, None] - where[None, :]  # t − s
            scores = scores - alibi_slopes(H)[:, None, None] * distance
        weights = self._attention_weights(scores, self.allowed(L))
        heads_out = weights @ shared_v  # (N, H, L, d)
        kept = np.ones(H)
        for layer, head in ablated:
            if layer == i:
                kept[head] = 0.0
        if not kept.all():
            heads_out = heads_out * kept[:, None, None]
        merged = merge_heads(heads_out)  # (N, L, E)
        out = merged @ p[f"{i}.W_O"]

        def back(grad_out):
            grads = {f"{i}.W_O": _rows(merged).T @ _rows(grad_out)}
            g_heads = split_heads(grad_out @ p[f"{i}.W_O"].T, H)
            if not kept.all():
                g_heads = g_heads * kept[:, None, None]
            g_weights = g_heads @ np.swapaxes(shared_v, -1, -2)
            g_v = _unshared(np.swapaxes(weights, -1, -2) @ g_heads, G)
            g_scores = softmax_backward(weights, g_weights) / np.sqrt(d)
            g_q = g_scores @ shared_k
            g_k = _unshared(np.swapaxes(g_scores, -1, -2) @ q, G)
            if self.positions == "rotary":
                g_q, g_k = rotate(g_q, -where), rotate(g_k, -where)
            g_z = 0.0
            for name, g in (("W_Q", g_q), ("W_K", g_k), ("W_V", g_v)):
                g = merge_heads(g)
                grads[f"{i}.{name}"] = _rows(z).T @ _rows(g)
                g_z = g_z + g @ p[f"{i}.{name}"].T
            return grads, g_z

        return out, weights, back

    def allowed(self, length: int) -> np.ndarray:
        """(length, length) True where query t may read key s: s ≤ t, and with a ``window``
        w, t − w < s (Part VII, the costs of decoding)."""
        allowed = causal_mask(checks.integer(length, "length", 1))
        if self.window is not None:
            t = np.arange(length)
            allowed = allowed & (t[:, None] - t[None, :] < self.window)
        return allowed

    def _attention_weights(self, scores, mask) -> np.ndarray:
        """The weights over the last axis; with ``null_key``, the softmax over the scores and
        one more logit of 0, that extra weight dropped (so the weights sum to less than 1).
        Its backward pass is softmax_backward's: w_i (g_i − Σ_j w_j g_j) holds for both."""
        if not self.null_key:
            return softmax(scores, mask)
        mask = np.broadcast_to(mask, scores.shape)
        padded = np.concatenate([scores, np.zeros(scores.shape[:-1] + (1,))], axis=-1)
        allowed = np.concatenate([mask, np.ones(mask.shape[:-1] + (1,), dtype=bool)], axis=-1)
        return softmax(padded, allowed)[..., :-1]

    def _feed_forward(self, p, i: int, z):
        pre = z @ p[f"{i}.W_1"] + p[f"{i}.b_1"]
        hidden = np.maximum(pre, 0.0)
        out = hidden @ p[f"{i}.W_2"] + p[f"{i}.b_2"]

        def back(grad_out):
            g_pre = (grad_out @ p[f"{i}.W_2"].T) * (pre > 0)
            grads = {
                f"{i}.W_2": _rows(hidden).T @ _rows(grad_out),
                f"{i}.b_2": _rows(grad_out).sum(axis=0),
                f"{i}.W_1": _rows(z).T @ _rows(g_pre),
                f"{i}.b_1": _rows(g_pre).sum(axis=0),
            }
            return grads, g_pre @ p[f"{i}.W_1"].T

        return out, back

    def _block(self, p, name: str, x, inner):
        """x + inner(LN(x)) with ``norm``, x + inner(x) without: (y, back)."""
        if not self.norm:
            out, inner_back = inner(x)

            def back(grad_y):
                grads, g_x = inner_back(grad_y)
                return grads, grad_y + g_x

            return x + out, back
        ln = {"weight": p[name + ".weight"], "bias": p[name + ".bias"]}
        z, parts = layer_norm_and_parts(ln, x)
        out, inner_back = inner(z)

        def back(grad_y):
            grads, g_z = inner_back(grad_y)
            norm_grads, g_x = layer_norm_backward(ln, x, g_z, parts=parts)
            grads.update({f"{name}.{k}": v for k, v in norm_grads.items()})
            return grads, grad_y + g_x

        return x + out, back

    def _pass(self, p, tokens, ablate=None):
        """(logits (N, L, V), each layer's weights, the backward pass)."""
        tokens = self._tokens(tokens)
        ablated = self._ablated(ablate)
        L = tokens.shape[1]
        x = p["embed"][tokens]
        if self.positions == "learned":
            x = x + p["positions"][:L]
        elif self.positions == "sinusoidal":
            x = x + sinusoidal_positions(L, self.width)
        backs, weights = [], []
        for i in range(self.layers):
            attention = {}

            def attend(z, i=i, attention=attention):
                out, attention["weights"], back = self._attend(p, i, z, ablated)
                return out, back

            x, back = self._block(p, f"{i}.norm_attention", x, attend)
            backs.append(back)
            weights.append(attention["weights"])
            if self.mlp:
                x, back = self._block(
                    p, f"{i}.norm_mlp", x, lambda z, i=i: self._feed_forward(p, i, z)
                )
                backs.append(back)
        final_parts = None
        if self.norm:
            final = {"weight": p["norm.weight"], "bias": p["norm.bias"]}
            x_in = x
            x, final_parts = layer_norm_and_parts(final, x)
        logits = x @ p["unembed"]

        def backward(grad_logits):
            grads = {"unembed": _rows(x).T @ _rows(grad_logits)}
            g = grad_logits @ p["unembed"].T
            if self.norm:
                norm_grads, g = layer_norm_backward(final, x_in, g, parts=final_parts)
                grads.update({f"norm.{k}": v for k, v in norm_grads.items()})
            for back in reversed(backs):
                block_grads, g = back(g)
                grads.update(block_grads)
            if self.positions == "learned":
                grads["positions"] = np.zeros(p["positions"].shape)
                grads["positions"][:L] = g.sum(axis=0)
            grads["embed"] = np.zeros(p["embed"].shape)
            np.add.at(grads["embed"], tokens, g)
            return Params({name: grads[name] for name in p})

        return logits, weights, backward

    def forward(self, params, tokens, *, keep=None, weights=None, scale=None, ablate=None):
        """The model on ``tokens`` (N, L), L at most the context: an :class:`Output` with the
        logits (N, L, V) for each position's next token, the last layer's weights averaged over
        its heads (N, L, L) and, as parts, ``"weights"``, every layer's weights by head (N, H,
        L, L).  ``ablate``: (layer, head) pairs whose outputs are zeroed (Part VII's removal
        test).  Part VI's three changes are refused (``cannot``)."""
        tokens = self._tokens(tokens)
        L = tokens.shape[1]
        changes(keep, weights, scale, (len(tokens), L, L), tokens.shape, self.cannot)
        logits, every, _ = self._pass(params, tokens, ablate)
        return Output(logits, every[-1].mean(axis=1), self.allowed(L), parts={"weights": every})

    def empty_cache(self, n: int) -> Cache:
        """A key-value cache for ``n`` sequences, holding nothing yet."""
        n = checks.integer(n, "n", 1)
        empty = np.zeros((n, self.kv_heads, 0, self.width // self.heads))
        return Cache((empty,) * self.layers, (empty,) * self.layers)

    def next_logits(self, params, cache: Cache, tokens) -> tuple[np.ndarray, Cache]:
        """One step of decoding with the key-value cache (Part VII): the logits (N, V) for the
        token after ``tokens`` (N,), which stand at position ``cache.length``, and the cache
        with their keys and values added.  Each layer computes the query, key and value of
        the new position alone and reads the cached ones, so a step costs one position's work;
        its logits equal :meth:`forward`'s at that position (a test holds them equal)."""
        if not isinstance(cache, Cache):
            raise TypeError(f"cache must be a Cache (from empty_cache), got {type(cache).__name__}")
        t = cache.length
        if t >= self.context:
            raise ValueError(f"the cache is full: the model's context is {self.context} tokens")
        tokens = checks.token_ids(tokens, "tokens", self.vocabulary, (cache.keys[0].shape[0],))
        H, d, p = self.heads, self.width // self.heads, params
        x = p["embed"][tokens][:, None, :]  # (N, 1, E)
        if self.positions == "learned":
            x = x + p["positions"][t]
        elif self.positions == "sinusoidal":
            x = x + sinusoidal_positions(t + 1, self.width)[t]
        keys, values = list(cache.keys), list(cache.values)
        for i in range(self.layers):
            z = x
            if self.norm:
                z = layer_norm_and_parts(_norm(p, f"{i}.norm_attention"), x)[0]
            q = split_heads(z @ p[f"{i}.W_Q"], H)
            k, v = (split_heads(z @ p[f"{i}.{n}"], self.kv_heads) for n in ("W_K", "W_V"))
            if self.positions == "rotary":
                q, k = rotate(q, [float(t)]), rotate(k, [float(t)])
            keys[i] = np.concatenate([keys[i], k], axis=2)
            values[i] = np.concatenate([values[i], v], axis=2)
            scores = q @ np.swapaxes(_shared(keys[i], H), -1, -2) / np.sqrt(d)  # (N, H, 1, t + 1)
            if self.positions == "alibi":
                scores = scores - alibi_slopes(H)[:, None, None] * (t - np.arange(t + 1.0))
            weights = self._attention_weights(scores, self.allowed(t + 1)[t:])
            x = x + merge_heads(weights @ _shared(values[i], H)) @ p[f"{i}.W_O"]
            if self.mlp:
                z = x
                if self.norm:
                    z = layer_norm_and_parts(_norm(p, f"{i}.norm_mlp"), x)[0]
                x = x + self._feed_forward(p, i, z)[0]
        if self.norm:
            x = layer_norm_and_parts(_norm(p, "norm"), x)[0]
        return (x @ p["unembed"])[:, 0], Cache(tuple(keys), tuple(values))

    def generate(
        self, params, prompt, steps: int, temperature: float = 1.0, top_k=None, seed: int = 0
    ) -> np.ndarray:
        """``prompt`` (N, P) continued by ``steps`` sampled tokens, read through the key-value
        cache: (N, P + steps) (Part VII).  Each token is drawn from the softmax of the logits
        divided by ``temperature`` (0: the most likely token), over the ``top_k`` most likely
        tokens only where given; ``seed`` seeds the draws."""
        prompt = self._tokens(prompt)
        steps = checks.integer(steps, "steps", 0, self.context - prompt.shape[1])
        temperature = checks.real(temperature, "temperature", 0.0)
        if top_k is not None:
            top_k = checks.integer(top_k, "top_k", 1, self.vocabulary)
        rng = np.random.RandomState(checks.seed(seed))
        cache, out = self.empty_cache(len(prompt)), [prompt]
        for column in prompt.T:
            logits, cache = self.next_logits(params, cache, column)
        for _ in range(steps):
            if temperature == 0:
                chosen = logits.argmax(axis=1)
            else:
                scaled = logits / temperature
                if top_k is not None:
                    kth = np.sort(scaled, axis=1)[:, -top_k][:, None]
                    scaled = np.where(scaled >= kth, scaled, -np.inf)
                probabilities = softmax(scaled)
                chosen = np.array([rng.choice(self.vocabulary, p=row) for row in probabilities])
            out.append(chosen[:, None])
            if len(out) - 1 < steps:
                logits, cache = self.next_logits(params, cache, chosen)
        return np.concatenate(out, axis=1)

    def losses(self, params, tokens, ablate=None) -> np.ndarray:
        """(N, L − 1) the cross-entropy of each prediction: position t's of token t + 1."""
        tokens = self._tokens(tokens)
        if tokens.shape[1] < 2:
            raise ValueError("tokens must hold at least two tokens: one to read, one to predict")
        logits, _, _ = self._pass(params, tokens, ablate)
        return softmax_cross_entropy(logits[:, :-1], tokens[:, 1:])[0]

    def loss_and_grads(self, params, tokens):
        """(the mean cross-entropy of every sequence's L − 1 predictions, its gradients)."""
        tokens = self._tokens(tokens)
        if tokens.shape[1] < 2:
            raise ValueError("tokens must hold at least two tokens: one to read, one to predict")
        logits, _, backward = self._pass(params, tokens)
        losses, grad = softmax_cross_entropy(logits[:, :-1], tokens[:, 1:])
        grad_logits = np.zeros(logits.shape)
        grad_logits[:, :-1] = grad / losses.size
        return float(losses.mean()), backward(grad_logits)


class Cache(NamedTuple):
    """What :meth:`LanguageModel.next_logits` keeps between steps (Part VII, the key-value
    cache): each layer's keys and values so far, (N, G, t, d) each with G the model's
    ``kv_heads``, keys already turned for rotary positions."""

    keys: tuple
    values: tuple

    @property
    def length(self) -> int:
        """How many positions the cache holds."""
        return self.keys[0].shape[2]


def _norm(p, name: str) -> dict:
    return {"weight": p[name + ".weight"], "bias": p[name + ".bias"]}


def _shared(x: np.ndarray, heads: int) -> np.ndarray:
    """Key or value blocks (N, G, L, d) repeated for the ``heads`` query heads: query head h
    reads block h // (heads / G)."""
    return x if heads == x.shape[1] else np.repeat(x, heads // x.shape[1], axis=1)


def _unshared(g: np.ndarray, groups: int) -> np.ndarray:
    """The backward of :func:`_shared`: each block's gradient summed over its query heads."""
    n, heads, length, d = g.shape
    if groups == heads:
        return g
    return g.reshape(n, groups, heads // groups, length, d).sum(axis=2)


def _rows(x: np.ndarray) -> np.ndarray:
    return x.reshape(-1, x.shape[-1])
