"""Wiegreffe and Pinter's uniform baseline: a model trained with its weights held at 1/T."""

import numpy as np
import pytest

from attention_measured.core.training import fit
from attention_measured.experiments import head_runs, uniform_runs
from attention_measured.models.cloze_head import SENTENCES, Head
from attention_measured.models.heads import HeadsReader
from attention_measured.models.memory_network import MemoryNetwork
from attention_measured.models.uniform import Uniform
from attention_measured.tasks import cloze, stories


def _cases():
    data = head_runs.heads_data()[0][:60]
    story = stories.stories(40, seed=5)
    batch = cloze.make_batch([list(s) for s in SENTENCES[:4]])
    return [
        (HeadsReader(2), uniform_runs.ZEROED["heads"], (data.inputs, data.targets)),
        (
            MemoryNetwork(1),
            uniform_runs.ZEROED["memory network"],
            (stories.encode(story), story.answers),
        ),
        (Head(sentences=SENTENCES[:4]), uniform_runs.ZEROED["UDHR head"], (batch,)),
    ]


@pytest.mark.parametrize("case", range(3))
def test_held_arrays_keep_every_weight_at_one_over_t_through_training(case):
    model, zeroed, data = _cases()[case]
    uniform = Uniform(model, zeroed)
    params = uniform.init(0)
    fit(uniform, params, *data, epochs=30, learning_rate=0.05)
    weights = uniform.check(params, data[0])  # refuses weights that are not 1/T
    assert weights.size and np.all(weights >= 0)
    for name, index in zeroed.items():
        held = params[name] if index is None else params[name][index]
        assert not np.any(held)
    # the other arrays trained: the wrapper passes the model's own gradients on
    start = model.init(0)
    moved = [
        name for name in params if name not in zeroed and not np.allclose(params[name], start[name])
    ]
    assert moved


@pytest.mark.parametrize("case", range(3))
def test_the_gradients_are_the_models_own_with_the_held_arrays_at_zero(case):
    model, zeroed, data = _cases()[case]
    uniform = Uniform(model, zeroed)
    params = uniform.init(1)
    loss, grads = uniform.loss_and_grads(params, *data)
    own_loss, own = model.loss_and_grads(params, *data)
    assert loss == own_loss
    for name in params:
        expected = own[name].copy()
        if name in zeroed:
            if zeroed[name] is None:
                expected[...] = 0.0
            else:
                expected[zeroed[name]] = 0.0
        np.testing.assert_array_equal(grads[name], expected)


def test_a_model_with_its_query_free_is_refused_as_uniform():
    model = HeadsReader(1)
    data = head_runs.heads_data()[1].inputs[:10]
    with pytest.raises(ValueError, match="not uniform"):
        Uniform(model, uniform_runs.ZEROED["heads"]).check(model.init(0), data)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: Uniform(object(), {"u": None}), TypeError, "protocol"),
        (lambda: Uniform(HeadsReader(1), {}), TypeError, "zeroed"),
        (lambda: Uniform(HeadsReader(1), {"u": -1}), ValueError, "zeroed"),
        (lambda: Uniform(HeadsReader(1), {"query": None}).init(0), ValueError, "'query'"),
        (lambda: uniform_runs.run("no such model", 0, True), ValueError, "model"),
        (lambda: uniform_runs.run("one head", 0, "yes"), TypeError, "uniform"),
        (lambda: uniform_runs.score("one head", None), TypeError, "result"),
    ],
)
def test_bad_input_is_refused_by_name(call, error, message):
    with pytest.raises(error, match=message):
        call()
