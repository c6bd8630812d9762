"""The core every Part shares: checks, Params, losses, measures, Dataset, optimisers, training."""

import math

import numpy as np
import pytest
from gradcheck import numeric_gradient

from attention_measured.core import attention, checks, data, losses, optim, training
from attention_measured.core.params import Params
from attention_measured.measures import removal
from attention_measured.models.protocol import Output


# ------------------------------------------------------------------ checks
@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: checks.integer(True, "n"), TypeError, "n must be an integer, got True"),
        (lambda: checks.integer(2.0, "n"), TypeError, "n must be an integer, got 2.0"),
        (
            lambda: checks.integer(0, "n", 1),
            ValueError,
            "n must be an integer of at least 1, got 0",
        ),
        (lambda: checks.integer(9, "n", None, 3), ValueError, "n must be an integer of at most 3"),
        (lambda: checks.integer(9, "n", 0, 3), ValueError, "n must be an integer between 0 and 3"),
        (lambda: checks.real("1", "rate"), TypeError, "rate must be a number"),
        (lambda: checks.real(math.nan, "rate"), ValueError, "rate must be a finite number"),
        (lambda: checks.real(0.0, "rate", positive=True), ValueError, "rate must be positive"),
        (
            lambda: checks.real(2.0, "beta", 0.0, 1.0),
            ValueError,
            "beta must be a number between 0.0 and",
        ),
        (lambda: checks.flag(1, "progress"), TypeError, "progress must be True or False"),
        (lambda: checks.choice("x", "kind", ("a", "b")), ValueError, "kind must be one of 'a'"),
        (lambda: checks.index(5, "example", 5), ValueError, "example must be an integer between"),
        (lambda: checks.array("abc", "x"), TypeError, "x must be an array of numbers"),
        (lambda: checks.array(["1", "2"], "x"), TypeError, "x must be an array of numbers"),
        (lambda: checks.array([True, False], "x"), TypeError, "x must be an array of real"),
        (lambda: checks.array([1 + 2j], "x"), TypeError, "x must be an array of real"),
        (lambda: checks.array([[1], [2, 3]], "x"), TypeError, "x must be an array of numbers"),
        (lambda: checks.array([1, 2], "x", ndim=2), ValueError, "x must have 2 axes"),
        (lambda: checks.array(np.ones((2, 3)), "x", shape=(None, 2)), ValueError, r"\(any, 2\)"),
        (lambda: checks.array([1, np.inf], "x"), ValueError, "x must hold finite numbers"),
        (lambda: checks.mask([1, 0], "keep"), TypeError, "keep must be boolean"),
        (lambda: checks.mask([True], "keep", (2,)), ValueError, r"keep must have shape \(2\)"),
        (lambda: checks.integers([1.0], "ids"), TypeError, "ids must hold integers"),
        (lambda: checks.integers([4], "ids", 0, 3), ValueError, "ids must hold integers between"),
        (
            lambda: checks.integers([-1], "ids", 0),
            ValueError,
            "ids must hold integers of at least 0",
        ),
        (
            lambda: checks.real(-1.0, "rate", 0.0),
            ValueError,
            "rate must be a number of at least 0.0",
        ),
    ],
)
def test_checks_name_the_argument_and_say_what_it_must_be(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_checks_hand_back_plain_values():
    assert checks.integer(np.int64(3), "n") == 3 and type(checks.integer(np.int64(3), "n")) is int
    assert checks.real(np.float32(0.5), "x") == 0.5 and type(checks.real(1, "x")) is float
    assert checks.seed(2**32 - 1) == 2**32 - 1
    with pytest.raises(ValueError, match="seed"):
        checks.seed(2**32)
    assert checks.array([1, 2], "x", finite=True).dtype == float
    assert np.isnan(checks.array([np.nan], "x", finite=False)[0])


# ------------------------------------------------------------------ Params
def test_params_are_named_arrays_read_as_attributes():
    p = Params(W=np.arange(6.0).reshape(2, 3), b=np.zeros(2))
    assert p.W is p["W"] and list(p) == ["W", "b"] and p.size == 8
    p.c = np.ones(1)
    assert list(p.arrays()) == ["W", "b", "c"] and p.size == 9
    with pytest.raises(AttributeError, match="no array named 'missing'"):
        p.missing  # noqa: B018
    copy = p.copy()
    copy.W[0, 0] = 99.0
    assert p.W[0, 0] == 0.0 and isinstance(copy, Params)
    assert "W: (2, 3)" in repr(p)


def test_select_takes_one_network_out_of_a_stack():
    stack = Params(W=np.arange(12.0).reshape(3, 2, 2), b=np.array([1.0, 2.0, 3.0]))
    one = stack.select(1)
    assert one.W.tolist() == [[4.0, 5.0], [6.0, 7.0]] and one.b.shape == () and one.b == 2.0
    assert one.size == 5 and stack.size == 15
    assert stack.select(slice(0, 2)).W.shape == (2, 2, 2)


# ------------------------------------------------------------------ losses
def test_binary_cross_entropy_by_hand_and_far_out():
    logits, labels = np.array([0.0, 2.0, -3.0]), np.array([1.0, 0.0, 0.0])
    by_hand = np.mean([math.log(2), math.log(1 + math.exp(2)), math.log(1 + math.exp(-3))])
    assert losses.binary_cross_entropy(logits, labels) == pytest.approx(by_hand, rel=1e-14)
    # a logit of 800 against label 0 costs 800, where 1 - sigmoid underflows
    assert losses.binary_cross_entropy(np.array([800.0]), np.array([0.0])) == 800.0
    loss, grad = losses.binary_cross_entropy_and_gradient(logits, labels)
    assert loss == pytest.approx(by_hand, rel=1e-14)
    numeric = numeric_gradient(lambda: losses.binary_cross_entropy(logits, labels), logits)
    np.testing.assert_allclose(grad, numeric, atol=1e-9)
    assert losses.sigmoid(40.0) == losses.sigmoid(30.0)  # clipped at 30, as the lesson does


def test_softmax_cross_entropy_by_hand_and_its_gradient():
    logits = np.array([[1.0, 2.0, 3.0], [1000.0, 0.0, -1000.0]])
    targets = np.array([0, 1])
    row, grad = losses.softmax_cross_entropy(logits, targets)
    first = -math.log(math.exp(1) / (math.exp(1) + math.exp(2) + math.exp(3)))
    assert row[0] == pytest.approx(first, rel=1e-14) and row[1] == pytest.approx(1000.0)
    np.testing.assert_allclose(np.exp(losses.log_softmax(logits)).sum(axis=-1), 1.0)

    def total():
        return float(losses.softmax_cross_entropy(logits[:1], targets[:1])[0].sum())

    numeric = numeric_gradient(total, logits[:1])
    np.testing.assert_allclose(grad[:1], numeric, atol=1e-9)


def test_softmax_and_summed_cross_entropy_match_the_two_apart_to_the_last_bit():
    rng = np.random.RandomState(3)
    logits, targets = rng.normal(0, 4, (37, 11)), rng.randint(0, 11, 37)
    probs, loss = losses.softmax_and_summed_cross_entropy(logits, targets)
    np.testing.assert_array_equal(probs, attention.softmax(logits))
    apart = -losses.log_softmax(logits)[np.arange(37), targets].sum()
    assert loss == float(apart)  # the same float, not merely close
    with pytest.raises(ValueError, match="targets must hold one class per row"):
        losses.softmax_and_summed_cross_entropy(logits, targets[:5])
    with pytest.raises(ValueError, match="targets"):
        losses.softmax_and_summed_cross_entropy(logits, np.full(37, 11))
    with pytest.raises(ValueError, match="logits"):
        losses.softmax_and_summed_cross_entropy(logits[0], targets[:1])


def test_output_loss_picks_the_loss_by_kind():
    out, targets = np.array([0.5, -1.0]), np.array([1.0, 0.0])
    assert losses.output_loss(out, targets, "mse")[0] == pytest.approx((0.25 + 1.0) / 2)
    np.testing.assert_allclose(losses.output_loss(out, targets, "mse")[1], [-0.5, -1.0])
    assert losses.output_loss(out, targets, "bce")[0] == losses.binary_cross_entropy(out, targets)
    with pytest.raises(ValueError, match="kind must be one of 'bce', 'mse'"):
        losses.output_loss(out, targets, "hinge")


# ------------------------------------------------------------------ measures
def test_effects_and_agreement_on_a_case_worked_by_hand():
    p = np.array([0.9, 0.2])
    p_without = np.array([[0.1, 0.85, 0.9], [0.2, 0.25, 0.6]])
    effects = removal.effects(p, p_without)
    np.testing.assert_allclose(effects, [[0.8, 0.05, 0.0], [0.0, 0.05, 0.4]])
    weights = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]])
    # example 0: heaviest step 0 moves p most; example 1: heaviest step 1, most moving step 2
    assert removal.agreement(weights, effects) == 0.5
    stacked = removal.agreement(np.stack([weights, weights[:, ::-1]]), np.stack([effects] * 2))
    assert stacked.tolist() == [0.5, 0.0]
    with pytest.raises(ValueError, match="more axes after it"):
        removal.effects(p, p_without[0])
    # two sets of weights per example (heads): each effect is measured against the one p
    heads = removal.effects(p, np.stack([p_without, p_without[:, ::-1]], axis=1))
    np.testing.assert_allclose(heads[:, 0], effects)
    np.testing.assert_allclose(heads[1, 1], [0.4, 0.05, 0.0])
    with pytest.raises(ValueError, match="one shape"):
        removal.agreement(weights, effects[:, :2])


class _Averaging:
    """A model of the book's protocol worked by hand: its weights are uniform over the steps it
    may attend to, its output the mean of their values, one row of weights per example or Q."""

    output_kind = "value"

    def __init__(self, rows=None):
        self.rows = rows

    def forward(self, params, inputs, *, keep=None, weights=None, scale=None):
        shape = inputs.shape if self.rows is None else (len(inputs), self.rows, inputs.shape[1])
        keep = np.broadcast_to(True if keep is None else keep, shape)
        weights = keep / keep.sum(axis=-1, keepdims=True)
        values = inputs if self.rows is None else inputs[:, None, :]
        output = (weights * values).sum(axis=-1)
        return Output(output if self.rows is None else output.sum(axis=1), weights)


def test_the_removal_test_for_any_model_on_a_case_worked_by_hand():
    values = np.array([[1.0, 0.0, 0.5], [0.2, 0.2, 0.8]])
    p, p_without = removal.removal_effects(_Averaging(), None, values)
    np.testing.assert_allclose(p, [0.5, 0.4])
    np.testing.assert_allclose(p_without, [[0.25, 0.75, 0.5], [0.5, 0.5, 0.2]])
    # with two rows of weights per example, a step is dropped from one row at a time
    p, p_without = removal.removal_effects(_Averaging(rows=2), None, values)
    assert p_without.shape == (2, 2, 3)
    np.testing.assert_allclose(p, [1.0, 0.8])
    np.testing.assert_allclose(p_without[0, 1], [0.25 + 0.5, 0.75 + 0.5, 0.5 + 0.5])
    with pytest.raises(TypeError, match="model must follow the book's protocol"):
        removal.removal_effects(lambda keep: values, None, values)


# ------------------------------------------------------------------ Dataset
def test_a_dataset_keeps_the_example_axis_when_indexed():
    d = data.Dataset(np.arange(12.0).reshape(3, 2, 2), np.array([0.0, 1.0, 0.0]), np.zeros((3, 1)))
    assert len(d) == 3 and d[1].inputs.shape == (1, 2, 2) and d[1].targets.tolist() == [1.0]
    assert d[-1].inputs.tolist() == [d.inputs[2].tolist()] and len(d[:2]) == 2
    assert d[np.array([2, 0])].targets.tolist() == [0.0, 0.0]
    with pytest.raises(IndexError, match="example index 3 out of range for 3 examples"):
        d[3]  # noqa: B018
    with pytest.raises(TypeError, match="index a Dataset"):
        d[True]  # noqa: B018
    with pytest.raises(ValueError, match="the same examples"):
        data.Dataset(np.zeros((3, 2, 2)), np.zeros(2), np.zeros((3, 1)))


# ------------------------------------------------------------------ optimisers
def test_gradient_descent_updates_the_callers_arrays_in_place():
    W = np.array([[1.0, 2.0], [3.0, 4.0]])
    params = Params(W=W, b=np.array(0.5))
    step = optim.GradientDescent(params, 0.1)
    step.step(Params(W=np.array([[1.0, 0.0], [0.0, -2.0]]), b=np.array(1.0)))
    assert params["W"] is W and params.W is W  # the same object, not a rebound copy
    np.testing.assert_allclose(W, [[0.9, 2.0], [3.0, 4.2]], rtol=1e-15)
    assert params.b == pytest.approx(0.4)
    step.step(Params(W=np.ones((2, 2)), b=np.array(0.0)), divisor=2)
    np.testing.assert_allclose(W, [[0.85, 1.95], [2.95, 4.15]], rtol=1e-15)
    assert step.iteration == 2


def test_adam_updates_the_callers_arrays_in_place():
    W, b = np.array([[1.0, -1.0]]), np.zeros(3)
    params = Params(W=W, b=b)
    before = W.copy()
    adam = optim.Adam(params, 0.01)
    adam.step(Params(W=np.array([[0.3, -0.2]]), b=np.array([0.0, 1.0, -1.0])))
    assert params["W"] is W and params["b"] is b
    assert not np.array_equal(W, before)
    # the first step of Adam moves every number with a gradient by the learning rate, against it
    np.testing.assert_allclose(W - before, [[-0.01, 0.01]], rtol=1e-6)
    np.testing.assert_allclose(b, [0.0, -0.01, 0.01], rtol=1e-6)


def test_two_adam_steps_equal_a_hand_computation_for_one_number():
    w = np.array([0.5])
    adam = optim.Adam(Params(w=w), 0.1)  # beta1 0.9, beta2 0.999, epsilon 1e-8
    adam.step(Params(w=np.array([0.2])))
    # m = 0.02, v = 4e-5; corrected 0.2 and 0.04: a step of 0.1 * 0.2 / (0.2 + 1e-8)
    assert w[0] == pytest.approx(0.5 - 0.1 * 0.2 / (0.2 + 1e-8), rel=1e-15)
    adam.step(Params(w=np.array([-0.1])))
    # m = 0.9 * 0.02 - 0.01 = 0.008, v = 0.999 * 4e-5 + 0.001 * 0.01 = 4.996e-5
    m_hat, v_hat = 0.008 / (1 - 0.9**2), 4.996e-5 / (1 - 0.999**2)
    second = 0.1 * m_hat / (math.sqrt(v_hat) + 1e-8)
    assert w[0] == pytest.approx(0.5 - 0.1 * 0.2 / (0.2 + 1e-8) - second, rel=1e-13)
    assert w[0] == pytest.approx(0.3733663027186757, rel=1e-13)


def test_adam_on_one_flat_vector_equals_adam_array_by_array_to_the_last_bit():
    rng = np.random.RandomState(5)
    shapes = {"E": (7, 3), "w": (3,), "empty": (0, 4), "W": (3, 5)}
    params = Params({name: rng.normal(size=shape) for name, shape in shapes.items()})
    by_hand = {name: value.copy() for name, value in params.items()}
    first = {name: np.zeros(shape) for name, shape in shapes.items()}
    second = {name: np.zeros(shape) for name, shape in shapes.items()}
    adam = optim.Adam(params, 0.05)
    for t in range(1, 6):
        grads = Params({name: rng.normal(size=shape) for name, shape in shapes.items()})
        adam.step(grads, divisor=3.0)
        for name, value in by_hand.items():  # Kingma and Ba's update, one array at a time
            g = grads[name] / 3.0
            first[name] = 0.9 * first[name] + (1 - 0.9) * g
            second[name] = 0.999 * second[name] + (1 - 0.999) * (g * g)
            value -= (
                0.05
                * (first[name] / (1 - 0.9**t))
                / (np.sqrt(second[name] / (1 - 0.999**t)) + 1e-8)
            )
        for name in shapes:
            np.testing.assert_array_equal(params[name], by_hand[name], err_msg=name)
            np.testing.assert_array_equal(adam.first[name], first[name], err_msg=name)
            np.testing.assert_array_equal(adam.second[name], second[name], err_msg=name)


@pytest.mark.parametrize("optimiser", [optim.Adam, optim.GradientDescent])
def test_the_optimisers_refuse_what_they_cannot_update_in_place(optimiser):
    with pytest.raises(ValueError, match="learning_rate must be a finite number"):
        optimiser(Params(w=np.zeros(2)), float("inf"))
    with pytest.raises(ValueError, match="learning_rate must be positive"):
        optimiser(Params(w=np.zeros(2)), 0.0)
    with pytest.raises(TypeError, match="'w' must be a writable float array"):
        optimiser(Params(w=np.zeros(2, dtype=int)), 0.1)
    frozen = np.zeros(2)
    frozen.flags.writeable = False
    with pytest.raises(TypeError, match="writable float array"):
        optimiser(Params(w=frozen), 0.1)
    with pytest.raises(TypeError, match="params must be a Params"):
        optimiser({"w": np.zeros(2)}, 0.1)


def test_adam_refuses_betas_without_a_bias_correction():
    with pytest.raises(ValueError, match="below 1"):
        optim.Adam(Params(w=np.zeros(1)), 0.1, beta1=1.0)
    with pytest.raises(ValueError, match="beta2 must be a number between"):
        optim.Adam(Params(w=np.zeros(1)), 0.1, beta2=1.5)


# ------------------------------------------------------------------ training
class Quadratic:
    """loss = mean of (w - target)^2 / 2 over the targets, for one number w; gradient w - mean."""

    def init(self, seed):
        return Params(w=np.array([float(seed)]))

    def loss_and_grads(self, params, data, targets):
        error = params.w[0] - np.asarray(targets)
        return float(np.mean(error**2) / 2), Params(w=np.array([np.mean(error)]))


def test_fit_trains_in_place_and_returns_the_loss_before_each_step():
    params = Params(w=np.array([4.0]))
    w = params.w
    curve = training.fit(
        Quadratic(), params, None, np.array([1.0, 3.0]), 3, 0.5, optimiser="gradient descent"
    )
    # w: 4 -> 3 -> 2.5 -> 2.25 (half way to 2 each step); loss = ((w-1)^2 + (w-3)^2) / 4
    np.testing.assert_allclose(curve, [2.5, 1.0, 0.625], rtol=1e-15)
    assert params.w is w and w[0] == 2.25


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"learning_rate": float("inf")}, ValueError, "learning_rate must be a finite number"),
        ({"learning_rate": -0.1}, ValueError, "learning_rate must be positive"),
        ({"epochs": 0}, ValueError, "epochs must be an integer between 1 and 100000"),
        ({"seed": -1}, ValueError, "seed must be an integer between 0"),
        ({"progress": "no"}, TypeError, "progress must be True or False"),
        ({"optimiser": "sgd"}, ValueError, "optimiser must be one of 'adam', 'gradient descent'"),
    ],
)
def test_fit_refuses_bad_settings(kwargs, error, message):
    params = Params(w=np.array([1.0]))
    with pytest.raises(error, match=message):
        training.fit(Quadratic(), params, None, np.zeros(2), **{"epochs": 2, **kwargs})
    assert params.w[0] == 1.0  # refused before any step


def test_trained_remembers_and_hands_out_copies():
    model, first_params, first_curve = training.trained(Quadratic(), 3, None, np.zeros(2), 4, 0.1)
    assert isinstance(model, Quadratic) and first_curve.shape == (4,)
    by_hand = Quadratic().init(3)
    training.fit(Quadratic(), by_hand, None, np.zeros(2), 4, 0.1)
    np.testing.assert_array_equal(first_params.w, by_hand.w)
    first_params.w[:] = -7.0  # a caller spoils its copy
    again = training.trained(Quadratic(), 3, None, np.zeros(2), 4, 0.1).params
    np.testing.assert_array_equal(again.w, by_hand.w)
    with pytest.raises(TypeError, match="seed must be an integer"):
        training.trained(Quadratic(), 1.5, None, np.zeros(2), 4, 0.1)
    run = training.Trained("model", by_hand, first_curve)
    assert run.model == "model" and run.params is by_hand and run.curve is first_curve


class NoisyQuadratic(Quadratic):
    """Quadratic with a target drawn afresh at each step: a model that draws while it trains."""

    draws = True

    def loss_and_grads(self, params, data, rng, baseline):
        return super().loss_and_grads(params, data, rng.normal(size=2))


def test_trained_draws_from_its_draws_seed_the_same_for_every_seed_by_default():
    for seed, draws_seed in ((2, 0), (2, 5), (3, 0)):
        by_hand = NoisyQuadratic().init(seed)
        curve = training.fit(NoisyQuadratic(), by_hand, None, None, 4, 0.1, seed=draws_seed)
        options = {"draws_seed": draws_seed} if draws_seed else {}
        _, params, again = training.trained(NoisyQuadratic(), seed, None, None, 4, 0.1, **options)
        np.testing.assert_array_equal(params.w, by_hand.w)
        np.testing.assert_array_equal(again, curve)


# ------------------------------------------------------------------ the oracles stay independent
@pytest.mark.parametrize("oracle", ["single_query_oracle.py", "cloze_head_oracle.py"])
def test_the_loop_oracles_share_no_code_with_the_library(oracle):
    import ast
    from pathlib import Path

    tree = ast.parse((Path(__file__).parent / oracle).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0] if node.level == 0 else ".")
    assert imported <= {"__future__", "math", "numpy"}, imported


# ------------------------------------------------------------------ the worst bad inputs refused
def _head_model():
    from attention_measured.models import order_reader

    model = order_reader.OrderReader("sinusoidal", vocabulary=4, length=5, size=4)
    return model, model.init(0), np.zeros((2, 5), dtype=int)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: losses.binary_cross_entropy(np.zeros(3), [0, 2, 1]), ValueError, "labels must"),
        (lambda: losses.binary_cross_entropy([0.0, np.nan], [0, 1]), ValueError, "logit must"),
        (lambda: losses.softmax_cross_entropy(np.zeros((2, 3)), [0, -1]), ValueError, "targets"),
        (lambda: losses.softmax_cross_entropy(np.zeros((2, 3)), [0, 3]), ValueError, "targets"),
        (lambda: losses.softmax_cross_entropy(np.zeros((2, 3)), [0.0, 1.0]), TypeError, "targets"),
        (lambda: losses.output_loss(np.zeros(2), [0, 1], 3), TypeError, "kind must be a name"),
        (lambda: attention.softmax([0.0, np.nan]), ValueError, "scores must not hold NaN"),
        (lambda: attention.softmax([[0.0, np.nan]], [[True, False]]), ValueError, "NaN"),
        (lambda: attention.softmax("0.5"), TypeError, "scores must be an array"),
        (
            lambda: attention.scaled_dot_product_attention(
                np.ones((1, 2)), np.full((3, 2), np.inf), np.ones((3, 2))
            ),
            ValueError,
            "k must hold finite numbers",
        ),
        (
            lambda: _head_model()[0].forward(
                _head_model()[1], _head_model()[2], use_positions="False"
            ),
            TypeError,
            "use_positions must be True or False",
        ),
    ],
)
def test_the_worst_bad_inputs_are_refused_naming_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


def _import(name):
    import importlib

    return importlib.import_module(f"attention_measured.{name}")


class _Quadratic:
    """A model with nothing to check of its own: fit's checks are the only ones it meets."""

    def loss_and_grads(self, params, data, targets):
        return float(np.sum(params.w**2)), Params(w=2 * params.w)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: losses.sigmoid([0.0, np.nan]), ValueError, "logit must hold finite"),
        (lambda: losses.sigmoid("1"), TypeError, "logit must be an array"),
        (lambda: Params(w=np.zeros((3, 2))).select(-1), ValueError, "index must be an integer"),
        (lambda: Params(w=np.zeros((3, 2))).select(True), TypeError, "index must be an integer"),
        (lambda: Params(w=np.zeros((3, 2))).select([0, 5]), ValueError, "index must hold"),
        (
            lambda: _import("machinery.blas").one_thread("f"),
            TypeError,
            "function must be a function",
        ),
        (lambda: _import("book.plots").styled(None), TypeError, "function must be a function"),
        (
            lambda: _import("machinery.cache").remembered(ignore="progress"),
            TypeError,
            "ignore must be",
        ),
        (
            lambda: _import("machinery.cache").remembered(len, ignore=("x",)),
            ValueError,
            "ignore names",
        ),
        (
            lambda: _import("machinery.cache").dependencies("lessons"),
            ValueError,
            "module must name",
        ),
        (lambda: checks.seed(3, below="10"), TypeError, "below must be an integer"),
        (lambda: checks.seeds([]), ValueError, "seeds must be a non-empty"),
        (lambda: checks.index(0, "row", 2.5), TypeError, "size must be an integer"),
        (
            lambda: (
                _import("models.single_query")
                .SingleQuery()
                .forward(
                    _import("models.single_query").SingleQuery().init(0),
                    np.zeros((1, 12, 2)),
                    keep="step 3",
                )
            ),
            TypeError,
            "keep must be boolean",
        ),
        (lambda: checks.seeds("01"), ValueError, "seeds must be a non-empty"),
        (lambda: attention.padding_mask([], 3), ValueError, "lengths must be a non-empty"),
        (
            lambda: training.fit(_Quadratic(), Params(w=np.ones(2)), "data"),
            TypeError,
            "data must be",
        ),
        (
            lambda: training.fit(_Quadratic(), Params(w=np.ones(2)), None, [True, False]),
            TypeError,
            "targets must be numbers",
        ),
        (
            lambda: training.fit(_Quadratic(), Params(w=np.ones(2)), None, [0.0, np.nan]),
            ValueError,
            "targets must be finite",
        ),
        (
            lambda: losses.binary_cross_entropy_and_gradient(np.zeros((1, 3)), [0, 1, 0]),
            ValueError,
            "logit must have 1 axes",
        ),
        (
            lambda: losses.binary_cross_entropy_and_gradient(np.zeros(3), [0, 1]),
            ValueError,
            "labels must hold one label per logit",
        ),
        (
            lambda: removal.agreement(np.full((2, 3), 1 / 3), np.zeros(3)),
            ValueError,
            "removal_effects",
        ),
    ],
)
def test_what_the_probe_found_silent_or_unnamed_is_refused(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_an_ignored_flag_is_checked_even_when_the_result_is_remembered():
    from attention_measured.machinery import cache

    @cache.remembered(ignore=("progress",))
    def doubled(x, progress=False):
        return 2 * x

    assert doubled(2) == 4
    with pytest.raises(TypeError, match="progress must be True or False"):
        doubled(2, progress="yes")


def test_an_optimiser_refuses_a_gradient_it_would_write_nan_with():
    for optimiser in (optim.Adam, optim.GradientDescent):
        params = Params(w=np.array([1.0, 2.0]))
        step = optimiser(params, 0.1)
        with pytest.raises(ValueError, match=r"grads\['w'\] holds NaN"):
            step.step(Params(w=np.array([0.5, np.nan])))
        with pytest.raises(ValueError, match="grads has no gradient for 'w'"):
            step.step(Params(v=np.array([0.5, 0.5])))
        assert params.w.tolist() == [1.0, 2.0]  # nothing was written


def test_fit_checks_its_first_step_and_trusts_the_rest():
    # inside checks.trusted a float array is not scanned again; outside, a NaN is refused
    with checks.trusted():
        assert np.isnan(checks.array(np.array([np.nan]), "x")[0])
    with pytest.raises(ValueError, match="x must hold finite"):
        checks.array(np.array([np.nan]), "x")
    seen = []

    class Recorder:
        def init(self, seed):
            return Params(w=np.array([1.0]))

        def loss_and_grads(self, params, data):
            try:  # a NaN is refused only when the step is checked
                checks.array(np.array([np.nan]), "probe")
                seen.append("trusted")
            except ValueError:
                seen.append("checked")
            return float(params.w[0] ** 2), Params(w=2 * params.w)

    training.fit(Recorder(), Recorder().init(0), None, epochs=3, learning_rate=0.1)
    assert seen == ["checked", "trusted", "trusted"]
