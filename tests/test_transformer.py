import numpy as np
import pytest
from gradcheck import numeric_gradient

from attention_measured import transformer


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


@pytest.mark.parametrize(
    "params, x, message",
    [
        ({"weight": np.ones(4)}, np.ones((2, 4)), "missing 'bias'"),
        ({"weight": np.ones(3), "bias": np.zeros(4)}, np.ones((2, 4)), "must be"),
        ({"weight": np.ones(4), "bias": np.zeros(4)}, np.ones((2, 5)), "must be"),
    ],
)
def test_layer_norm_refuses_mismatched_parameters(params, x, message):
    with pytest.raises(ValueError, match=message):
        transformer.layer_norm(params, x)
