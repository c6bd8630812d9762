"""The Transformer's layers by hand, under the names of torch's state dicts (Part III, the
Transformer assembled).

Layer normalisation, as torch's ``nn.LayerNorm`` over the last axis, with its ``weight`` and
``bias`` and eps 1e-5:

    y = (x − mean(x)) / sqrt(var(x) + eps) ⊙ weight + bias

where mean and var (the biased variance, dividing by D) are taken over each row's D features.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..core import checks
from ..core.attention import (
    as_rows,
    causal_mask,
    merge_heads,
    multi_head_attention,
    multi_head_attention_backward,
    padding_mask,
    scaled_dot_product_attention,
    sinusoidal_positions,
    split_heads,
    step_contributions,
)
from ..core.losses import softmax_cross_entropy
from ..core.params import Params, initialiser
from ..machinery.blas import one_thread
from ..tasks.translation import MAX_STEPS, draw_batch, draw_padded_batch, shifted_right
from .protocol import Output, changes, drop_step

EPS = 1e-5  # torch's default for nn.LayerNorm and the Transformer layers


def _check_norm(params, x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    checks.params(params, "params", ("weight", "bias"))
    weight, bias = (checks.array(params[name], name, copy=False) for name in ("weight", "bias"))
    x = checks.array(x, "x", copy=False)
    if x.ndim < 1 or weight.shape != (x.shape[-1],) or bias.shape != (x.shape[-1],):
        raise ValueError(
            f"weight and bias must be (D,) for x of shape (..., D); got {weight.shape}, "
            f"{bias.shape} and x {x.shape}"
        )
    return weight, bias, x


def _normalised(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(x̂, 1/sqrt(var + eps)): each row centred and scaled to unit variance."""
    centred = x - x.mean(axis=-1, keepdims=True)
    inv_std = 1.0 / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + eps)
    return centred * inv_std, inv_std


def layer_norm(params, x, eps: float = EPS) -> np.ndarray:
    """Layer normalisation over the last axis, as torch's ``nn.LayerNorm(D)`` (Part III).

    params: ``weight`` and ``bias``, each (D,).  x: (..., D).  Returns (..., D).
    """
    return layer_norm_and_parts(params, x, eps)[0]


def layer_norm_and_parts(params, x, eps: float = EPS) -> tuple[np.ndarray, tuple]:
    """(:func:`layer_norm`'s output (..., D), its parts (x̂ (..., D), 1/sqrt(var + eps) (..., 1)))
    (Part III): the parts are what :func:`layer_norm_backward` would compute again, so a
    training pass keeps them for it."""
    weight, bias, x = _check_norm(params, x)
    eps = checks.real(eps, "eps", positive=True)
    parts = _normalised(x, eps)
    return parts[0] * weight + bias, parts


def layer_norm_backward(
    params, x, grad_output, eps: float = EPS, parts=None
) -> tuple[dict, np.ndarray]:
    """Gradients of :func:`layer_norm` (Part III): ({'weight', 'bias'}, grad_x (..., D)).

    grad_output: (..., D), the gradient of the loss with respect to the output.  ``parts``: the
    forward pass's, from :func:`layer_norm_and_parts`, or None to compute them again.
    """
    weight, _, x = _check_norm(params, x)
    eps = checks.real(eps, "eps", positive=True)
    grad_output = checks.array(grad_output, "grad_output", copy=False)
    if grad_output.shape != x.shape:
        raise ValueError(f"grad_output must be shaped like x {x.shape}, got {grad_output.shape}")
    if parts is not None and not checks.trusting():
        if len(parts) != 2 or np.shape(parts[0]) != x.shape:
            raise ValueError(f"parts must be layer_norm_and_parts's (x̂ {x.shape}, 1/std)")
    x_hat, inv_std = _normalised(x, eps) if parts is None else parts
    rows = tuple(range(x.ndim - 1))  # every axis but the features
    grads = {"weight": (grad_output * x_hat).sum(axis=rows), "bias": grad_output.sum(axis=rows)}
    g = grad_output * weight  # d loss / d x̂
    # x̂ = (x − mean) · inv_std: remove g's mean and its component along x̂, then scale
    along = x_hat * (g * x_hat).mean(axis=-1, keepdims=True)
    return grads, inv_std * (g - g.mean(axis=-1, keepdims=True) - along)


def _attention_names(prefix: str) -> tuple[str, ...]:
    return tuple(
        prefix + n for n in ("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias")
    )


def _attention(p, prefix: str, x, memory, heads: int, mask):
    """torch's nn.MultiheadAttention under ``prefix``: x (N, n, E) asks, memory (N, m, E)
    answers (x itself for self-attention)."""
    W_in, b_in, W_out, b_out = (p[name] for name in _attention_names(prefix))
    E = W_out.shape[0]
    # torch stores [W_Q; W_K; W_V] as rows, applied as x Wᵀ: our (E, E) column matrices are
    # the transposed blocks
    W_Q, W_K, W_V = (W_in[i * E : (i + 1) * E].T for i in range(3))
    args = (W_Q, W_K, W_V, W_out.T)
    biases = (b_in[:E], b_in[E : 2 * E], b_in[2 * E :], b_out)
    keys = x if memory is None else memory
    kept = {}  # the heads' projections, for the backward pass
    out, weights = multi_head_attention(x, keys, *args, heads, mask, biases, kept)

    def back(grad_out):
        g = multi_head_attention_backward(
            x, keys, *args, heads, weights, grad_out, biases=biases, kept=kept
        )
        grads = {
            prefix + "in_proj_weight": np.concatenate([g["W_Q"].T, g["W_K"].T, g["W_V"].T]),
            prefix + "in_proj_bias": np.concatenate([g["b_q"], g["b_k"], g["b_v"]]),
            prefix + "out_proj.weight": g["W_O"].T,
            prefix + "out_proj.bias": g["b_o"],
        }
        if memory is None:  # x asked and answered
            return grads, g["grad_queries"] + g["grad_keys"], None
        return grads, g["grad_queries"], g["grad_keys"]

    return out, weights, back


def _feed_forward(p, x):
    """linear2(relu(linear1(x))): torch's position-wise feed-forward, width F in the middle."""
    pre = x @ p["linear1.weight"].T + p["linear1.bias"]  # (N, n, F)
    hidden = np.maximum(pre, 0.0)
    out = hidden @ p["linear2.weight"].T + p["linear2.bias"]

    def back(grad_out):
        grad_pre = (grad_out @ p["linear2.weight"]) * (pre > 0)
        grads = {
            "linear2.weight": as_rows(grad_out).T @ as_rows(hidden),
            "linear2.bias": as_rows(grad_out).sum(axis=0),
            "linear1.weight": as_rows(grad_pre).T @ as_rows(x),
            "linear1.bias": as_rows(grad_pre).sum(axis=0),
        }
        return grads, grad_pre @ p["linear1.weight"], None

    return out, back


def _residual(p, norm: str, x, inner, norm_first: bool):
    """One sublayer with its residual and its LayerNorm ``norm``:

    post-norm (torch's default):  y = LN(x + f(x));   pre-norm:  y = x + f(LN(x)).

    ``inner(z)`` returns (f(z), back).  Returns (y, back of the whole).
    """
    ln = {"weight": p[norm + ".weight"], "bias": p[norm + ".bias"]}

    def named(norm_grads):
        return {norm + "." + k: v for k, v in norm_grads.items()}

    if norm_first:
        z, parts = layer_norm_and_parts(ln, x)
        out, inner_back = inner(z)

        def back(grad_y):
            grads, grad_z, grad_memory = inner_back(grad_y)
            norm_grads, grad_x = layer_norm_backward(ln, x, grad_z, parts=parts)
            return {**grads, **named(norm_grads)}, grad_y + grad_x, grad_memory

        return x + out, back
    out, inner_back = inner(x)
    total = x + out
    y, parts = layer_norm_and_parts(ln, total)

    def back(grad_y):
        norm_grads, grad_total = layer_norm_backward(ln, total, grad_y, parts=parts)
        grads, grad_x, grad_memory = inner_back(grad_total)
        return {**grads, **named(norm_grads)}, grad_total + grad_x, grad_memory

    return y, back


ENCODER_NAMES = _attention_names("self_attn.") + (
    "linear1.weight",
    "linear1.bias",
    "linear2.weight",
    "linear2.bias",
    "norm1.weight",
    "norm1.bias",
    "norm2.weight",
    "norm2.bias",
)


DECODER_NAMES = ENCODER_NAMES + _attention_names("multihead_attn.") + ("norm3.weight", "norm3.bias")


def _check_layer(params, names, x, heads, memory=None):
    checks.params(params, "params", names)  # torch's state-dict names
    p = {name: checks.array(params[name], name, copy=False) for name in names}
    x = checks.array(x, "x")
    E = p["self_attn.out_proj.weight"].shape[0]
    if x.ndim != 3 or x.shape[-1] != E:
        raise ValueError(f"x must be (N, n, E) with E = {E}, got {x.shape}")
    heads = checks.integer(heads, "heads", 1)
    if E % heads:
        raise ValueError(f"{heads} heads do not divide the width E = {E}")
    if p["self_attn.in_proj_weight"].shape != (3 * E, E):
        raise ValueError(f"self_attn.in_proj_weight must be (3E, E) = ({3 * E}, {E})")
    if memory is not None:
        memory = checks.array(memory, "memory")
        if memory.ndim != 3 or memory.shape[0] != x.shape[0] or memory.shape[-1] != E:
            raise ValueError(
                f"memory must be (N, m, E) = ({x.shape[0]}, m, {E}), got {memory.shape}"
            )
    return p, x, heads, memory


def _check_mask(mask, n: int, m: int, name: str):
    if mask is None:
        return None
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise TypeError(f"{name} must be boolean, True where a query may attend")
    try:
        shape = np.broadcast_shapes(mask.shape, (n, m))
    except ValueError:
        shape = None
    if shape is None or shape[-2:] != (n, m):
        raise ValueError(f"{name} must broadcast to (…, {n}, {m}), got {mask.shape}")
    return mask.reshape((1,) * (2 - mask.ndim) + mask.shape)  # at least (·, ·)


def _encoder_sublayers(p, x, heads, mask, norm_first):
    weights = {}

    def attend(z):
        out, weights["self"], back = _attention(p, "self_attn.", z, None, heads, mask)
        return out, back

    x, back1 = _residual(p, "norm1", x, attend, norm_first)
    x, back2 = _residual(p, "norm2", x, lambda z: _feed_forward(p, z), norm_first)
    return x, weights, [back1, back2]


def encoder_layer(params, x, heads: int, mask=None, norm_first: bool = False):
    """torch's ``nn.TransformerEncoderLayer`` (ReLU, no dropout, LayerNorm eps 1e-5) (Part III).

    params: the layer's state dict, :data:`ENCODER_NAMES`, E the width and F the
    feed-forward's: ``self_attn.in_proj_weight`` (3E, E), ``self_attn.in_proj_bias`` (3E,),
    ``self_attn.out_proj.weight`` (E, E) and ``.bias``, ``linear1.weight`` (F, E),
    ``linear2.weight`` (E, F), their biases, ``norm1`` and ``norm2`` (E,).  x: (N, n, E).
    mask: boolean, broadcastable to (N, n, n), True where a query may attend (the book's
    convention; torch's boolean ``src_mask`` means the opposite).  ``norm_first``: pre-norm.
    Returns (N, n, E).
    """
    p, x, heads, _ = _check_layer(params, ENCODER_NAMES, x, heads)
    mask = _check_mask(mask, x.shape[1], x.shape[1], "mask")
    return _encoder_sublayers(p, x, heads, mask, checks.flag(norm_first, "norm_first"))[0]


def _backward(backs, grad_output):
    grads, grad_memory = {}, None
    for back in reversed(backs):
        g, grad_output, gm = back(grad_output)
        for name, value in g.items():
            grads[name] = grads.get(name, 0.0) + value
        if gm is not None:
            grad_memory = gm if grad_memory is None else grad_memory + gm
    return grads, grad_output, grad_memory


def encoder_layer_backward(params, x, heads, grad_output, mask=None, norm_first=False):
    """Gradients of :func:`encoder_layer`: (grads by state-dict name, grad_x (N, n, E))."""
    p, x, heads, _ = _check_layer(params, ENCODER_NAMES, x, heads)
    mask = _check_mask(mask, x.shape[1], x.shape[1], "mask")
    y, _, backs = _encoder_sublayers(p, x, heads, mask, checks.flag(norm_first, "norm_first"))
    grads, grad_x, _ = _backward(backs, _check_grad(grad_output, y))
    return grads, grad_x


def _check_grad(grad_output, y):
    grad_output = checks.array(grad_output, "grad_output", copy=False)
    if grad_output.shape != y.shape:
        raise ValueError(
            f"grad_output must be shaped like the output {y.shape}, got {grad_output.shape}"
        )
    return grad_output


def _decoder_sublayers(p, x, memory, heads, mask, memory_mask, norm_first):
    weights = {}

    def attend_self(z):
        out, weights["self"], back = _attention(p, "self_attn.", z, None, heads, mask)
        return out, back

    def attend_memory(z):
        out, weights["cross"], back = _attention(
            p, "multihead_attn.", z, memory, heads, memory_mask
        )
        return out, back

    x, back1 = _residual(p, "norm1", x, attend_self, norm_first)
    x, back2 = _residual(p, "norm2", x, attend_memory, norm_first)
    x, back3 = _residual(p, "norm3", x, lambda z: _feed_forward(p, z), norm_first)
    return x, weights, [back1, back2, back3]


def _decoder_masks(x, memory, causal, mask, memory_mask):
    n, m = x.shape[1], memory.shape[1]
    mask = _check_mask(mask, n, n, "mask")
    if checks.flag(causal, "causal"):
        mask = causal_mask(n) if mask is None else mask & causal_mask(n)
    return mask, _check_mask(memory_mask, n, m, "memory_mask")


def _decoder_pass(params, x, memory, heads, causal, mask, memory_mask, norm_first):
    """The checked decoder layer: (output, weights, backs)."""
    p, x, heads, memory = _check_layer(params, DECODER_NAMES, x, heads, memory)
    if memory is None:
        raise ValueError("the decoder layer needs the encoder's memory (N, m, E)")
    mask, memory_mask = _decoder_masks(x, memory, causal, mask, memory_mask)
    norm_first = checks.flag(norm_first, "norm_first")
    return _decoder_sublayers(p, x, memory, heads, mask, memory_mask, norm_first)


def decoder_layer(
    params,
    x,
    memory,
    heads: int,
    causal: bool = True,
    mask=None,
    memory_mask=None,
    norm_first: bool = False,
    return_weights: bool = False,
):
    """torch's ``nn.TransformerDecoderLayer`` (ReLU, no dropout, eps 1e-5) (Part III).

    params: :data:`DECODER_NAMES`: the encoder layer's names, ``multihead_attn.*`` for the
    cross-attention and ``norm3``.  x: (N, n, E) the target so far; memory: (N, m, E) the
    encoder's output.  ``causal`` (default True) lets position i attend only to positions up to
    i; ``mask`` (N, n, n) and ``memory_mask`` (N, n, m), boolean and True where a query may
    attend, restrict further.  Returns (N, n, E), and with ``return_weights`` also the
    attention weights {"self", "cross"}, each (N, heads, n, ·).
    """
    y, weights, _ = _decoder_pass(params, x, memory, heads, causal, mask, memory_mask, norm_first)
    return (y, weights) if checks.flag(return_weights, "return_weights") else y


def decoder_layer_backward(
    params,
    x,
    memory,
    heads,
    grad_output,
    causal=True,
    mask=None,
    memory_mask=None,
    norm_first=False,
):
    """Gradients of :func:`decoder_layer`: (grads by name, grad_x (N, n, E), grad_memory
    (N, m, E))."""
    y, _, backs = _decoder_pass(params, x, memory, heads, causal, mask, memory_mask, norm_first)
    return _backward(backs, _check_grad(grad_output, y))


class _Encoded(NamedTuple):
    """What :meth:`Transformer.encode` returns beside the memory: the source ids (N, m), each
    layer's backward record, the final norm's backward, and each layer's self-attention weights
    (N, H, m, m), first layer first."""

    source: np.ndarray
    layers: list
    norm_back: Any
    weights: list


class _Decoded(NamedTuple):
    """What :meth:`Transformer.decode` returns beside the logits and weights: the previous words
    (N, n), each layer's backward record, the final norm's backward, and the final norm's output
    (N, n, E), which the output layer reads."""

    previous: np.ndarray
    layers: list
    norm_back: Any
    out: np.ndarray


REPLACE = (
    "its cross-attention holds {heads} heads of weights in {layers}, {rows} rows for each word, "
    "so no one row of weights is the model's to replace; its rankings start from the last "
    "layer's rows averaged over the heads"
)  # why a Transformer's weights cannot be given to its forward pass (Part VI)


class Transformer:
    """An encoder-decoder Transformer (Vaswani et al. 2017) for translation (Part III).

    Words become vectors by an embedding plus the sinusoidal positions of Part II (unless
    ``positions`` is False); ``layers`` encoder layers read the source, ``layers`` decoder
    layers read the target so far and, by cross-attention, the encoder's output; a final
    LayerNorm on each side and a linear layer give the next word's logits.  Parameters carry
    the names of torch's ``nn.Transformer`` state dict (``encoder.layers.0.self_attn.in_proj_
    weight``, ``decoder.norm.weight``, …), plus ``source_embedding``, ``target_embedding`` and
    ``out.weight``/``out.bias``.  ``causal`` False removes the decoder's causal mask (to show
    what breaks).  Training batches hold sentences of one length, so nothing is padded, unless
    ``mixed``: then each batch mixes lengths, padded with <pad> after each sentence's end, and
    a key padding mask keeps every query off the padding (Part III, batches of mixed lengths).
    It follows the book's model protocol (:mod:`.protocol`): its inputs are (source, target)
    pairs read under teacher forcing.
    """

    draws = True  # each training step draws its batch
    output_kind = "tokens"

    def __init__(
        self,
        source_vocabulary: int,
        target_vocabulary: int,
        width: int = 32,
        heads: int = 2,
        feed_forward: int = 64,
        layers: int = 1,
        norm_first: bool = False,
        positions: bool = True,
        causal: bool = True,
        batch: int = 32,
        bos: int = 1,
        mixed: bool = False,
    ):
        self.source_vocabulary = checks.integer(source_vocabulary, "source_vocabulary", 2)
        self.target_vocabulary = checks.integer(target_vocabulary, "target_vocabulary", 2)
        self.width = checks.integer(width, "width", 2)
        self.heads = checks.integer(heads, "heads", 1)
        if self.width % self.heads or self.width % 2:
            raise ValueError(f"the width {width} must be even and split into {heads} heads")
        self.feed_forward = checks.integer(feed_forward, "feed_forward", 1)
        self.layers = checks.integer(layers, "layers", 1)
        self.norm_first = checks.flag(norm_first, "norm_first")
        self.positions = checks.flag(positions, "positions")
        self.causal = checks.flag(causal, "causal")
        self.batch = checks.integer(batch, "batch", 1)
        self.bos = checks.index(bos, "bos", self.target_vocabulary)
        self.mixed = checks.flag(mixed, "mixed")
        self.cannot = {  # the changes its forward pass refuses, and why
            "weights": REPLACE.format(
                rows=self.heads * self.layers,
                heads=self.heads,
                layers="its one layer" if self.layers == 1 else f"each of its {self.layers} layers",
            )
        }

    def __repr__(self) -> str:
        return f"Transformer(width={self.width}, heads={self.heads}, layers={self.layers})"

    @initialiser
    def init(self, seed: int = 0) -> Params:
        """Parameters drawn from ``seed`` the way torch initialises them: Xavier-uniform
        attention projections, uniform ±1/sqrt(fan-in) linear layers, LayerNorms at 1 and 0."""
        rng = np.random.RandomState(checks.seed(seed))
        E, F = self.width, self.feed_forward
        p = Params(
            source_embedding=rng.normal(0.0, 1.0, (self.source_vocabulary, E)),
            target_embedding=rng.normal(0.0, 1.0, (self.target_vocabulary, E)),
        )
        for side, names in (("encoder", ENCODER_NAMES), ("decoder", DECODER_NAMES)):
            shapes = layer_shapes(names, E, F)
            for i in range(self.layers):
                for name in names:
                    p[f"{side}.layers.{i}.{name}"] = _initial(rng, name, shapes[name], E, F)
            p[f"{side}.norm.weight"], p[f"{side}.norm.bias"] = np.ones(E), np.zeros(E)
        bound = 1.0 / np.sqrt(E)
        p["out.weight"] = rng.uniform(-bound, bound, (self.target_vocabulary, E))
        p["out.bias"] = rng.uniform(-bound, bound, self.target_vocabulary)
        return p

    # -------------------------------------------------------------- forward
    def _embed(self, p, table: str, ids, start: int = 0, scale=None) -> np.ndarray:
        x = p[table][ids]  # (N, ·, E)
        if scale is not None:
            scale = checks.array(scale, "scale")
            if scale.shape != ids.shape:
                raise ValueError(f"scale must hold one value per word, {ids.shape}")
            x = x * scale[..., None]
        if self.positions:  # x is this call's own array: the positions are added in place
            np.add(x, sinusoidal_positions(start + ids.shape[1], self.width)[start:], out=x)
        return x

    @checks.model_params
    def encode(self, p, source, scale=None, lengths=None) -> tuple[np.ndarray, _Encoded]:
        """The encoder's output (N, m, E), the memory, and its record (a named tuple), whose
        ``weights`` are each layer's self-attention weights (N, H, m, m).

        ``scale``: optional (N, m), each word's embedding multiplied by it before the
        positions are added (Part VI's gradient × input).  ``lengths``: optional (N,), each
        sentence's words before its padding; no query then reads a padded key.
        """
        source = checks.token_ids(source, "source", self.source_vocabulary, (None, None))
        if source.shape[1] < 1:
            raise ValueError("source sentences need at least one word")
        mask = key_padding_mask(lengths, source.shape, "lengths")
        x = self._embed(p, "source_embedding", source, scale=scale)
        backs, weights = [], []
        for i in range(self.layers):
            x, w, layer_backs = _encoder_sublayers(
                one_layer(p, f"encoder.layers.{i}."),
                x,
                self.heads,
                mask,
                self.norm_first,
            )
            backs.append((f"encoder.layers.{i}.", layer_backs))
            weights.append(w["self"])
        memory, norm_back = _final_norm(p, "encoder.norm", x)
        return memory, _Encoded(source, backs, norm_back, weights)

    @checks.model_params
    def decode(
        self, p, memory, previous, memory_mask=None, memory_lengths=None, lengths=None
    ) -> tuple[np.ndarray, list, _Decoded]:
        """Logits (N, n, V) for the previous words (N, n) read all at once, the attention
        weights of every layer ({"self", "cross"} each), and the record (a named tuple).

        ``memory_mask``: optional boolean (N, n, m), True where word i may read source word j
        in every layer's cross-attention (Part VI's removal test).  ``memory_lengths`` and
        ``lengths``: optional (N,), the real source and target words of padded sentences.
        """
        previous = checks.token_ids(previous, "previous", self.target_vocabulary, (None, None))
        memory = checks.array(memory, "memory", ndim=3, copy=False)
        n, m = previous.shape[1], memory.shape[1]
        if memory_mask is not None:
            memory_mask = _check_mask(memory_mask, n, m, "memory_mask")  # every head's
        padded = key_padding_mask(memory_lengths, (len(previous), m), "memory_lengths")
        if padded is not None:
            memory_mask = padded if memory_mask is None else memory_mask & padded
        x = self._embed(p, "target_embedding", previous)
        backs, weights = [], []
        mask = causal_mask(n) if self.causal else None
        padded = key_padding_mask(lengths, previous.shape, "lengths")
        if padded is not None:
            mask = padded if mask is None else mask & padded
        for i in range(self.layers):
            x, w, layer_backs = _decoder_sublayers(
                one_layer(p, f"decoder.layers.{i}."),
                x,
                memory,
                self.heads,
                mask,
                memory_mask,
                self.norm_first,
            )
            backs.append((f"decoder.layers.{i}.", layer_backs))
            weights.append(w)
        out, norm_back = _final_norm(p, "decoder.norm", x)
        logits = out @ p["out.weight"].T + p["out.bias"]  # (N, n, V)
        return logits, weights, _Decoded(previous, backs, norm_back, out)

    def _previous(self, target) -> np.ndarray:
        return shifted_right(target, self.bos)

    @one_thread
    @checks.model_params
    def forward(self, p, inputs, *, keep=None, weights=None, scale=None) -> Output:
        """Teacher forcing on ``inputs`` = (source (N, m), target (N, n)) ids, or with their
        lengths (source, target, source_lengths, target_lengths) for a padded batch
        (:func:`~.translation.draw_padded_batch`; logits at padded positions mean nothing).
        All words are decoded at once under the causal mask.

        Returns the logits (N, n, V); as weights, the last decoder layer's cross-attention
        averaged over its heads (N, n, m), row i being where word i looked; as ``layers`` each
        encoder layer's self-attention averaged over heads (N, L, m, m), for rollout and flow;
        and as parts each layer's weights by head, ``cross`` and ``decoder self`` (N, H, n, ·)
        and ``encoder self`` (N, H, m, m), and the ``records`` the backward pass reads.

        The changes (Part VI): ``keep`` (N, n, m) boolean, the source words each target word's
        row of every cross-attention may read; ``scale`` (N, m), each source word's embedding
        multiplied by it before the positions are added.  ``weights`` cannot be given (see
        :data:`REPLACE`).
        """
        source, target, *lengths = self._inputs(inputs)
        n, m = target.shape[1], source.shape[1]
        keep, _, scale = changes(
            keep, weights, scale, (len(source), n, m), source.shape, self.cannot
        )
        source_lengths, target_lengths = lengths if lengths else (None, None)
        memory, enc = self.encode(p, source, scale=scale, lengths=source_lengths)
        logits, layers, dec = self.decode(
            p,
            memory,
            self._previous(target),
            memory_mask=keep,
            memory_lengths=source_lengths,
            lengths=target_lengths,
        )
        parts = {
            "cross": [w["cross"] for w in layers],
            "decoder self": [w["self"] for w in layers],
            "encoder self": enc.weights,
            "records": (enc, dec),
        }
        encoder = np.stack([w.mean(axis=1) for w in enc.weights], axis=1)  # (N, L, m, m)
        return Output(logits, layers[-1]["cross"].mean(axis=1), layers=encoder, parts=parts)

    @checks.model_params
    def contributions(self, p, inputs) -> np.ndarray:
        """What each source word adds to each target word's cross-attention output in the last
        decoder layer, Σ_h a_{h,ij} (m_j W_V^h + b_V^h) W_O^h (Part VI, Kobayashi et al.'s
        α f(x), as they define it for several heads): (N, n, m, E), under teacher forcing."""
        source, target, *lengths = self._inputs(inputs)
        if lengths:
            raise ValueError("contributions takes unpadded (source, target) pairs")
        memory, _ = self.encode(p, source)
        weights = self.forward(p, (source, target)).parts["cross"][-1]  # (N, H, n, m)
        layer, E = f"decoder.layers.{self.layers - 1}.multihead_attn.", self.width
        W_V = p[layer + "in_proj_weight"][2 * E :]  # torch's rows of the values
        values = memory @ W_V.T + p[layer + "in_proj_bias"][2 * E :]
        W_O = p[layer + "out_proj.weight"].T
        return step_contributions(weights, values, heads=self.heads, W_O=W_O)

    def without_step(self, inputs, step) -> tuple:
        """(source, target) with each source sentence's word ``step`` (N,) deleted: the
        encoder reads m − 1 words, the later ones taking the positions one earlier (Jain &
        Wallace's leave-one-out, Part VI)."""
        source, target, *lengths = self._inputs(inputs)
        if lengths:
            raise ValueError("without_step takes unpadded (source, target) pairs")
        return drop_step(source, step), target

    def _inputs(self, inputs) -> tuple:
        if not (isinstance(inputs, tuple) and len(inputs) in (2, 4)):
            raise TypeError(
                "inputs must be (source, target) or (source, target, source_lengths, "
                "target_lengths)"
            )
        source = checks.token_ids(inputs[0], "source", self.source_vocabulary, (None, None))
        target = checks.token_ids(inputs[1], "target", self.target_vocabulary, (len(source), None))
        if source.shape[1] < 1 or target.shape[1] < 1:
            raise ValueError("source and target sentences need at least one word")
        return (source, target, *inputs[2:])

    # -------------------------------------------------------------- backward
    @checks.model_params
    def loss_and_grads(self, p, data, rng=None, baseline=None):
        """Mean cross-entropy per target word and its gradients, on one batch: ``data`` is a
        (source, target) pair, a padded (source, target, source_lengths, target_lengths), or
        {length: Corpus} from which ``rng`` draws the batch (padded when ``mixed``).  Padded
        positions are left out of the mean."""
        if baseline is not None:
            checks.real(baseline, "baseline")
        if isinstance(data, dict):
            if rng is None:
                raise ValueError("drawing a batch from a corpus needs rng")
            rng = checks.random_state(rng, "rng")
            draw = draw_padded_batch if self.mixed else draw_batch
            data = draw(data, rng, self.batch)
        if not isinstance(data, tuple) or len(data) not in (2, 4):
            raise TypeError(
                "data must be (source, target), (source, target, source_lengths, "
                "target_lengths) or a dict of Corpus by length"
            )
        source, target, *lengths = data
        out = self.forward(p, data)
        logits, (enc, dec) = out.output, out.parts["records"]
        losses, grad_logits = softmax_cross_entropy(logits, target)
        if lengths:
            real = np.arange(target.shape[1]) < lengths[1][:, None]  # (N, n)
            losses = losses[real]
            grad_logits *= real[..., None]
        grad_logits /= losses.size
        previous, dec_backs, dec_norm_back, out = dec  # a Decoded
        grads = Params({name: np.zeros_like(value) for name, value in p.items()})
        grads["out.weight"] += as_rows(grad_logits).T @ as_rows(out)
        grads["out.bias"] += as_rows(grad_logits).sum(axis=0)
        grad_out = grad_logits @ p["out.weight"]
        grad_x = _add(grads, *dec_norm_back(grad_out))
        grad_memory = 0.0
        for prefix, backs in reversed(dec_backs):
            layer_grads, grad_x, gm = _backward(backs, grad_x)
            _add(grads, {prefix + k: v for k, v in layer_grads.items()})
            grad_memory = grad_memory + gm
        np.add.at(grads["target_embedding"], previous, grad_x)
        source, enc_backs, enc_norm_back, _ = enc  # an Encoded
        grad_x = _add(grads, *enc_norm_back(grad_memory))
        for prefix, backs in reversed(enc_backs):
            layer_grads, grad_x, _ = _backward(backs, grad_x)
            _add(grads, {prefix + k: v for k, v in layer_grads.items()})
        np.add.at(grads["source_embedding"], source, grad_x)
        return float(losses.mean()), grads

    # -------------------------------------------------------------- decoding
    @checks.model_params
    def decoder_start(self, p, source) -> dict:
        """The decoder's state before its first word, for :mod:`decoding`: the encoder's
        "memory" (N, m, E) and an empty key-value cache per layer ("kv")."""
        memory, _ = self.encode(p, source)
        return {"memory": memory, "kv": [{} for _ in range(self.layers)]}

    @checks.model_params
    def decoder_next(self, p, state, words, t: int) -> tuple:
        """One decoding step with the key-value cache: the previous words (N,) at position
        ``t``, the number of words decoded so far, give (logits (N, V), the last layer's
        cross-attention (N, m) averaged over heads, a new state whose cache holds one position
        more).  The state passed in is left as it was."""
        memory = state["memory"]
        words = checks.token_ids(words, "words", self.target_vocabulary, (len(memory),))
        kv = [dict(cache) for cache in state["kv"]]  # new arrays go in new dicts
        cached = kv[0]["k"].shape[-2] if "k" in kv[0] else 0
        t = checks.integer(t, "t", 0, MAX_STEPS)
        if t != cached:
            raise ValueError(f"t must be the number of words decoded so far, {cached}; got {t}")
        logits, w = self._cached_step(p, memory, words[:, None], t, kv)
        return logits, w, {**state, "kv": kv}

    @one_thread
    @checks.model_params
    def greedy(self, p, source, steps: int | None = None, cache: bool = True):
        """Greedy decoding: (ids (N, steps), the last layer's cross-attention averaged over
        heads (N, steps, m), as :meth:`forward` gives its weights).  ``steps`` defaults to the
        source length + 1 and is at most :data:`~.translation.MAX_STEPS`.

        With ``cache`` (the key-value cache), each step computes only the newest position:
        its query, key and value in every layer, the keys and values of earlier positions
        being kept, and the memory's projected once.  Without it, every step reruns the
        decoder on the whole prefix.  Both give the same words.
        """
        cache = checks.flag(cache, "cache")
        state = self.decoder_start(p, source)
        memory = state["memory"]
        steps = (
            memory.shape[1] + 1 if steps is None else checks.integer(steps, "steps", 1, MAX_STEPS)
        )
        words = np.full((len(memory), 1), self.bos)
        out, weights = [], []
        for t in range(steps):
            if cache:
                logits, w, state = self.decoder_next(p, state, words[:, -1], t)
            else:
                logits, all_weights, _ = self.decode(p, memory, words)
                logits, w = logits[:, -1], all_weights[-1]["cross"][:, :, -1].mean(axis=1)
            out.append(logits.argmax(axis=-1))
            weights.append(w)
            words = np.concatenate([words, out[-1][:, None]], axis=1)
        return np.stack(out, axis=1), np.stack(weights, axis=1)

    def _cached_step(self, p, memory, word, t: int, kv: list):
        """One decoding step for the newest word (N, 1) at position t: (logits (N, V),
        cross-attention (N, m) of the last layer averaged over heads)."""
        x = self._embed(p, "target_embedding", word, start=t)
        for i, cache in enumerate(kv):
            x = self._cached_layer(one_layer(p, f"decoder.layers.{i}."), x, memory, cache)
        out, _ = _final_norm(p, "decoder.norm", x)
        logits = out[:, 0] @ p["out.weight"].T + p["out.bias"]
        return logits, kv[-1]["cross weights"][:, :, 0].mean(axis=1)

    def _cached_layer(self, layer, x, memory, cache):
        """One decoder layer for the newest position only, its sublayers as in
        :func:`decoder_layer`."""

        def attend_self(z):
            return _cached_attention(layer, "self_attn.", z, None, cache, self.heads)

        def attend_memory(z):
            return _cached_attention(layer, "multihead_attn.", z, memory, cache, self.heads)

        for norm, inner in (
            ("norm1", attend_self),
            ("norm2", attend_memory),
            ("norm3", lambda z: _feed_forward(layer, z)),
        ):
            x, _ = _residual(layer, norm, x, inner, self.norm_first)
        return x


def key_padding_mask(lengths, shape: tuple, name: str = "lengths") -> np.ndarray | None:
    """(N, 1, m) boolean, True on each sentence's first lengths[i] of m positions, for a batch
    of ``shape`` (N, m) padded after each sentence's end (Part III); None when ``lengths`` is
    None or pads nothing, so an unpadded batch runs exactly as before."""
    if not isinstance(shape, tuple) or len(shape) != 2:
        raise TypeError(f"shape must be the batch's (N, m), got {shape!r}")
    if not isinstance(name, str):
        raise TypeError(f"name must be text, the argument's name, got {name!r}")
    if lengths is None:
        return None
    lengths = checks.integers(lengths, name, 1, shape[1])
    if lengths.shape != (shape[0],):
        raise ValueError(
            f"{name} must hold one length per sentence, ({shape[0]},), got {lengths.shape}"
        )
    return None if (lengths == shape[1]).all() else padding_mask(lengths, shape[1])


def _cached_attention(p, prefix: str, z, memory, cache: dict, heads: int):
    """Attention for the newest position z (N, 1, E) with a key-value cache (Part III).

    Self-attention (memory None) appends z's key and value to the cache and attends over all
    of them; cross-attention projects the memory's keys and values once, on the first step.
    Returns (output (N, 1, E), None) in :func:`_residual`'s (output, back) form.
    """
    W_in, b_in, W_out, b_out = (p[name] for name in _attention_names(prefix))
    E = W_out.shape[0]
    q = split_heads(z @ W_in[:E].T + b_in[:E], heads)
    if memory is None:
        k = split_heads(z @ W_in[E : 2 * E].T + b_in[E : 2 * E], heads)
        v = split_heads(z @ W_in[2 * E :].T + b_in[2 * E :], heads)
        if "k" in cache:
            k, v = (
                np.concatenate([cache["k"], k], axis=-2),
                np.concatenate([cache["v"], v], axis=-2),
            )
        cache["k"], cache["v"] = k, v
    else:
        if "memory k" not in cache:
            cache["memory k"] = split_heads(memory @ W_in[E : 2 * E].T + b_in[E : 2 * E], heads)
            cache["memory v"] = split_heads(memory @ W_in[2 * E :].T + b_in[2 * E :], heads)
        k, v = cache["memory k"], cache["memory v"]
    out, weights = scaled_dot_product_attention(q, k, v)
    if memory is not None:
        cache["cross weights"] = weights
    return merge_heads(out) @ W_out.T + b_out, None


def _initial(rng, name: str, shape: tuple, E: int, F: int) -> np.ndarray:
    """torch's initial value for one layer parameter of ``shape``: a linear layer's weight and
    bias are uniform in ±1/sqrt(its input width), E for linear1 and out_proj, F for linear2."""
    if name.startswith("norm"):
        return np.ones(shape) if name.endswith(".weight") else np.zeros(shape)
    if name.endswith("in_proj_weight"):  # Xavier uniform over the (3E, E) matrix
        bound = np.sqrt(6.0 / (shape[0] + shape[1]))
        return rng.uniform(-bound, bound, shape)
    if name.endswith(("in_proj_bias", "out_proj.bias")):
        return np.zeros(shape)
    fan_in = F if name.startswith("linear2") else E
    return rng.uniform(-1.0, 1.0, shape) / np.sqrt(fan_in)


def layer_shapes(names, width: int, feed_forward: int) -> dict[str, tuple]:
    """The shape of each state-dict name of a layer of width E and feed-forward width F
    (Part III): e.g. ``self_attn.in_proj_weight`` (3E, E), ``linear1.weight`` (F, E)."""
    E, F = checks.integer(width, "width", 1), checks.integer(feed_forward, "feed_forward", 1)
    if isinstance(names, (str, bytes)) or not names:
        raise ValueError("names must be a layer's state-dict names, such as ENCODER_NAMES")
    by_suffix = {
        "in_proj_weight": (3 * E, E),
        "in_proj_bias": (3 * E,),
        "out_proj.weight": (E, E),
        "out_proj.bias": (E,),
        "linear1.weight": (F, E),
        "linear1.bias": (F,),
        "linear2.weight": (E, F),
        "linear2.bias": (E,),
        "weight": (E,),  # the norms
        "bias": (E,),
    }
    return {name: next(s for end, s in by_suffix.items() if name.endswith(end)) for name in names}


def one_layer(p, prefix: str) -> Params:
    """One layer's parameters out of a model's, under their short names: ``prefix`` such as
    ``"decoder.layers.0."`` is taken off (``self_attn.in_proj_weight``, …), as
    :func:`encoder_layer` and :func:`decoder_layer` take them (section 4)."""
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be text such as 'decoder.layers.0.', got {prefix!r}")
    if not any(name.startswith(prefix) for name in checks.params(p, "p", ())):
        raise ValueError(f"prefix {prefix!r} begins no parameter's name")
    return Params(
        {name[len(prefix) :]: value for name, value in p.items() if name.startswith(prefix)}
    )


def _final_norm(p, name: str, x):
    """The LayerNorm after the last layer: (output, back) with back(grad) -> (grads, grad_x)."""
    ln = {"weight": p[name + ".weight"], "bias": p[name + ".bias"]}

    y, parts = layer_norm_and_parts(ln, x)

    def back(grad):
        norm_grads, grad_x = layer_norm_backward(ln, x, grad, parts=parts)
        return {f"{name}.{k}": v for k, v in norm_grads.items()}, grad_x

    return y, back


def _add(grads, new: dict, passed=None):
    """Add ``new`` into grads by name; return ``passed`` (the gradient flowing on)."""
    for name, value in new.items():
        grads[name] += value
    return passed
