"""Every model that trains with a workspace gives the same loss and gradients, to the last bit,
as with fresh arrays, and its second step allocates none of the workspace's buffers again."""

import numpy as np
import pytest

from attention_measured import selfattention
from attention_measured.workspace import Workspace


def _heads(heads):
    data = selfattention.two_patterns(n=40, seed=3)
    return selfattention.HeadsReader(heads), (data.inputs, data.targets)


def _order(positions, pooling="mean"):
    data = selfattention.order_task(n=30, seed=2)
    return selfattention.OrderReader(positions, pooling=pooling), (data.inputs, data.targets)


MODELS = {
    "one head": lambda: _heads(1),
    "two heads": lambda: _heads(2),
    "order, learned positions": lambda: _order("learned"),
    "order, first step read": lambda: _order("sinusoidal", "first"),
}


def _step(model, params, arguments):
    loss, grads = model.loss_and_grads(params, *arguments)
    return np.copy(loss), {name: np.copy(value) for name, value in grads.items()}


def _held(work: Workspace) -> dict:
    """Every buffer of the workspace and its parts, by name, as the id of its array."""
    held = {name: id(array) for name, array in work._buffers.items()}
    for name, inner in work._parts.items():
        held.update({f"{name}/{key}": value for key, value in _held(inner).items()})
    return held


@pytest.mark.parametrize("name", MODELS)
def test_a_training_step_with_a_workspace_gives_the_same_bits_and_reuses_it(name):
    model, arguments = MODELS[name]()
    params = model.init(0)
    model.work = None  # fresh arrays at every step
    loss, grads = _step(model, params, arguments)
    model.work = Workspace()
    held = None
    for _ in range(3):
        reused_loss, reused = _step(model, params, arguments)
        np.testing.assert_array_equal(reused_loss, loss)
        assert reused.keys() == grads.keys()
        for key, value in grads.items():
            np.testing.assert_array_equal(reused[key], value, err_msg=key)
        now = _held(model.work)
        assert held in (None, now), "a later step allocated a buffer again"
        held = now
    assert model.work.nbytes > 0
