import numpy as np
import pytest
from gradcheck import numeric_gradient

from attention_measured.models import transformer
from attention_measured.tasks import translation


def norm_params(size, seed):
    rng = np.random.RandomState(seed)
    return {"weight": rng.normal(1.0, 0.3, size), "bias": rng.normal(0.0, 0.3, size)}


def test_layer_norm_gives_each_row_mean_bias_and_the_spread_of_weight():
    rng = np.random.RandomState(0)
    x = rng.normal(3.0, 5.0, size=(2, 4, 6))
    plain = transformer.layer_norm({"weight": np.ones(6), "bias": np.zeros(6)}, x)
    np.testing.assert_allclose(plain.mean(axis=-1), 0.0, atol=1e-14)
    # torch divides by sqrt(var + eps), the biased variance: with eps the variance is below 1
    var = x.var(axis=-1)
    np.testing.assert_allclose(plain.var(axis=-1), var / (var + transformer.EPS), rtol=1e-12)
    params = norm_params(6, 1)
    np.testing.assert_allclose(
        transformer.layer_norm(params, x), plain * params["weight"] + params["bias"], atol=1e-14
    )


def test_layer_norm_backward_matches_finite_differences():
    rng = np.random.RandomState(2)
    params, x = norm_params(5, 3), rng.normal(size=(3, 2, 5))
    upstream = rng.normal(size=x.shape)  # the loss is sum(upstream * y)

    def loss():
        return float(np.sum(upstream * transformer.layer_norm(params, x)))

    grads, grad_x = transformer.layer_norm_backward(params, x, upstream)
    for name in ("weight", "bias"):
        np.testing.assert_allclose(grads[name], numeric_gradient(loss, params[name]), atol=1e-8)
    np.testing.assert_allclose(grad_x, numeric_gradient(loss, x), atol=1e-8)


def test_the_forward_passs_parts_give_the_layer_norm_backward_to_the_last_bit():
    rng = np.random.RandomState(3)
    params, x = norm_params(5, 4), rng.normal(size=(3, 2, 5))
    upstream = rng.normal(size=x.shape)
    y, parts = transformer.layer_norm_and_parts(params, x)
    np.testing.assert_array_equal(y, transformer.layer_norm(params, x))
    again = transformer.layer_norm_backward(params, x, upstream)
    read = transformer.layer_norm_backward(params, x, upstream, parts=parts)
    for name in ("weight", "bias"):
        np.testing.assert_array_equal(read[0][name], again[0][name])
    np.testing.assert_array_equal(read[1], again[1])
    with pytest.raises(ValueError, match="parts must be layer_norm_and_parts's"):
        transformer.layer_norm_backward(params, x, upstream, parts=parts[:1])


@pytest.mark.parametrize(
    "params, x, message",
    [
        ({"weight": np.ones(4)}, np.ones((2, 4)), "params lacks 'bias'"),
        ({"weight": np.ones(3), "bias": np.zeros(4)}, np.ones((2, 4)), "must be"),
        ({"weight": np.ones(4), "bias": np.zeros(4)}, np.ones((2, 5)), "must be"),
    ],
)
def test_layer_norm_refuses_mismatched_parameters(params, x, message):
    with pytest.raises(ValueError, match=message):
        transformer.layer_norm(params, x)


# ------------------------------------------------------------------ the layers
E, F, HEADS = 4, 6, 2


def layer_params(names, seed):
    r = np.random.RandomState(seed)
    shapes = transformer.layer_shapes(names, E, F)
    return {
        name: r.normal(0, 0.7, shape) + (1.0 if name.endswith("norm1.weight") else 0.0)
        for name, shape in shapes.items()
    }


def reference_attention(p, prefix, x, memory, mask):
    """torch's MultiheadAttention written out one example and one head at a time."""
    W, b = p[prefix + "in_proj_weight"], p[prefix + "in_proj_bias"]
    out = np.zeros(x.shape)
    for row in range(len(x)):
        q = x[row] @ W[:E].T + b[:E]
        k = memory[row] @ W[E : 2 * E].T + b[E : 2 * E]
        v = memory[row] @ W[2 * E :].T + b[2 * E :]
        heads = []
        for h in range(HEADS):
            cols = slice(h * E // HEADS, (h + 1) * E // HEADS)
            scores = q[:, cols] @ k[:, cols].T / np.sqrt(E // HEADS)
            scores = np.where(mask, scores, -np.inf) if mask is not None else scores
            w = np.exp(scores - scores.max(axis=1, keepdims=True))
            heads.append((w / w.sum(axis=1, keepdims=True)) @ v[:, cols])
        out[row] = np.concatenate(heads, axis=1) @ p[prefix + "out_proj.weight"].T
        out[row] += p[prefix + "out_proj.bias"]
    return out


def reference_norm(p, name, x):
    mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * p[name + ".weight"] + p[name + ".bias"]


def reference_ff(p, x):
    hidden = np.maximum(x @ p["linear1.weight"].T + p["linear1.bias"], 0)
    return hidden @ p["linear2.weight"].T + p["linear2.bias"]


def reference_layer(p, x, memory, norm_first, decoder):
    """torch's TransformerEncoderLayer / TransformerDecoderLayer.forward, spelled out."""
    causal = np.tril(np.ones((x.shape[1],) * 2, dtype=bool)) if decoder else None
    blocks = [("norm1", lambda z: reference_attention(p, "self_attn.", z, z, causal))]
    if decoder:
        blocks.append(
            ("norm2", lambda z: reference_attention(p, "multihead_attn.", z, memory, None))
        )
    blocks.append(("norm3" if decoder else "norm2", lambda z: reference_ff(p, z)))
    for norm, block in blocks:
        if norm_first:
            x = x + block(reference_norm(p, norm, x))
        else:
            x = reference_norm(p, norm, x + block(x))
    return x


@pytest.mark.parametrize("norm_first", [False, True])
def test_layers_compute_what_torchs_layers_compute(norm_first):
    r = np.random.RandomState(0)
    x, memory = r.normal(size=(2, 3, E)), r.normal(size=(2, 5, E))
    enc = layer_params(transformer.ENCODER_NAMES, 1)
    dec = layer_params(transformer.DECODER_NAMES, 2)
    np.testing.assert_allclose(
        transformer.encoder_layer(enc, x, HEADS, norm_first=norm_first),
        reference_layer(enc, x, None, norm_first, decoder=False),
        rtol=0,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        transformer.decoder_layer(dec, x, memory, HEADS, norm_first=norm_first),
        reference_layer(dec, x, memory, norm_first, decoder=True),
        rtol=0,
        atol=1e-12,
    )


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_backward_matches_finite_differences(norm_first):
    r = np.random.RandomState(3)
    x, direction = r.normal(size=(2, 3, E)), r.normal(size=(2, 3, E))
    params = layer_params(transformer.ENCODER_NAMES, 4)
    mask = np.array([[True, True, False]] * 3)

    def objective():
        out = transformer.encoder_layer(params, x, HEADS, mask=mask, norm_first=norm_first)
        return float((out * direction).sum())

    grads, grad_x = transformer.encoder_layer_backward(
        params, x, HEADS, direction, mask=mask, norm_first=norm_first
    )
    assert sorted(grads) == sorted(transformer.ENCODER_NAMES)
    for name, value in params.items():
        np.testing.assert_allclose(
            grads[name], numeric_gradient(objective, value), atol=1e-7, err_msg=name
        )
    np.testing.assert_allclose(grad_x, numeric_gradient(objective, x), atol=1e-7)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_backward_matches_finite_differences(norm_first):
    r = np.random.RandomState(5)
    x, memory = r.normal(size=(2, 3, E)), r.normal(size=(2, 4, E))
    direction = r.normal(size=(2, 3, E))
    params = layer_params(transformer.DECODER_NAMES, 6)
    memory_mask = np.array([True, True, True, False])

    def objective():
        out = transformer.decoder_layer(
            params, x, memory, HEADS, memory_mask=memory_mask, norm_first=norm_first
        )
        return float((out * direction).sum())

    grads, grad_x, grad_memory = transformer.decoder_layer_backward(
        params, x, memory, HEADS, direction, memory_mask=memory_mask, norm_first=norm_first
    )
    assert sorted(grads) == sorted(transformer.DECODER_NAMES)
    for name, value in params.items():
        np.testing.assert_allclose(
            grads[name], numeric_gradient(objective, value), atol=1e-7, err_msg=name
        )
    np.testing.assert_allclose(grad_x, numeric_gradient(objective, x), atol=1e-7)
    np.testing.assert_allclose(grad_memory, numeric_gradient(objective, memory), atol=1e-7)


def test_the_causal_mask_keeps_the_future_out():
    r = np.random.RandomState(7)
    x, memory = r.normal(size=(1, 4, E)), r.normal(size=(1, 3, E))
    params = layer_params(transformer.DECODER_NAMES, 8)
    changed = x.copy()
    changed[0, 3] += 1.0  # change the last position only
    before = transformer.decoder_layer(params, x, memory, HEADS)
    after = transformer.decoder_layer(params, changed, memory, HEADS)
    np.testing.assert_array_equal(before[0, :3], after[0, :3])
    assert not np.allclose(before[0, 3], after[0, 3])
    unmasked = transformer.decoder_layer(params, changed, memory, HEADS, causal=False)
    assert not np.allclose(before[0, :3], unmasked[0, :3])


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda p, x, m: transformer.encoder_layer(p, x, 3), ValueError, "do not divide"),
        (lambda p, x, m: transformer.encoder_layer(p, x[..., :3], 2), ValueError, "x must be"),
        (lambda p, x, m: transformer.encoder_layer({}, x, 2), ValueError, "lack"),
        (
            lambda p, x, m: transformer.encoder_layer(p, x, 2, mask=np.ones((3, 2), bool)),
            ValueError,
            "mask must",
        ),
        (
            lambda p, x, m: transformer.encoder_layer(p, x, 2, mask=np.ones((3, 3))),
            TypeError,
            "boolean",
        ),
        (lambda p, x, m: transformer.decoder_layer(p, x, m[:1], 2), ValueError, "memory must"),
        (
            lambda p, x, m: transformer.decoder_layer(
                p, x, m, 2, memory_mask=np.ones((3, 3), bool)
            ),
            ValueError,
            "memory_mask",
        ),
    ],
)
def test_layers_refuse_bad_input(call, error, message):
    r = np.random.RandomState(9)
    params = layer_params(transformer.DECODER_NAMES, 10)
    with pytest.raises(error, match=message):
        call(params, r.normal(size=(2, 3, E)), r.normal(size=(2, 5, E)))


# ------------------------------------------------------------------ the Transformer for translation
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_backward_matches_finite_differences(norm_first):
    model = transformer.Transformer(
        7, 6, width=4, heads=2, feed_forward=3, layers=2, norm_first=norm_first
    )
    params = model.init(1)
    r = np.random.RandomState(2)
    data = r.randint(3, 7, (2, 3)), r.randint(2, 6, (2, 4))
    _, grads = model.loss_and_grads(params, data)
    assert set(grads) == set(params)
    for name in (
        "source_embedding",
        "encoder.layers.0.self_attn.in_proj_weight",
        "encoder.norm.weight",
        "decoder.layers.1.multihead_attn.in_proj_bias",
        "decoder.layers.0.linear1.weight",
        "decoder.norm.bias",
        "out.weight",
    ):
        numeric = numeric_gradient(lambda: model.loss_and_grads(params, data)[0], params[name])
        np.testing.assert_allclose(grads[name], numeric, atol=1e-8, err_msg=name)


def test_the_key_value_cache_decodes_the_same_words_and_weights():
    model = transformer.Transformer(9, 8, width=8, heads=2, feed_forward=6, layers=2)
    params = model.init(3)
    source = np.random.RandomState(4).randint(3, 9, (3, 6))
    cached, cached_weights = model.greedy(params, source, steps=9, cache=True)
    plain, plain_weights = model.greedy(params, source, steps=9, cache=False)
    np.testing.assert_array_equal(cached, plain)
    np.testing.assert_allclose(cached_weights, plain_weights, rtol=0, atol=1e-12)
    logits = model.forward(params, (source, cached)).output  # its own words, read all at once
    np.testing.assert_array_equal(logits.argmax(axis=-1), cached)


def test_the_transformer_refuses_bad_input():
    with pytest.raises(ValueError, match="split into 3 heads"):
        transformer.Transformer(9, 8, width=8, heads=3)
    model = transformer.Transformer(9, 8, width=8, heads=2)
    with pytest.raises(ValueError, match="source"):
        model.encode(model.init(0), [[3, 9]])  # an unknown token id
    with pytest.raises(ValueError, match="rng"):
        model.loss_and_grads(model.init(0), {})
    memory, _ = model.encode(model.init(0), [[3, 4]])
    for previous in ([[-1]], [[8]]):  # no wrapping round to the last word, no unknown id
        with pytest.raises(ValueError, match="previous must hold integers between 0 and 7"):
            model.decode(model.init(0), memory, previous)
    assert transformer.layer_shapes(["linear1.weight", "norm2.bias"], 8, 5) == {
        "linear1.weight": (5, 8),
        "norm2.bias": (8,),
    }


def test_a_change_at_one_word_reaches_that_word_and_the_words_after_it():
    model = transformer.Transformer(9, 8, width=8, heads=2, feed_forward=6, layers=2)
    p, rng = model.init(0), np.random.RandomState(0)
    source, target = rng.randint(3, 9, (3, 4)), rng.randint(3, 8, (3, 5))
    own = model.forward(p, (source, target))
    assert own.weights.shape == (3, 5, 4) and own.layers.shape == (3, 2, 4, 4)
    keep = np.ones(own.weights.shape, dtype=bool)
    keep[:, 2, 1] = False  # word 2 may not read source word 1, in any layer or head
    changed = model.forward(p, (source, target), keep=keep)
    np.testing.assert_array_equal(changed.output[:, :2], own.output[:, :2])
    assert np.all(changed.parts["cross"][0][:, :, 2, 1] == 0)
    with pytest.raises(ValueError, match="cannot take weights: its cross-attention holds 2 heads"):
        model.forward(p, (source, target), weights=own.weights)


# ------------------------------------------------------------------ batches of mixed lengths
def padded_example(seed=5):
    r = np.random.RandomState(seed)
    sources = [r.randint(3, 9, m) for m in (4, 2, 6)]
    targets = [r.randint(2, 8, m + 1) for m in (4, 2, 6)]
    return sources, targets, translation.pad(sources), translation.pad(targets)


@pytest.mark.parametrize("norm_first", [False, True])
def test_a_padded_batch_computes_each_sentence_as_if_alone(norm_first):
    model = transformer.Transformer(
        9, 8, width=8, heads=2, feed_forward=6, layers=2, norm_first=norm_first
    )
    params = model.init(3)
    sources, targets, (source, m), (target, n) = padded_example()
    assert (source[1, 2:] == 0).all() and list(m) == [4, 2, 6]
    logits = model.forward(params, (source, target, m, n)).output
    for i, (s, t) in enumerate(zip(sources, targets)):
        alone = model.forward(params, (s[None], t[None])).output[0]
        np.testing.assert_allclose(logits[i, : len(t)], alone, rtol=0, atol=1e-12)
    unmasked = model.forward(params, (source, target)).output  # the padding read as words
    assert np.abs(unmasked[1, :3] - logits[1, :3]).max() > 1e-3


def test_the_padded_loss_is_every_real_words_mean_and_its_gradient_checks():
    model = transformer.Transformer(9, 8, width=4, heads=2, feed_forward=3, layers=1)
    params = model.init(1)
    sources, targets, (source, m), (target, n) = padded_example(6)
    data = source, target, m, n
    loss, grads = model.loss_and_grads(params, data)
    words = sum(len(t) for t in targets)
    alone = [model.loss_and_grads(params, (s[None], t[None])) for s, t in zip(sources, targets)]
    assert loss == pytest.approx(sum(one * len(t) for (one, _), t in zip(alone, targets)) / words)
    for name in ("source_embedding", "encoder.layers.0.self_attn.in_proj_weight", "out.bias"):
        expected = sum(g[name] * len(t) for (_, g), t in zip(alone, targets)) / words
        np.testing.assert_allclose(grads[name], expected, rtol=0, atol=1e-12, err_msg=name)
        numeric = numeric_gradient(lambda: model.loss_and_grads(params, data)[0], params[name])
        np.testing.assert_allclose(grads[name], numeric, atol=1e-8, err_msg=name)
    assert not grads["source_embedding"][0].any()  # <pad> is never read, so never learnt


def test_mixed_batches_draw_every_length_and_pad_after_each_end():
    corpora = translation.corpus(3, (5, 9), seed=1)
    rng = np.random.RandomState(0)
    source, target, m, n = translation.draw_padded_batch(corpora, rng, 12)
    assert len(set(m)) > 1 and (n == m + 1).all()
    for row, length in zip(source, m):
        assert (row[:length] > 0).all() and (row[length:] == 0).all()
    model = transformer.Transformer(
        len(translation.SOURCE_WORDS),
        len(translation.TARGET_WORDS),
        width=4,
        heads=2,
        feed_forward=3,
        batch=12,
        mixed=True,
    )
    loss, _ = model.loss_and_grads(model.init(0), corpora, np.random.RandomState(0))
    assert loss == pytest.approx(model.loss_and_grads(model.init(0), (source, target, m, n))[0])


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda mo, p, s, t: mo.forward(p, (s, t, np.array([4, 2]), None)),
            ValueError,
            "one length per sentence",
        ),
        (
            lambda mo, p, s, t: mo.forward(p, (s, t, np.array([4, 2, 7]), None)),
            ValueError,
            "lengths",
        ),
        (
            lambda mo, p, s, t: mo.forward(p, (s, t, np.array([4.0, 2, 6]), None)),
            TypeError,
            "lengths",
        ),
        (lambda mo, p, s, t: mo.loss_and_grads(p, (s, t, None)), TypeError, "data must be"),
        (lambda mo, p, s, t: translation.pad([]), ValueError, "non-empty"),
    ],
)
def test_bad_padding_is_refused(call, error, message):
    model = transformer.Transformer(9, 8, width=8, heads=2, feed_forward=6)
    _, _, (source, _), (target, _) = padded_example()
    with pytest.raises(error, match=message):
        call(model, model.init(0), source, target)
