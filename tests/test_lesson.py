import lesson_oracle as oracle
import numpy as np
import pytest
from gradcheck import numeric_gradient

from attention_measured import lesson

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
    return lesson.make_sequences()


def test_summary_reproduces_the_lessons_eighteen_numbers():
    result = lesson.summary()
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
    heldout = lesson.split(data)[2]
    assert round(float(np.mean(heldout.labels)), 4) == 0.3667
    above = (data.readings[:, 2:] > lesson.THRESHOLD).any(axis=1)
    assert round(float(above.mean()), 4) == 0.9903
    largest = 2 + heldout.readings[:, 2:].argmax(axis=1)
    assert round(float(np.mean(largest == heldout.markers)), 4) == 0.0611


@pytest.mark.parametrize("seed", [20260218, 4])
def test_sequences_equal_the_loop_oracle(seed):
    data = lesson.make_sequences(50, seed)
    for i, (inputs, label, marker) in enumerate(oracle.sequences(50, seed)):
        assert data.inputs[i].tolist() == inputs  # bit for bit, rounding included
        assert data.labels[i] == label and data.markers[i] == marker


def test_initial_weights_equal_the_oracle():
    params = lesson.init_params([11, 20260219])
    for r, seed in enumerate([11, 20260219]):
        net = oracle.initial(seed)
        assert params.key_weights[r].tolist() == net["wk"]
        assert params.value_weights[r].tolist() == net["wv"]
        assert params.query[r].tolist() == net["q"] and params.readout[r].tolist() == net["w"]
    assert params[0].size == 19


def test_other_seeds_agree_with_the_loop_oracle():
    data_seed, seeds, epochs = 777, (5, 6), 12
    expected = oracle.summary(data_seed, seeds, epochs)
    train_set, _, heldout = lesson.split(lesson.make_sequences(seed=data_seed))
    params = lesson.train_runs(seeds, train_set, epochs)
    for r, seed in enumerate(seeds):
        net = oracle.train(seed, oracle.sequences(720, data_seed)[:360], epochs)
        np.testing.assert_allclose(params.key_weights[r], net["wk"], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(params.query[r], net["q"], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(params.bias[r], net["b"], rtol=1e-10, atol=1e-12)
    got = lesson.measure_runs(params, train_set, heldout)
    assert lesson.majority_baseline(heldout.labels) == pytest.approx(expected["baseline"])
    for g, e in zip(got, expected["runs"]):
        assert g == pytest.approx(e, rel=1e-9, abs=1e-12)


def test_backward_matches_finite_differences(data):
    train_set = lesson.split(data)[0][:40]
    params = lesson.init_params([3, 4])
    params.bias[:] = [0.3, -0.2]
    inputs, labels = train_set.inputs, train_set.labels
    grads = lesson.backward(params, inputs, labels, lesson.forward(params, inputs))
    for field in lesson.Params.FIELDS:
        x = getattr(params, field)
        numeric = numeric_gradient(lambda: lesson.loss(params, inputs, labels).sum(), x)
        np.testing.assert_allclose(getattr(grads, field), numeric, atol=1e-8, err_msg=field)


def test_forward_equals_keys_queries_and_values_written_out(data):
    params = lesson.init_params([9])[0]
    inputs = data[:5].inputs
    keys, values = lesson.keys_and_values(params, inputs)
    scores = keys @ params.query / np.sqrt(3)
    weights = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    logit = np.einsum("nt,ntd->nd", weights, values) @ params.readout + params.bias
    fwd = lesson.forward(params, inputs)
    np.testing.assert_allclose(fwd.weights, weights, rtol=1e-12)
    np.testing.assert_allclose(fwd.logit, logit, rtol=1e-12)


def test_removal_effects_recompute_the_softmax_without_the_step(data):
    params = lesson.train(20260220)
    example = lesson.split(data)[2][0]
    p, without = lesson.removal_effects(params, example.inputs)
    for t in (0, 5, 11):
        keep = np.arange(12) != t
        np.testing.assert_allclose(
            without[0, t], lesson.probability(lesson.forward(params, example.inputs, keep).logit)[0]
        )


def test_sweep_matches_single_runs():
    result = lesson.sweep([20260219, 20260220, 31])
    single = lesson.summary(init_seeds=(20260219, 20260220, 31))["runs"]
    for key in ("heldout_accuracy", "marker_weight", "agreement"):
        np.testing.assert_allclose(result[key], [r[key] for r in single], rtol=1e-12)
    assert result["seeds"].tolist() == [20260219, 20260220, 31]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: lesson.train(1.5), "integer"),
        (lambda: lesson.train(3, epochs=0), "epochs"),
        (lambda: lesson.train(3, epochs=-4), "epochs"),
        (lambda: lesson.train(3, learning_rate=0), "learning_rate"),
        (lambda: lesson.sweep([]), "non-empty"),
        (lambda: lesson.sweep(5), "non-empty"),
        (lambda: lesson.summary(init_seeds=("a",)), "integer"),
        (lambda: lesson.make_sequences(seed=-3), "seed"),
        (lambda: lesson.check_step(12), "between 0 and 11"),
        (lambda: lesson.check_step(-1), "between 0 and 11"),
        (lambda: lesson.make_sequences(10)[10], "example index"),
    ],
)
def test_bad_arguments_raise_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_forward_refuses_inputs_of_the_wrong_shape():
    params = lesson.init_params([1])
    with pytest.raises(ValueError, match=r"\(N, T, 2\)"):
        lesson.forward(params, np.zeros((4, 12)))
    with pytest.raises(ValueError, match=r"\(N, T, 2\)"):
        lesson.forward(params, np.zeros((4, 12, 3)))
