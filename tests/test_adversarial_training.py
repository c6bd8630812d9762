"""Wiegreffe and Pinter's adversarial training (Part V, section 2): its loss against theirs, its
gradients by finite differences, and what it does at the ends of its sweep."""

import numpy as np
import pytest
from gradcheck import numeric_gradient

from attention_measured.core.losses import sigmoid
from attention_measured.core.params import Params
from attention_measured.experiments import adversary_runs, marked_step_runs
from attention_measured.measures import explanations
from attention_measured.models import reader, single_query
from attention_measured.tasks import marked_step

NETWORKS = {  # any model of the protocol whose backward takes a gradient for its weights
    "Part I network": lambda steps: single_query.SingleQuery(),
    "additive": lambda steps: reader.Reader("additive", steps=steps),
    "local-p (general)": lambda steps: reader.Reader("local-p (general)", steps=steps),
    "location": lambda steps: reader.Reader("location", steps=steps),
}


def _initial(network, seed):
    """A network's initial parameters as arrays that can be changed in place."""
    return Params({name: np.array(value) for name, value in network.init(seed).items()})


def their_loss(p, p_base, attention, attention_base, their_lambda):
    """sarahwie/attention, model/Binary_Classification.py, re-typed in numpy: batch_tvd sums
    ½|p − p_base| over the batch, nn.KLDivLoss(log target, attn, reduction="sum") sums
    attn (log attn − log target)."""
    tvd = (0.5 * np.abs(p - p_base)).sum()
    kl = (attention * (np.log(attention) - np.log(attention_base))).sum()
    return tvd - their_lambda * kl


@pytest.mark.parametrize("name", NETWORKS)
def test_the_adversarial_loss_is_theirs_rescaled_and_its_gradients_match_finite_differences(
    name,
):
    rng = np.random.RandomState(3)
    x = rng.normal(size=(7, 5, 2))
    network = NETWORKS[name](5)
    base, params = _initial(network, 1), _initial(network, 2)
    own = network.forward(base, x)
    logit, weights = own.output, own.weights
    # the book's λ is twice theirs (their TVD is half the two-class one) and its sums are means
    loss = adversary_runs.Adversarial(network, 0.3, sigmoid(logit), weights)
    value, grads = loss.loss_and_grads(params, x)
    new = network.forward(params, x)
    new_logit, new_weights = new.output, new.weights
    if name != "local-p (general)":  # their code compares the weights themselves
        expected = their_loss(sigmoid(new_logit), sigmoid(logit), new_weights, weights, 0.15)
        assert value == pytest.approx(2 / len(x) * expected, abs=1e-8)
    for key in params:
        numeric = numeric_gradient(lambda: loss.loss_and_grads(params, x)[0], params[key])
        np.testing.assert_allclose(grads[key], numeric, atol=1e-7, err_msg=key)


def test_tvd_and_kl_against_their_definitions():
    p, q = np.array([0.9, 0.2, 0.5]), np.array([0.6, 0.2, 0.1])
    two_classes = 0.5 * (np.abs(p - q) + np.abs((1 - p) - (1 - q)))
    np.testing.assert_allclose(explanations.output_change(p, q), two_classes)
    a = np.array([[0.7, 0.2, 0.1], [0.0, 1.0, 0.0]])
    b = np.array([[0.2, 0.3, 0.5], [0.5, 0.5, 0.0]])
    # row 1 by hand: 0 log 0 is 0, and 1 · (log 1 − log 0.5) = log 2
    hand = [0.7 * np.log(0.7 / 0.2) + 0.2 * np.log(0.2 / 0.3) + 0.1 * np.log(0.1 / 0.5), np.log(2)]
    np.testing.assert_allclose(adversary_runs.kl(a, b), hand, atol=1e-8)
    # a step the base gives nothing costs a finite amount, as in their kld: log(1e-10)
    expected = 0.5 * np.log(0.5 / 1e-10) + 0.5 * np.log(0.5 / 1.0)
    assert adversary_runs.kl(b[1:], a[1:])[0] == pytest.approx(expected, rel=1e-6)


def test_bad_arguments_are_refused_by_name():
    network = single_query.SingleQuery()
    with pytest.raises(TypeError, match="model must answer a logit"):
        adversary_runs.Adversarial(reader.Reader("dot", loss="mse"), 1.0, [0.5], [[1.0]])
    with pytest.raises(ValueError, match="strength"):
        adversary_runs.Adversarial(network, -1.0, np.full(3, 0.5), np.full((3, 4), 0.25))
    with pytest.raises(ValueError, match="base_weights"):
        adversary_runs.Adversarial(network, 1.0, np.full(3, 0.5), np.full(4, 0.25))
    with pytest.raises(ValueError, match="model"):
        adversary_runs.report("no such model", 0, 0.0)
    with pytest.raises(ValueError, match="seed"):
        adversary_runs.report("Part I network", 0, 0.0)
    with pytest.raises(ValueError, match="must be one shape"):
        explanations.output_change(np.full(3, 0.5), np.full(4, 0.5))


def test_backward_from_the_logits_gives_the_training_gradients():
    train = marked_step.split(marked_step.make_sequences())[0]
    model = single_query.SingleQuery()
    params = model.init(marked_step_runs.INIT_SEEDS)
    out = model.forward(params, train.inputs)
    grad_logit = (sigmoid(out.output) - train.labels) / len(train.labels)
    ours = model.backward(params, train.inputs, out, grad_logit)
    theirs = model.loss_and_grads(params, train.inputs, train.labels)[1]
    for key in theirs:
        np.testing.assert_array_equal(ours[key], theirs[key])


@pytest.mark.parametrize(
    "model, seed", [("additive", 0), ("Part I network", marked_step_runs.INIT_SEEDS[0])]
)
def test_at_lambda_zero_the_adversary_is_its_base_and_each_report_is_measured(model, seed):
    """It starts at the base, where every |Δp| is 0 and so is its gradient: it never moves."""
    report = adversary_runs.report(model, seed, 0.0)
    assert report["JSD"] == 0.0 and report["TVD"] == 0.0
    assert report["accuracy"] == report["base accuracy"]
    network, base, _, heldout = adversary_runs._base(model, seed)
    params = adversary_runs.adversary(model, seed, 0.01).params
    new, own = network.forward(params, heldout.inputs), network.forward(base, heldout.inputs)
    logit, weights, base_logit, base_weights = new.output, new.weights, own.output, own.weights
    measured = adversary_runs.report(model, seed, 0.01)
    divergence = explanations.jensen_shannon(weights, base_weights)
    assert measured["JSD"] == pytest.approx(np.median(divergence))
    assert measured["TVD"] == pytest.approx(np.abs(sigmoid(logit) - sigmoid(base_logit)).mean())
    assert measured["accuracy"] == pytest.approx(((logit > 0) == heldout.labels).mean())
    assert 0.0 <= adversary_runs.reached(model, seed) <= np.log(2)
