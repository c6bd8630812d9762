import numpy as np
import pytest
import single_query_oracle as oracle
from gradcheck import numeric_gradient

from attention_measured.book import marked_step_explorers
from attention_measured.core.losses import sigmoid
from attention_measured.experiments import marked_step_runs
from attention_measured.measures import markers, removal
from attention_measured.models import single_query
from attention_measured.tasks import marked_step

MODEL = single_query.SingleQuery()

LESSON = {  # the lesson's printed numbers, to 4 places
    "baseline": 0.6333,
    "runs": [
        {
            "train_accuracy": 0.9028,
            "heldout_accuracy": 0.8889,
            "marker_weight": 0.2721,
            "marker_hit_rate": 0.3444,
            "agreement": 0.5889,
            "effect_of_heaviest": 0.3318,
            "heavy_count": 81,
            "heavy_inert_count": 27,
        },
        {
            "train_accuracy": 0.9889,
            "heldout_accuracy": 0.9944,
            "marker_weight": 0.9691,
            "marker_hit_rate": 1.0000,
            "agreement": 1.0000,
            "effect_of_heaviest": 0.4081,
            "heavy_count": 180,
            "heavy_inert_count": 43,
        },
    ],
}


@pytest.fixture(scope="module")
def data():
    return marked_step.make_sequences()


def test_summary_reproduces_the_lessons_eighteen_numbers():
    result = marked_step_runs.summary()
    assert round(result["baseline"], 4) == LESSON["baseline"]
    assert len(result["runs"]) == 2
    for got, want in zip(result["runs"], LESSON["runs"]):
        assert set(got) == set(want)
        for key, value in want.items():
            if isinstance(value, int):
                assert isinstance(got[key], int) and got[key] == value, key
            else:
                assert isinstance(got[key], float) and round(got[key], 4) == value, key


def test_the_data_facts_of_section_one(data):
    assert data.readings.shape == (720, 12)
    assert np.all(data.readings[:, 0] == 0.0)
    assert data.markers.min() == 2 and data.markers.max() == 11
    heldout = marked_step.split(data)[2]
    assert round(float(np.mean(heldout.labels)), 4) == 0.3667
    above = (data.readings[:, 2:] > marked_step.THRESHOLD).any(axis=1)
    assert round(float(above.mean()), 4) == 0.9903
    largest = 2 + heldout.readings[:, 2:].argmax(axis=1)
    assert round(float(np.mean(largest == heldout.markers)), 4) == 0.0611


@pytest.mark.parametrize("seed", [20260218, 4])
def test_sequences_equal_the_loop_oracle(seed):
    data = marked_step.make_sequences(50, seed)
    for i, (inputs, label, marker) in enumerate(oracle.sequences(50, seed)):
        assert data.inputs[i].tolist() == inputs  # bit for bit, rounding included
        assert data.labels[i] == label and data.markers[i] == marker


def test_initial_weights_equal_the_oracle():
    params = MODEL.init([11, 20260219])
    for r, seed in enumerate([11, 20260219]):
        net = oracle.initial(seed)
        assert params.W_K[r].tolist() == net["wk"]
        assert params.W_V[r].tolist() == net["wv"]
        assert params.query[r].tolist() == net["q"] and params.readout[r].tolist() == net["w"]
    one = params.select(0)
    assert one.size == 19 and params.size == 2 * 19
    assert one.query.tolist() == params.query[0].tolist() and one.bias.shape == ()


def test_other_seeds_agree_with_the_loop_oracle():
    data_seed, seeds, epochs = 777, (5, 6), 12
    expected = oracle.summary(data_seed, seeds, epochs)
    train_set, _, heldout = marked_step.split(marked_step.make_sequences(seed=data_seed))
    params = marked_step_runs.train_runs(seeds, train_set, epochs).params
    for r, seed in enumerate(seeds):
        net = oracle.train(seed, oracle.sequences(720, data_seed)[:360], epochs)
        np.testing.assert_allclose(params.W_K[r], net["wk"], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(params.query[r], net["q"], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(params.bias[r], net["b"], rtol=1e-10, atol=1e-12)
    got = markers.eight_numbers(MODEL, params, train_set, heldout)
    assert marked_step.majority_baseline(heldout.labels) == pytest.approx(expected["baseline"])
    for g, e in zip(got, expected["runs"]):
        assert g == pytest.approx(e, rel=1e-9, abs=1e-12)


def test_backward_matches_finite_differences(data):
    train_set = marked_step.split(data)[0][:40]
    params = MODEL.init([3, 4])
    params.bias[:] = [0.3, -0.2]
    inputs, labels = train_set.inputs, train_set.labels
    grads = MODEL.loss_and_grads(params, inputs, labels)[1]
    assert (
        list(grads)
        == list(params)
        == [
            "W_K",
            "W_V",
            "query",
            "readout",
            "bias",
        ]
    )
    for name, x in params.items():
        numeric = numeric_gradient(lambda: MODEL.loss_and_grads(params, inputs, labels)[0].sum(), x)
        np.testing.assert_allclose(grads[name], numeric, atol=1e-8, err_msg=name)
        assert np.abs(numeric).max() > 1e-4, name  # a gradient worth checking


def test_forward_equals_keys_queries_and_values_written_out(data):
    params = MODEL.init([9]).select(0)
    inputs = data[:5].inputs
    keys = np.einsum("dc,ntc->ntd", params.W_K, inputs)  # k_t = W_K x_t
    values = np.einsum("dc,ntc->ntd", params.W_V, inputs)
    scores = keys @ params.query / np.sqrt(3)
    weights = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    logit = np.einsum("nt,ntd->nd", weights, values) @ params.readout + params.bias
    fwd = MODEL.forward(params, inputs)
    np.testing.assert_allclose(fwd.weights, weights, rtol=1e-12)
    np.testing.assert_allclose(fwd.output, logit, rtol=1e-12)


def test_removal_effects_recompute_the_softmax_without_the_step(data):
    params = marked_step_runs.train(20260220).params
    example = marked_step.split(data)[2][0]
    p, without = MODEL.removal_effects(params, example.inputs)
    for t in (0, 5, 11):
        keep = np.arange(12) != t
        np.testing.assert_allclose(
            without[0, t], sigmoid(MODEL.forward(params, example.inputs, keep=keep).output)[0]
        )


def test_the_analytic_removal_test_equals_the_generic_one(data):
    params = marked_step_runs.train(20260220).params
    inputs = marked_step.split(data)[2].inputs[:40]
    fast = MODEL.removal_effects(params, inputs)
    generic = removal.removal_effects(MODEL, params, inputs)
    for a, b in zip(fast, generic):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_the_network_takes_part_fives_changes(data):
    params = marked_step_runs.train(20260220).params
    x = marked_step.split(data)[2].inputs[:30]
    own = MODEL.forward(params, x)
    np.testing.assert_allclose(
        MODEL.forward(params, x, weights=own.weights).output, own.output, rtol=1e-12
    )
    scale = np.ones(x.shape[:2])
    scale[:, 0] = 3.0
    tripled = x.copy()
    tripled[:, 0] *= 3.0
    np.testing.assert_allclose(
        MODEL.forward(params, x, scale=scale).output,
        MODEL.forward(params, tripled).output,
    )
    with pytest.raises(ValueError, match="scale must have shape"):
        MODEL.forward(params, x, scale=scale[0])


def test_sweep_matches_single_runs():
    result = marked_step_runs.sweep([20260219, 20260220, 31])
    single = marked_step_runs.summary(init_seeds=(20260219, 20260220, 31))["runs"]
    for key in ("heldout_accuracy", "marker_weight", "agreement"):
        np.testing.assert_allclose(result[key], [r[key] for r in single], rtol=1e-12)
    assert result["seeds"].tolist() == [20260219, 20260220, 31]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: marked_step_runs.train(1.5), TypeError, "seed must be an integer"),
        (
            lambda: marked_step_runs.train(3, epochs=0),
            ValueError,
            "epochs must be an integer between 1 and 100000",
        ),
        (lambda: marked_step_runs.train(3, epochs=-4), ValueError, "epochs"),
        (lambda: marked_step_runs.train(3, epochs=2.0), TypeError, "epochs must be an integer"),
        (
            lambda: marked_step_runs.train(3, learning_rate=0),
            ValueError,
            "learning_rate must be positive",
        ),
        (lambda: marked_step_runs.train(3, learning_rate="0.6"), TypeError, "learning_rate"),
        (lambda: marked_step_runs.sweep([]), ValueError, "non-empty"),
        (lambda: marked_step_runs.sweep(5), ValueError, "non-empty"),
        (
            lambda: marked_step_runs.summary(init_seeds=("a",)),
            TypeError,
            "init_seeds must be an integer",
        ),
        (
            lambda: marked_step.make_sequences(seed=-3),
            ValueError,
            "seed must be an integer between 0",
        ),
        (lambda: marked_step.make_sequences(1.5), TypeError, "n must be an integer"),
        (
            lambda: marked_step.check_step(12),
            ValueError,
            "step must be an integer between 0 and 11",
        ),
        (lambda: marked_step.check_step(-1), ValueError, "between 0 and 11"),
        (lambda: marked_step.make_sequences(10)[10], IndexError, "example index 10"),
        (lambda: marked_step.make_sequences(10)[True], TypeError, "index a Dataset"),
        (lambda: marked_step.split(marked_step.make_sequences(10)), ValueError, "expected 720"),
        (lambda: marked_step.majority_baseline([0, 2]), ValueError, "0s and 1s"),
    ],
)
def test_bad_arguments_raise_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_no_sequences_at_all_asks_for_at_least_one():
    with pytest.raises(ValueError, match="n must be an integer of at least 1, got 0") as info:
        marked_step.make_sequences(0)
    assert "None" not in str(info.value)


@pytest.mark.parametrize("index", [180, -1])
def test_an_example_outside_the_held_out_set_is_refused(index):
    with pytest.raises(ValueError, match="example_index must be an integer between 0 and 179"):
        marked_step_explorers.drop_report(index, 0)


def test_a_step_outside_the_sequence_is_refused():
    with pytest.raises(ValueError, match="step must be an integer between 0 and 11, got 12"):
        marked_step_explorers.drop_report(0, 12)
    with pytest.raises(TypeError, match="step must be an integer"):
        marked_step_explorers.drop_report(0, 1.0)


def test_sequences_keep_the_example_axis_and_name_their_parts(data):
    one = data[3]
    assert isinstance(one, marked_step.Sequences) and len(one) == 1
    assert one.inputs.shape == (1, 12, 2) and one.readings.shape == (1, 12)
    assert one.readings[0].tolist() == data.readings[3].tolist()
    assert one.markers.tolist() == [data.markers[3]] and one.labels.tolist() == [data.labels[3]]
    assert data.labels.dtype.kind == "i" and set(data.labels.tolist()) == {0, 1}
    # the marker flag is the second channel, 1 at the marker step only
    flags = data.inputs[..., 1]
    assert np.all(flags.sum(axis=1) == 1) and np.all(flags.argmax(axis=1) == data.markers)
    # the label is the marker's reading against the threshold, computed here from the readings
    marked = data.readings[np.arange(len(data)), data.markers]
    assert data.labels.tolist() == (marked > marked_step.THRESHOLD).astype(int).tolist()
    assert data[-1].markers.tolist() == [data.markers[-1]]


def test_the_training_curve_is_the_loss_before_each_step(data):
    train_set = marked_step.split(data)[0]
    network, params, curve = marked_step_runs.train_runs([5, 6], train_set, epochs=3)
    assert isinstance(network, single_query.SingleQuery)
    assert curve.shape == (3, 2)
    start = MODEL.init([5, 6])
    np.testing.assert_array_equal(
        curve[0], MODEL.loss_and_grads(start, train_set.inputs, train_set.labels)[0]
    )
    once = marked_step_runs.train_runs([5, 6], train_set, epochs=2).params
    np.testing.assert_array_equal(
        curve[2], MODEL.loss_and_grads(once, train_set.inputs, train_set.labels)[0]
    )
    # one step of plain gradient descent, written out
    grads = MODEL.loss_and_grads(start, train_set.inputs, train_set.labels)[1]
    stepped = marked_step_runs.train_runs([5, 6], train_set, epochs=1).params
    for name in start:
        np.testing.assert_allclose(
            stepped[name],
            start[name] - marked_step_runs.LEARNING_RATE * grads[name],
            rtol=0,
            atol=1e-15,
        )


def test_forward_refuses_inputs_of_the_wrong_shape():
    params = MODEL.init([1])
    with pytest.raises(ValueError, match=r"\(N, T, 2\)"):
        MODEL.forward(params, np.zeros((4, 12)))
    with pytest.raises(ValueError, match=r"\(N, T, 2\)"):
        MODEL.forward(params, np.zeros((4, 12, 3)))
    with pytest.raises(ValueError, match="inputs must hold finite numbers"):
        MODEL.forward(params, np.full((4, 12, 2), np.nan))
    with pytest.raises(TypeError, match="inputs must be an array of numbers"):
        MODEL.forward(params, "readings")
