import numpy as np
import pytest
from gradcheck import numeric_gradient

from attention_measured.core.losses import sigmoid
from attention_measured.models import recurrent

IN, H, N = 3, 4, 5  # input size, state size, batch


def gru_params(seed):
    rng = np.random.RandomState(seed)
    bound = 1 / np.sqrt(H)  # torch's initialisation: uniform in ±1/sqrt(H)
    return {
        "weight_ih": rng.uniform(-bound, bound, (3 * H, IN)),
        "weight_hh": rng.uniform(-bound, bound, (3 * H, H)),
        "bias_ih": rng.uniform(-bound, bound, 3 * H),
        "bias_hh": rng.uniform(-bound, bound, 3 * H),
    }


def test_gru_cell_follows_torchs_formulas_and_gate_order():
    params = gru_params(0)
    rng = np.random.RandomState(1)
    x, h = rng.normal(size=(N, IN)), rng.normal(size=(N, H))
    out = recurrent.gru_cell(params, x, h)
    for row in range(N):  # one sequence at a time, gate by gate, rows r, z, n of torch
        W_ir, W_iz, W_in = np.split(params["weight_ih"], 3)
        W_hr, W_hz, W_hn = np.split(params["weight_hh"], 3)
        b_ir, b_iz, b_in = np.split(params["bias_ih"], 3)
        b_hr, b_hz, b_hn = np.split(params["bias_hh"], 3)
        xi, hi = x[row], h[row]
        r = sigmoid(W_ir @ xi + b_ir + W_hr @ hi + b_hr)
        z = sigmoid(W_iz @ xi + b_iz + W_hz @ hi + b_hz)
        n = np.tanh(W_in @ xi + b_in + r * (W_hn @ hi + b_hn))
        np.testing.assert_allclose(out[row], (1 - z) * n + z * hi, rtol=0, atol=1e-14)


def test_gru_cell_backward_matches_finite_differences():
    params = gru_params(2)
    rng = np.random.RandomState(3)
    x, h = rng.normal(size=(N, IN)), rng.normal(size=(N, H))
    upstream = rng.normal(size=(N, H))  # the loss is sum(upstream * h')

    def loss():
        return float(np.sum(upstream * recurrent.gru_cell(params, x, h)))

    grads, grad_x, grad_h = recurrent.gru_cell_backward(params, x, h, upstream)
    for name in recurrent.GRU_NAMES:
        np.testing.assert_allclose(grads[name], numeric_gradient(loss, params[name]), atol=1e-8)
    np.testing.assert_allclose(grad_x, numeric_gradient(loss, x), atol=1e-8)
    np.testing.assert_allclose(grad_h, numeric_gradient(loss, h), atol=1e-8)


def test_the_forward_passs_gates_give_the_backward_pass_to_the_last_bit():
    params = gru_params(5)
    rng = np.random.RandomState(6)
    x, h, upstream = (rng.normal(size=shape) for shape in ((N, IN), (N, H), (N, H)))
    out, gates = recurrent.gru_cell_and_gates(params, x, h)
    np.testing.assert_array_equal(out, recurrent.gru_cell(params, x, h))
    again = recurrent.gru_cell_backward(params, x, h, upstream)
    kept = recurrent.gru_cell_backward(params, x, h, upstream, gates)
    for name in recurrent.GRU_NAMES:
        np.testing.assert_array_equal(kept[0][name], again[0][name])
    np.testing.assert_array_equal(kept[1], again[1])
    np.testing.assert_array_equal(kept[2], again[2])
    with pytest.raises(ValueError, match="gates must be gru_cell_and_gates's four arrays"):
        recurrent.gru_cell_backward(params, x, h, upstream, gates[:3])


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda p, x, h: (dict(p, weight_hh=p["weight_hh"][:-1]), x, h), "weight_hh"),
        (lambda p, x, h: (dict(p, weight_ih=p["weight_ih"][:, :-1]), x, h), "x must be"),
        (lambda p, x, h: (dict(p, bias_ih=p["bias_ih"][:-1]), x, h), "bias_ih"),
        (lambda p, x, h: ({k: v for k, v in p.items() if k != "bias_hh"}, x, h), "params lacks"),
        (lambda p, x, h: (p, x, h[:-1]), "h must be"),
        (lambda p, x, h: (p, x[0], h), "x must be"),
    ],
)
def test_gru_cell_refuses_mismatched_shapes(change, message):
    rng = np.random.RandomState(4)
    args = change(gru_params(4), rng.normal(size=(N, IN)), rng.normal(size=(N, H)))
    with pytest.raises(ValueError, match=message):
        recurrent.gru_cell(*args)


# ------------------------------------------------------------------ the encoder-decoder
def small_model(kind, **kwargs):
    return recurrent.EncoderDecoder(kind, 9, 8, embedding=3, hidden=4, units=3, **kwargs)


def small_batch(seed=0, n=2, m=5):
    rng = np.random.RandomState(seed)
    return rng.randint(3, 9, (n, m)), np.concatenate(
        [rng.randint(3, 8, (n, m)), np.full((n, 1), 2)], axis=1
    )


@pytest.mark.parametrize("kind", recurrent.KINDS)
def test_encoder_decoder_backward_matches_finite_differences(kind):
    model, data = small_model(kind), small_batch(m=4)
    params = model.init(1)
    _, grads = model.loss_and_grads(params, data)
    for name, value in params.items():
        numeric = numeric_gradient(lambda: model.loss_and_grads(params, data)[0], value)
        np.testing.assert_allclose(grads[name], numeric, atol=1e-8, err_msg=name)


def test_encoder_decoder_parameters_carry_torchs_module_names():
    gru = ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    cell = ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    names = set(small_model("Bahdanau").init(0))
    assert {"encoder." + n for n in gru} | {"encoder." + n + "_reverse" for n in gru} <= names
    assert {"decoder." + n for n in cell} <= names
    luong = small_model("Luong").init(0)
    assert not any(n.endswith("_reverse") for n in luong)
    assert luong["decoder.weight_ih"].shape == (12, 3)  # 3H rows; the previous word only
    assert small_model("Luong, input feeding").init(0)["decoder.weight_ih"].shape == (12, 3 + 4)
    assert small_model("Bahdanau").init(0)["decoder.weight_ih"].shape == (12, 3 + 8)


@pytest.mark.parametrize("kind", recurrent.KINDS)
def test_teacher_forcing_equals_one_step_at_a_time(kind):
    """forward's logits (Luong's attention computed after the recurrence) equal step-by-step
    decoding fed the true previous words, the way greedy decoding runs."""
    model, (source, target) = small_model(kind), small_batch(2)
    params = model.init(3)
    out = model.forward(params, (source, target))
    logits, record = out.output, out.parts["record"]
    state = model.decoder_start(params, source)
    previous = np.concatenate([np.full((len(source), 1), 1), target[:, :-1]], axis=1)
    for i in range(target.shape[1]):
        expected, weights, state = model.decoder_next(params, state, previous[:, i], i)
        np.testing.assert_allclose(logits[:, i], expected, rtol=0, atol=1e-12)
        if weights is not None:
            np.testing.assert_allclose(record["weights"][:, i], weights)


def test_greedy_decoding_feeds_back_its_own_words():
    model, (source, _) = small_model("Luong, input feeding"), small_batch(4)
    params = model.init(5)
    ids, weights = model.greedy(params, source)
    assert ids.shape == (2, 6) and weights.shape == (2, 6, 5)
    logits = model.forward(params, (source, ids)).output  # teacher forcing on its own output
    np.testing.assert_array_equal(logits.argmax(axis=-1), ids)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0)


def test_training_lowers_the_loss_on_a_drawn_batch():
    from attention_measured.core import training
    from attention_measured.tasks import translation

    model = small_model("Bahdanau", batch=8)
    rng = np.random.RandomState(0)
    source = rng.randint(3, 9, (40, 4))
    target = np.c_[source[:, ::-1] - 1, [2] * 40]
    data = {4: translation.Corpus(source, target, np.tile(np.arange(4)[::-1], (40, 1)))}
    params = model.init(0)
    curve = training.fit(model, params, data, epochs=60, learning_rate=0.05)
    assert curve[-10:].mean() < 0.6 * curve[:10].mean()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: recurrent.EncoderDecoder("Vaswani", 9, 8), "kind"),
        (lambda: small_model("Luong").encode(small_model("Luong").init(0), [[3, 9]]), "source"),
        (
            lambda: small_model("Luong").forward(small_model("Luong").init(0), ([[3]], [[3], [4]])),
            "target",
        ),
        (
            lambda: small_model("fixed context").forward(
                small_model("fixed context").init(0), ([[3]], [[3]]), keep=np.ones((1, 1, 1), bool)
            ),
            "no attention",
        ),
        (lambda: small_model("Luong").loss_and_grads(small_model("Luong").init(0), {}), "rng"),
    ],
)
def test_encoder_decoder_refuses_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("kind", [k for k in recurrent.KINDS if k != "fixed context"])
def test_a_change_at_one_word_reaches_that_word_and_the_words_after_it(kind):
    model = small_model(kind)
    p, (source, target) = model.init(0), small_batch(n=3)
    own = model.forward(p, (source, target))
    keep = np.ones(own.weights.shape, dtype=bool)
    np.testing.assert_allclose(model.forward(p, (source, target), keep=keep).output, own.output)
    np.testing.assert_allclose(
        model.forward(p, (source, target), weights=own.weights).output, own.output, atol=1e-12
    )
    keep[:, 3, 0] = False  # word 3 may not read source word 0
    changed = model.forward(p, (source, target), keep=keep)
    np.testing.assert_array_equal(changed.output[:, :3], own.output[:, :3])
    assert np.all(changed.weights[:, 3, 0] == 0) and not np.allclose(
        changed.output[:, 3], own.output[:, 3]
    )
    with pytest.raises(ValueError, match="keep of shape"):
        model.forward(p, (source, target), keep=keep[:, :2])
