"""Every model that trains with a workspace gives the same loss and gradients, to the last bit,
as with fresh arrays, and its second step allocates none of the workspace's buffers again."""

import numpy as np
import pytest

from attention_measured import lesson, recurrent, selfattention, taxonomy, transformer
from attention_measured.workspace import Workspace, take_rows


def _heads(heads):
    data = selfattention.two_patterns(n=40, seed=3)
    return selfattention.HeadsReader(heads), (data.inputs, data.targets)


def _order(positions, pooling="mean"):
    data = selfattention.order_task(n=30, seed=2)
    return selfattention.OrderReader(positions, pooling=pooling), (data.inputs, data.targets)


def _transformer(padded=False, **options):
    r = np.random.RandomState(5)
    source, target = r.randint(3, 12, (4, 6)), r.randint(3, 10, (4, 5))
    data = (source, target, np.array([6, 4, 5, 2]), np.array([5, 5, 3, 1])) if padded else None
    model = transformer.Transformer(12, 10, width=8, heads=2, feed_forward=16, **options)
    return model, (data or (source, target),)


def _recurrent(kind):
    r = np.random.RandomState(6)
    source, target = r.randint(3, 12, (4, 6)), r.randint(3, 10, (4, 5))
    model = recurrent.EncoderDecoder(kind, 12, 10, embedding=4, hidden=6, units=5)
    return model, ((source, target),)


def _reader(flavour, **options):
    r = np.random.RandomState(7)
    inputs, targets = r.normal(size=(20, 12, 2)), r.randint(0, 2, 20).astype(float)
    return taxonomy.Reader(flavour, **options), (inputs, targets)


def _documents():
    docs = taxonomy.documents(n=12, seed=4)
    return taxonomy.Hierarchical(), (docs.tokens, docs.labels)


def _aligner(flavour, hard=False):
    tokens = taxonomy.reversal(n=15, seed=3)
    if hard:  # the same draws at every step: a fresh RandomState each time
        return taxonomy.Aligner(flavour, hard=True), lambda: (tokens, np.random.RandomState(0))
    return taxonomy.Aligner(flavour), (tokens,)


def _lesson():
    data = lesson.make_sequences(n=30, seed=2)
    return lesson.Network(), (data.inputs, data.labels)


MODELS = {
    "Part I, three runs at once": _lesson,
    **{f"reader, {name}": (lambda name=name: _reader(name)) for name in taxonomy.SIDE_BY_SIDE},
    "reader, concat, tanh encoder": lambda: _reader("concat", encoder="tanh"),
    "hierarchical": _documents,
    **{
        f"aligner, {name}": (lambda name=name: _aligner(name))
        for name in taxonomy.ALIGNMENT_FLAVOURS
    },
    "aligner, hard": lambda: _aligner("general", hard=True),
    "one head": lambda: _heads(1),
    "two heads": lambda: _heads(2),
    "order, learned positions": lambda: _order("learned"),
    "order, first step read": lambda: _order("sinusoidal", "first"),
    **{kind: (lambda kind=kind: _recurrent(kind)) for kind in recurrent.KINDS},
    "Transformer": lambda: _transformer(),
    "Transformer, two pre-norm layers": lambda: _transformer(layers=2, norm_first=True),
    "Transformer, padded batch": lambda: _transformer(padded=True),
}


def _initial(model):
    return model.init([0, 1, 2]) if isinstance(model, lesson.Network) else model.init(0)


def _step(model, params, arguments):
    loss, grads = model.loss_and_grads(params, *(arguments() if callable(arguments) else arguments))
    return np.copy(loss), {name: np.copy(value) for name, value in grads.items()}


def _held(work: Workspace) -> dict:
    """Every buffer of the workspace and its parts, by name, as the id of its array."""
    held = {name: id(array) for name, array in work._memory.items()}
    for name, inner in work._parts.items():
        held.update({f"{name}/{key}": value for key, value in _held(inner).items()})
    return held


@pytest.mark.parametrize("name", MODELS)
def test_a_training_step_with_a_workspace_gives_the_same_bits_and_reuses_it(name):
    model, arguments = MODELS[name]()
    params = _initial(model)
    model.work = None  # fresh arrays at every step
    loss, grads = _step(model, params, arguments)
    model.work = Workspace()
    held = None
    for _ in range(3):  # the first step allocates the buffers, the others write into them
        reused_loss, reused = _step(model, params, arguments)
        np.testing.assert_array_equal(reused_loss, loss)
        assert reused.keys() == grads.keys()
        for key, value in grads.items():
            np.testing.assert_array_equal(reused[key], value, err_msg=key)
        now = _held(model.work)
        assert held in (None, now), "a later step allocated a buffer again"
        held = now
    assert model.work.nbytes > 0


def test_shorter_sentences_after_longer_ones_allocate_nothing_and_give_the_same_bits():
    model, ((source, target),) = _transformer()
    params = model.init(1)
    model.loss_and_grads(params, (source, target))  # the longest batch first
    held = _held(model.work)
    short = (source[:3, :4], target[:3, :2])
    loss, grads = _step(model, params, (short,))
    assert _held(model.work) == held
    model.work = None
    fresh_loss, fresh = _step(model, params, (short,))
    np.testing.assert_array_equal(loss, fresh_loss)
    for key, value in fresh.items():
        np.testing.assert_array_equal(grads[key], value, err_msg=key)


def test_encode_and_decode_can_share_one_workspace():
    model, ((source, target),) = _transformer()
    params, work = model.init(2), Workspace()
    memory, _ = model.encode(params, source, work=work)
    kept = memory.copy()
    logits, _, _ = model.decode(params, memory, target, work=work)
    np.testing.assert_array_equal(memory, kept)  # the decoder wrote into buffers of its own
    fresh, _, _ = model.decode(params, model.encode(params, source)[0], target)
    np.testing.assert_array_equal(logits, fresh)


def test_embedding_rows_without_a_workspace_refuse_an_id_out_of_range():
    table = np.arange(12.0).reshape(4, 3)
    with pytest.raises(IndexError):
        take_rows(table, np.array([1, 4]), None, "x")
    work = Workspace()
    rows = take_rows(table, np.array([[3, 0]]), work, "x")
    np.testing.assert_array_equal(rows, table[[[3, 0]]])
    assert np.shares_memory(rows, work._memory["x"])
