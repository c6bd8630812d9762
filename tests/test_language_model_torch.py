"""Part VII's language model beside a torch peer: the same forward pass written in torch
(float64) from torch's own pieces (F.embedding, F.layer_norm, F.scaled_dot_product_attention
with an explicit mask, F.cross_entropy), loaded with the book's own initial Params, gives the
same logits and attention weights, and torch's autograd the same gradients, for every position
scheme and every variant the model offers.  torch is not a dependency of the book: without it
these tests are skipped."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from attention_measured.core.params import Params  # noqa: E402
from attention_measured.models.language_model import (  # noqa: E402
    POSITIONS,
    ROTARY_BASE,
    LanguageModel,
    alibi_slopes,
)
from attention_measured.models.transformer import EPS  # noqa: E402

VOCABULARY, CONTEXT, WIDTH, FEED_FORWARD = 11, 12, 16, 12
N, LENGTH = 3, 10  # below the context, so that learned positions are sliced
VARIANTS = {  # the constructor's options, each beside the defaults (2 layers of 2 heads)
    "attention only": {},
    "mlp": {"mlp": True},
    "mlp and norm": {"mlp": True, "norm": True},
    "norm alone": {"norm": True},
    "one layer of one head": {"layers": 1, "heads": 1},
    "three layers": {"layers": 3, "mlp": True, "norm": True},
    "grouped queries": {"heads": 4, "kv_heads": 2},
    "multi-query": {"heads": 4, "kv_heads": 1},
    "window": {"window": 3},
    "null key": {"null_key": True},
    "everything": {
        "heads": 4,
        "kv_heads": 2,
        "window": 4,
        "null_key": True,
        "mlp": True,
        "norm": True,
    },
}
CASES = [(positions, variant) for positions in POSITIONS for variant in VARIANTS]


# ------------------------------------------------------------------ the peer
def sinusoidal(length: int, width: int):
    """Vaswani et al.'s positions (length, width): sin on even columns, cos on odd ones."""
    columns = torch.arange(0, width, 2, dtype=torch.float64)
    angles = torch.arange(length, dtype=torch.float64)[:, None] / 10000.0 ** (columns / width)
    return torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1).flatten(-2)


def rope(x):
    """RoPE on x (N, heads, L, d): column pair (2i, 2i + 1) at position t turned by the angle
    t · base^(−2i/d)."""
    length, d = x.shape[-2:]
    columns = torch.arange(0, d, 2, dtype=torch.float64)
    angles = torch.arange(length, dtype=torch.float64)[:, None] * ROTARY_BASE ** (-columns / d)
    cos, sin = torch.cos(angles), torch.sin(angles)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


def attention_bias(model, length: int):
    """What scaled_dot_product_attention adds to the scores (H, L, L), or (H, L, L + 1) with the
    null key's column last: −inf where a query may not read a key (later, or out of the window),
    ALiBi's −m_h (t − s) where it may, else 0."""
    t = torch.arange(length)
    distance = t[:, None] - t[None, :]
    allowed = distance >= 0
    if model.window is not None:
        allowed &= distance < model.window
    if model.positions == "alibi":
        slopes = torch.from_numpy(alibi_slopes(model.heads))
        bias = -slopes[:, None, None] * distance
    else:
        bias = torch.zeros(model.heads, length, length, dtype=torch.float64)
    bias = bias.masked_fill(~allowed, float("-inf"))
    if model.null_key:  # a logit fixed at 0 for the zero key, read by every query
        bias = F.pad(bias, (0, 1))
    return bias


def attend(model, w, i: int, z, bias, kept, every=None):
    """Layer i's causal self-attention on z (N, L, E) by torch's scaled_dot_product_attention;
    ``every``, a list, also gets the layer's weights (N, H, L, L) computed out."""
    H, G, d = model.heads, model.kv_heads, model.width // model.heads
    q = (z @ w[f"{i}.W_Q"]).unflatten(-1, (H, d)).transpose(1, 2)  # (N, H, L, d)
    k, v = ((z @ w[f"{i}.{n}"]).unflatten(-1, (G, d)).transpose(1, 2) for n in ("W_K", "W_V"))
    if model.positions == "rotary":
        q, k = rope(q), rope(k)
    if model.null_key:  # one more key, of zeros, with a value of zeros: q · 0 = 0
        k, v = F.pad(k, (0, 0, 0, 1)), F.pad(v, (0, 0, 0, 1))
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, enable_gqa=G != H)
    if every is not None:
        shared = k.repeat_interleave(H // G, dim=1)  # query head h reads block h // (H / G)
        scores = q @ shared.transpose(-1, -2) / d**0.5 + bias
        every.append(torch.softmax(scores, dim=-1)[..., : z.shape[1]])
    heads = heads * kept[i][:, None, None]
    return heads.transpose(1, 2).flatten(-2) @ w[f"{i}.W_O"]


def norm(model, w, name: str, x):
    if not model.norm:
        return x
    return F.layer_norm(x, x.shape[-1:], w[f"{name}.weight"], w[f"{name}.bias"], eps=EPS)


def logits(model, w, tokens, ablate=(), every=None):
    """LanguageModel's forward pass in torch: the logits (N, L, V) of tokens (N, L)."""
    length = tokens.shape[1]
    x = F.embedding(tokens, w["embed"])
    if model.positions == "learned":
        x = x + w["positions"][:length]
    elif model.positions == "sinusoidal":
        x = x + sinusoidal(length, model.width)
    bias = attention_bias(model, length)
    kept = torch.ones(model.layers, model.heads, dtype=torch.float64)
    for layer, head in ablate:
        kept[layer, head] = 0.0
    for i in range(model.layers):
        x = x + attend(model, w, i, norm(model, w, f"{i}.norm_attention", x), bias, kept, every)
        if model.mlp:
            hidden = F.relu(norm(model, w, f"{i}.norm_mlp", x) @ w[f"{i}.W_1"] + w[f"{i}.b_1"])
            x = x + hidden @ w[f"{i}.W_2"] + w[f"{i}.b_2"]
    return norm(model, w, "norm", x) @ w["unembed"]


def loss(model, w, tokens):
    """The mean cross-entropy of every position's prediction of the next token."""
    out = logits(model, w, tokens)[:, :-1]
    return F.cross_entropy(out.flatten(0, 1), tokens[:, 1:].flatten())


def leaves(params) -> dict:
    """The book's Params as torch leaves (copies) whose gradients autograd fills."""
    return {name: torch.tensor(value, requires_grad=True) for name, value in params.items()}


# ------------------------------------------------------------------ the tests
def book_model(positions: str, variant: str) -> LanguageModel:
    options = {"heads": 2, "layers": 2, **VARIANTS[variant]}
    return LanguageModel(
        VOCABULARY, CONTEXT, WIDTH, positions=positions, feed_forward=FEED_FORWARD, **options
    )


def batch(seed: int):
    return np.random.RandomState(seed).randint(0, VOCABULARY, size=(N, LENGTH))


@pytest.mark.parametrize("positions, variant", CASES)
def test_torch_gives_the_books_logits_and_attention_weights(positions, variant):
    model = book_model(positions, variant)
    params, tokens = model.init(3), batch(4)
    book = model.forward(params, tokens)
    every = []
    with torch.no_grad():
        peer = logits(model, leaves(params), torch.from_numpy(tokens), every=every)
    np.testing.assert_allclose(peer.numpy(), book.output, rtol=0, atol=1e-12)
    assert len(every) == model.layers
    for peer_weights, book_weights in zip(every, book.parts["weights"]):
        np.testing.assert_allclose(peer_weights.numpy(), book_weights, rtol=0, atol=1e-13)


@pytest.mark.parametrize("positions, variant", CASES)
def test_torch_autograd_gives_the_books_loss_and_gradients(positions, variant):
    """On the initial Params, and on them moved at random, so that the biases and the
    LayerNorms' gains and shifts are no longer 0 and 1 (a peer that dropped one would agree)."""
    model = book_model(positions, variant)
    tokens, initial = batch(6), model.init(5)
    rng = np.random.RandomState(7)
    moved = Params(
        {name: value + rng.normal(0.0, 0.2, value.shape) for name, value in initial.items()}
    )
    for params in (initial, moved):
        book_loss, book_grads = model.loss_and_grads(params, tokens)
        w = leaves(params)
        peer_loss = loss(model, w, torch.from_numpy(tokens))
        peer_loss.backward()
        assert peer_loss.item() == pytest.approx(book_loss, rel=0, abs=1e-12)
        assert set(book_grads) == set(w)
        for name, value in w.items():
            np.testing.assert_allclose(value.grad.numpy(), book_grads[name], rtol=0, atol=1e-10)


@pytest.mark.parametrize("variant", ["window", "null key"])
def test_the_variants_the_peer_is_checked_on_change_the_logits(variant):
    """A window or a null key shares the plain model's Params: the two give other logits, so
    the peer's agreement with them is not the plain model's agreement again."""
    plain, changed = book_model("rotary", "attention only"), book_model("rotary", variant)
    params, tokens = plain.init(3), batch(4)
    assert not np.allclose(
        changed.forward(params, tokens).output, plain.forward(params, tokens).output
    )


@pytest.mark.parametrize("positions", POSITIONS)
def test_torch_gives_the_books_logits_with_heads_removed(positions):
    model = book_model(positions, "mlp and norm")
    params, tokens = model.init(7), batch(8)
    removed = [(0, 1), (1, 1)]  # not symmetric: (layer, head) read the wrong way round fails
    book = model.forward(params, tokens, ablate=removed).output
    with torch.no_grad():
        peer = logits(model, leaves(params), torch.from_numpy(tokens), ablate=removed)
    np.testing.assert_allclose(peer.numpy(), book, rtol=0, atol=1e-12)
    assert not np.allclose(book, model.forward(params, tokens).output)
