import numpy as np
import pytest
from gradcheck import numeric_gradient

from attention_measured import recurrent
from attention_measured.losses import sigmoid

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


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda p, x, h: (dict(p, weight_hh=p["weight_hh"][:-1]), x, h), "weight_hh"),
        (lambda p, x, h: (dict(p, weight_ih=p["weight_ih"][:, :-1]), x, h), "x must be"),
        (lambda p, x, h: (dict(p, bias_ih=p["bias_ih"][:-1]), x, h), "bias_ih"),
        (lambda p, x, h: ({k: v for k, v in p.items() if k != "bias_hh"}, x, h), "missing"),
        (lambda p, x, h: (p, x, h[:-1]), "h must be"),
        (lambda p, x, h: (p, x[0], h), "x must be"),
    ],
)
def test_gru_cell_refuses_mismatched_shapes(change, message):
    rng = np.random.RandomState(4)
    args = change(gru_params(4), rng.normal(size=(N, IN)), rng.normal(size=(N, H)))
    with pytest.raises(ValueError, match=message):
        recurrent.gru_cell(*args)
