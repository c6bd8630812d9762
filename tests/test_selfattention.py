import numpy as np
import pytest
from gradcheck import check_model_gradients

from attention_measured.book import flavour_explorers
from attention_measured.core import attention
from attention_measured.experiments import scaling_runs
from attention_measured.measures import markers, removal
from attention_measured.models import heads, order_reader
from attention_measured.tasks import order, two_patterns


@pytest.mark.parametrize("count", [1, 2])
def test_heads_reader_gradients(count):
    data = two_patterns.two_patterns(n=5, seed=1)
    model = heads.HeadsReader(heads=count, size=4)
    p = model.init(seed=2)
    check_model_gradients(p, lambda: model.loss_and_grads(p, data.inputs, data.targets))


@pytest.mark.parametrize(
    "positions,pooling", [(p, "mean") for p in order_reader.POSITIONS] + [("none", "first")]
)
def test_order_reader_gradients(positions, pooling):
    data = order.order_task(n=4, length=5, vocabulary=4, seed=0)
    model = order_reader.OrderReader(positions, vocabulary=4, length=5, size=4, pooling=pooling)
    p = model.init(seed=1)
    check_model_gradients(p, lambda: model.loss_and_grads(p, data.inputs, data.targets))


def test_the_analytic_head_removal_equals_the_generic_one_and_the_changes_compose():
    data = two_patterns.two_patterns(n=5, seed=2)
    model = heads.HeadsReader(heads=2, size=4)
    p = model.init(seed=3)
    x = data.inputs
    generic = removal.removal_effects(model, p, x)
    assert generic[1].shape == (5, 2, 12)
    for a, b in zip(model.removal_effects(p, x), generic):
        np.testing.assert_allclose(a, b, rtol=1e-10)
    own = model.forward(p, x)
    logit, weights = own.output, own.weights
    # the head-by-head forward pass gives the numbers of training's multi-head path
    queries = np.broadcast_to(p["u"], (5, 1, 4))
    trained_path, trained_weights = attention.multi_head_attention(
        queries, x @ p["E"], p["W_Q"], p["W_K"], p["W_V"], p["W_O"], 2
    )
    np.testing.assert_allclose(trained_path[:, 0] @ p["readout"] + p["bias"], logit, rtol=1e-10)
    np.testing.assert_allclose(trained_weights[:, :, 0], weights, rtol=1e-10)
    np.testing.assert_allclose(model.forward(p, x, weights=weights).output, logit, rtol=1e-10)
    # doubling one step's input is the same as doubling its row of inputs by hand
    scale = np.ones((5, 12))
    scale[:, 4] = 2.0
    doubled = x.copy()
    doubled[:, 4] *= 2.0
    np.testing.assert_allclose(
        model.forward(p, x, scale=scale).output, model.forward(p, doubled).output
    )
    with pytest.raises(TypeError, match="keep must be boolean"):
        model.forward(p, x, keep=np.ones((5, 2, 12)))
    with pytest.raises(ValueError, match="weights of shape"):
        model.forward(p, x, weights=weights[:, 0])


def test_heads_measures_count_agreement_head_by_head():
    data = two_patterns.two_patterns(n=30, seed=4)
    model = heads.HeadsReader(heads=2, size=4)
    p = model.init(seed=5)
    result = markers.heads_measures(model, p, data)
    weights = model.forward(p, data.inputs).weights
    prob, without = model.removal_effects(p, data.inputs)
    for h in range(2):
        moved = np.abs(without[:, h] - prob[:, None]).argmax(axis=1)
        assert result["agreement"][h] == np.mean(weights[:, h].argmax(axis=1) == moved)
    assert result["agreement"].shape == (2,)


def test_head_removal_matches_recomputing_with_the_step_masked_in_one_head():
    data = two_patterns.two_patterns(n=3, seed=2)
    model = heads.HeadsReader(heads=2, size=4)
    p = model.init(seed=3)
    prob, without = model.removal_effects(p, data.inputs)
    logit = model.forward(p, data.inputs).output
    np.testing.assert_allclose(prob, 1 / (1 + np.exp(-logit)), rtol=1e-12)
    # recompute head by head: scores of head h with step t masked, the other head untouched
    h = data.inputs @ p["E"]
    q, k, v = (np.asarray(x) for x in (p["u"] @ p["W_Q"], h @ p["W_K"], h @ p["W_V"]))
    for head in range(2):
        for t in range(12):
            outs = []
            for g in range(2):
                s = k[:, :, 2 * g : 2 * g + 2] @ q[2 * g : 2 * g + 2] / np.sqrt(2)
                keep = np.ones(12, dtype=bool)
                if g == head:
                    keep[t] = False
                w = attention.softmax(s, keep)
                outs.append(np.einsum("nt,ntd->nd", w, v[:, :, 2 * g : 2 * g + 2]))
            z = np.concatenate(outs, axis=1) @ p["W_O"] @ p["readout"] + p["bias"]
            np.testing.assert_allclose(without[:, head, t], 1 / (1 + np.exp(-z)), rtol=1e-10)


def test_tasks():
    data = two_patterns.two_patterns(n=200, seed=0)
    r = data.inputs[..., 0]
    assert np.all(data.inputs[..., 1].sum(1) == 1) and r[:, 0].std() > 1
    np.testing.assert_array_equal(data.targets, r[np.arange(200), data.marked[:, 0]] > r.mean(1))
    ab = order.order_task(n=300, seed=0)
    assert np.all((ab.inputs == 0).sum(1) == 1) and np.all((ab.inputs == 1).sum(1) == 1)
    np.testing.assert_array_equal(ab.targets == 1, ab.marked[:, 0] < ab.marked[:, 1])
    assert 0.4 < ab.targets.mean() < 0.6


def test_without_positions_the_order_reader_cannot_see_order():
    data = order.order_task(n=50, seed=1)
    model = order_reader.OrderReader("none")
    p = model.init(0)
    shuffled = data.inputs[:, np.random.RandomState(0).permutation(8)]
    np.testing.assert_allclose(
        model.forward(p, data.inputs).output, model.forward(p, shuffled).output, rtol=1e-10
    )


def test_scaling_at_init_grows_with_d_only_without_the_scale():
    r = scaling_runs.scaling_at_init(sizes=(4, 256), trials=500)
    assert r["variance"][1] > 30 * r["variance"][0]
    assert r["max_weight"][1] > 0.8 > r["max_weight_scaled"][1]
    assert r["gradient"][1] < r["gradient_scaled"][1]


def test_bad_arguments():
    with pytest.raises(ValueError, match="split"):
        heads.HeadsReader(heads=3, size=8)
    with pytest.raises(ValueError, match="positions"):
        order_reader.OrderReader("rotary")
    reader = order_reader.OrderReader()
    with pytest.raises(ValueError, match="tokens must hold integers between 0 and 5"):
        reader.forward(reader.init(), np.full((1, 8), 9))
    with pytest.raises(ValueError, match=r"tokens must be token ids shaped \(any, 8\)"):
        reader.forward(reader.init(), np.zeros((1, 7), dtype=int))


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"size": 0}, ValueError, "size must be an integer of at least 1"),
        ({"channels": 0}, ValueError, "channels must be an integer of at least 1"),
        ({"heads": 0}, ValueError, "heads must be an integer of at least 1"),
        ({"channels": 2.0}, TypeError, "channels must be an integer"),
        ({"heads": True}, TypeError, "heads must be an integer"),
    ],
)
def test_heads_reader_refuses_empty_or_fractional_sizes(kwargs, error, message):
    with pytest.raises(error, match=message):
        heads.HeadsReader(**kwargs)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: flavour_explorers.head_report("one head", 180), ValueError, "example"),
        (lambda: flavour_explorers.order_report(500), ValueError, "example"),
        (lambda: flavour_explorers.order_report(0, shuffle=1.5), TypeError, "shuffle"),
        (lambda: two_patterns.two_patterns(0), ValueError, "n must be an integer of at least 1"),
        (lambda: order.order_task(length=1), ValueError, "length"),
        (lambda: scaling_runs.scaling_at_init(sizes=(0,)), ValueError, "size"),
    ],
)
def test_section_reports_and_tasks_refuse_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()
