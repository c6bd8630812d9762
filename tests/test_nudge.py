"""The nudge switch (README, "The same numbers on every machine"): ATTENTION_MEASURED_NUDGE=k
multiplies every model's initial parameters by (1 + 1e-12 z), in one place, and nowhere else."""

import ast
from pathlib import Path

import numpy as np
import pytest

from attention_measured.core import params
from attention_measured.experiments import translation_runs
from attention_measured.machinery.cache import remembered
from attention_measured.models import (
    aligner,
    cloze_head,
    flavours,
    heads,
    hierarchical,
    memory_network,
    order_reader,
    reader,
    single_query,
)

LIBRARY = Path(params.__file__).parents[1]

# every initialiser of the book, called as the Parts call it
INITIALISERS = {
    "single_query.SingleQuery": lambda: single_query.SingleQuery().init((20260219, 20260220)),
    "cloze_head.Head": lambda: cloze_head.Head("mask").init(0),
    "reader.Reader": lambda: reader.Reader("additive").init(0),
    "hierarchical.Hierarchical": lambda: hierarchical.Hierarchical().init(0),
    "aligner.Aligner": lambda: aligner.Aligner("general").init(0),
    "heads.HeadsReader": lambda: heads.HeadsReader(2).init(0),
    "order_reader.OrderReader": lambda: order_reader.OrderReader("learned").init(0),
    "memory_network.MemoryNetwork": lambda: memory_network.MemoryNetwork().init(0),
    "recurrent.EncoderDecoder": lambda: translation_runs.book_model("Bahdanau").init(0),
    "transformer.Transformer": lambda: translation_runs.book_model("Transformer").init(0),
    "flavours.Additive": lambda: flavours.Additive(units=4).init(np.random.RandomState(0), 3, 3),
}


def test_unset_or_empty_is_no_nudge_and_anything_but_a_positive_integer_is_refused(monkeypatch):
    monkeypatch.delenv(params.NUDGE_VARIABLE, raising=False)
    assert params.nudge() == 0
    monkeypatch.setenv(params.NUDGE_VARIABLE, " ")
    assert params.nudge() == 0
    monkeypatch.setenv(params.NUDGE_VARIABLE, "7")
    assert params.nudge() == 7
    for bad in ("0", "-1", "1.5", "yes"):
        monkeypatch.setenv(params.NUDGE_VARIABLE, bad)
        with pytest.raises(ValueError, match="ATTENTION_MEASURED_NUDGE must be a positive"):
            params.nudge()


@pytest.mark.parametrize("name", INITIALISERS)
def test_every_initialiser_is_nudged_once_by_a_relative_1e_12(monkeypatch, name):
    monkeypatch.delenv(params.NUDGE_VARIABLE, raising=False)
    plain = INITIALISERS[name]()
    assert INITIALISERS[name]().keys() == plain.keys()  # unset: the same draws again
    for key, value in INITIALISERS[name]().items():
        assert np.array_equal(value, plain[key])
    monkeypatch.setenv(params.NUDGE_VARIABLE, "1")
    nudged = INITIALISERS[name]()
    assert type(nudged) is type(plain) and list(nudged) == list(plain)
    # exactly one nudge, by the outermost initialiser (a flavour's inside a reader's is not
    # nudged again)
    expected = params.nudged(plain, 1)
    moved = 0
    for key, value in nudged.items():
        assert np.array_equal(value, expected[key]), key
        relative = np.abs(value - plain[key]) / np.maximum(np.abs(plain[key]), 1e-300)
        assert relative.max() < 1e-11, key
        assert np.all(value[plain[key] == 0] == 0), key  # zeros (biases) stay zero
        moved += int(np.count_nonzero(value != plain[key]))
    assert moved > 0
    monkeypatch.setenv(params.NUDGE_VARIABLE, "2")
    other = INITIALISERS[name]()
    assert any(not np.array_equal(other[k], nudged[k]) for k in nudged)


def test_a_nudged_zero_dimensional_array_stays_a_writable_array():
    out = params.nudged(params.Params(bias=np.zeros(()), w=np.ones(3)), 1)
    assert isinstance(out.bias, np.ndarray) and out.bias.shape == () and out.bias.flags.writeable
    assert not np.array_equal(out.w, np.ones(3))


def _decorators(function: ast.FunctionDef) -> set[str]:
    return {d.id if isinstance(d, ast.Name) else ast.unparse(d) for d in function.decorator_list}


def test_every_function_that_draws_initial_parameters_goes_through_the_switch():
    """Every ``init`` method and ``init_params`` function of the package carries @initialiser,
    but for one that only hands on another's."""
    found = []
    for path in sorted(LIBRARY.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name in ("init", "init_params"):
                returns_init_params = "return init_params(" in ast.unparse(node)
                if not returns_init_params:
                    found.append(f"{path.stem}.{node.name}:{node.lineno}")
                    assert "initialiser" in _decorators(node), found[-1]
    assert len(found) >= len(INITIALISERS)


def test_a_result_remembered_under_one_nudge_is_never_served_under_another(monkeypatch):
    from attention_measured.machinery import cache

    monkeypatch.delenv(cache.ENVIRONMENT, raising=False)  # memory only, no earlier run's file
    calls = []

    @remembered
    def draw(seed):
        calls.append(seed)
        return cloze_head.Head().init(seed)

    monkeypatch.delenv(params.NUDGE_VARIABLE, raising=False)
    plain = draw(3)
    assert np.array_equal(draw(3).E, plain.E) and calls == [3]
    monkeypatch.setenv(params.NUDGE_VARIABLE, "1")
    nudged = draw(3)
    assert calls == [3, 3] and not np.array_equal(nudged.E, plain.E)
    monkeypatch.delenv(params.NUDGE_VARIABLE)
    assert np.array_equal(draw(3).E, plain.E) and calls == [3, 3]
