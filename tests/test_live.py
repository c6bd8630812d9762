"""The explorers that compute in the page (attention_measured.book.live): each JavaScript module
reaches the page whole, as a data: URL with its sibling imports made data: URLs too, and the
seed explorer refuses what it cannot show.  The Node tests (tests/js) hold the JavaScript equal
to the library; the browser tests type into the built page."""

import base64
import html
import json
import re

import numpy as np
import pytest

from attention_measured.book import live
from attention_measured.experiments import marked_step_runs


def _loaded(out: str) -> dict:
    """The modules an explorer's script carries, {name: source}, in the order it loads them."""
    (sources,) = re.findall(r"const sources = (\{.*\});\n", out)
    assert "</" not in sources  # a module's text never ends the script early
    return json.loads(sources.replace("<\\/", "</"))


def test_a_module_travels_whole_after_each_module_it_imports_each_once():
    sources = live.module_sources("lesson_page")
    assert list(sources) == ["core", "lesson", "lesson_page"]  # core: imported by both, once
    for name, text in sources.items():
        assert text == (live.FOLDER / f"{name}.mjs").read_text()  # every byte the file's own
    cloze = live.module_sources("cloze_page")
    assert list(cloze)[-1] == "cloze_page" and list(cloze).count("core") == 1
    for position, name in enumerate(cloze):  # each module after every sibling it imports
        for sibling in re.findall(r'from "\./([a-z_]+)\.mjs"', cloze[name]):
            assert list(cloze).index(sibling) < position, (name, sibling)


def test_the_script_loads_the_modules_it_carries_and_runs_the_call():
    out = live.run_module("lesson_page", "module.mountSeedExplorer(root, hundred);")
    assert _loaded(out) == live.module_sources("lesson_page")
    assert 'import(urls["lesson_page"])' in out
    assert "module.mountSeedExplorer(root, hundred);" in out


def test_module_sources_refuse_what_is_not_a_module_of_the_folder():
    for bad in ["lessons", "../live", "", 3]:
        with pytest.raises(ValueError, match="name"):
            live.module_sources(bad)


def test_the_seed_explorer_ships_the_hundred_seeds_and_hides_until_its_script_runs():
    out = live.seed_explorer([5, 6], [0.25, 0.75]).data
    assert 'id="live-change-the-seed" hidden' in out
    assert "&quot;seeds&quot;: [5, 6]" in out and "0.75" in out
    assert _loaded(out) == live.module_sources("lesson_page")
    with pytest.raises(ValueError, match="one length"):
        live.seed_explorer([5, 6], [0.25])
    with pytest.raises(TypeError, match="hundred_seeds"):
        live.seed_explorer([0.5], [0.25])
    with pytest.raises(ValueError, match="hundred_weights"):
        live.seed_explorer([5], np.array([[0.25]]))


WORKED = {  # the worked example of the self-attention page: "the cat sat"
    "tokens": ["the", "cat", "sat"],
    "X": np.array([[1.0, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]]),
    "W_Q": np.array([[1.0, 0], [0, 1], [1, 0], [0, 1]]),
    "W_K": np.array([[0.0, 1], [1, 0], [0, 1], [1, 0]]),
    "W_V": np.array([[1.0, 0], [0, 2], [0, 1], [0, 0]]),
}


def _worked(**changes):
    return live.worked_example(**(WORKED | changes))


def test_the_worked_example_starts_at_the_pages_numbers_and_hides_until_its_script_runs():
    out = _worked().data
    assert 'id="live-worked-example" hidden' in out
    assert "<strong>The worked example, editable</strong>" in out
    # the page's paragraph, just above the frame, says what to do with it: the frame does not
    assert out.count("<p") == 1 and "Change any number" not in out
    (start,) = re.findall(r'data-start="([^"]+)"', out)
    start = json.loads(html.unescape(start))
    assert start["tokens"] == WORKED["tokens"]
    for name in ("X", "W_Q", "W_K", "W_V"):
        assert np.array_equal(start[name], WORKED[name]), name
    assert list(_loaded(out)) == ["colours", "core", "self_attention", "worked_example_page"]
    # a matrix that is not of floats, a token that is not a string, still become plain JSON
    out = _worked(tokens=("a", "b", "c"), X=WORKED["X"].astype(int).tolist())
    assert "&quot;X&quot;: [[1.0, 0.0, 1.0, 0.0]" in out.data


@pytest.mark.parametrize(
    ("changes", "error", "says"),
    [
        ({"tokens": "the cat sat"}, TypeError, "tokens must be a list"),
        ({"tokens": ["the", 2, "sat"]}, TypeError, "tokens must be non-empty strings"),
        ({"tokens": ["the", " ", "sat"]}, TypeError, "tokens must be non-empty strings"),
        ({"tokens": []}, ValueError, "tokens must name 1 to 6 rows, got 0"),
        ({"tokens": list("abcdefg"), "X": np.ones((7, 4))}, ValueError, "tokens must name"),
        ({"tokens": ["the", "cat"]}, ValueError, r"X must have shape \(2, any\)"),
        ({"X": np.ones((3, 7))}, ValueError, "d_model must be from 1 to 6, got 7"),
        ({"X": np.ones((3, 0))}, ValueError, "d_model must be from 1 to 6, got 0"),
        ({"X": np.full((3, 4), np.nan)}, ValueError, "X must hold finite numbers"),
        ({"X": [["1", "0", "1", "0"]] * 3}, TypeError, "X must be an array of numbers"),
        ({"W_Q": np.ones((3, 2))}, ValueError, r"W_Q must have shape \(4, any\)"),
        ({"W_Q": np.ones((4, 5)), "W_K": np.ones((4, 5))}, ValueError, "d must be from 1 to 4"),
        ({"W_K": np.ones((4, 3))}, ValueError, r"W_K must have shape \(4, 2\)"),
        ({"W_V": np.ones(4)}, ValueError, "W_V must have shape"),
        ({"W_V": np.ones((4, 5))}, ValueError, "dv must be from 1 to 4"),
        ({"W_V": np.full((4, 2), 2e6)}, ValueError, "W_V must hold numbers from -1e6 to 1e6"),
        ({"X": -1e6 - 1 + np.zeros((3, 4))}, ValueError, "X must hold numbers from -1e6"),
    ],
)
def test_the_worked_example_refuses_what_its_boxes_could_not_hold(changes, error, says):
    with pytest.raises(error, match=says):
        _worked(**changes)


def test_the_worked_example_takes_the_largest_numbers_its_boxes_take():
    big = np.full((4, 2), 1e6)
    assert "1000000.0" in _worked(W_Q=big, W_K=-big, W_V=big).data


def _data(page: str, name: str):
    start = page.index(f'data-{name}="') + len(f'data-{name}="')
    return json.loads(html.unescape(page[start : page.index('"', start)]))


def test_the_drop_explorer_ships_both_runs_parameters_and_hides_until_its_script_runs():
    runs = marked_step_runs.two_runs()[1]
    page = live.drop_explorer(runs).data
    assert 'id="live-drop-a-step" hidden' in page
    shipped = _data(page, "runs")
    assert len(shipped) == 2
    for run in (0, 1):
        for name, value in runs.items():
            assert shipped[run][name] == value[run].ravel().tolist()  # every bit, by repr
    assert "module.mountDropExplorer" in page and "lesson_page" in _loaded(page)


@pytest.mark.parametrize(
    "bad, error, says",
    [
        ({"W_K": np.zeros((2, 3, 2))}, TypeError, "runs must be the two runs"),
        ("runs", TypeError, "runs must be the two runs"),
    ],
)
def test_the_drop_explorer_refuses_what_is_not_two_runs(bad, error, says):
    with pytest.raises(error, match=says):
        live.drop_explorer(bad)


def test_the_drop_explorer_refuses_one_run_or_three():
    runs = marked_step_runs.two_runs()[1]
    for count in (1, 3):
        stacked = {name: np.repeat(value[:1], count, axis=0) for name, value in runs.items()}
        with pytest.raises(ValueError, match="must stack two runs"):
            live.drop_explorer(stacked)


def test_the_online_softmax_stepper_starts_with_the_pages_numbers():
    scores, values = np.array([0.5, -np.inf, 2.25, 1.0]), np.array([1.0, 2.0, 3.0, -4.5])
    page = live.online_softmax_stepper(scores, values, 3).data
    assert 'id="live-online-softmax" hidden' in page
    assert 'value="0.5 -inf 2.25 1.0"' in page and 'value="1.0 2.0 3.0 -4.5"' in page
    assert 'id="live-online-block" inputmode="numeric" autocomplete="off" value="3"' in page
    assert "module.mountOnlineSoftmax" in page and "online_softmax_page" in _loaded(page)


@pytest.mark.parametrize(
    "args, error, says",
    [
        (([], [], 1), ValueError, "scores must hold 1 to 16"),
        ((np.zeros(17), np.zeros(17), 1), ValueError, "scores must hold 1 to 16"),
        (([1.0, np.nan], [1.0, 2.0], 1), ValueError, "scores must be finite numbers or -inf"),
        (([1.0, np.inf], [1.0, 2.0], 1), ValueError, "scores must be finite numbers or -inf"),
        (([1.0, 2.0], [1.0], 1), ValueError, "values"),
        (([1.0, 2.0], [1.0, np.inf], 1), ValueError, "values"),
        (([1.0, 2.0], [1.0, 2.0], 3), ValueError, "block"),
        (([1.0, 2.0], [1.0, 2.0], 0), ValueError, "block"),
        (([[1.0, 2.0]], [1.0, 2.0], 1), ValueError, "scores"),
    ],
)
def test_the_online_softmax_stepper_refuses_what_its_boxes_could_not_hold(args, error, says):
    with pytest.raises(error, match=says):
        live.online_softmax_stepper(*args)


def _heads():
    from attention_measured.models.cloze_head import Head

    return {
        name: Head(query).init(seed)
        for seed, (name, query) in enumerate(live.TYPED_QUERIES.items())
    }


def test_the_typed_sentence_carries_the_three_heads_in_single_precision():
    from attention_measured.tasks import cloze

    heads = _heads()
    page = live.typed_sentence(heads, "All human beings are born free").data
    assert 'id="live-typed-sentence" hidden' in page
    start = _data(page, "start")
    assert start["vocabulary"] == cloze.VOCAB and start["longest"] == cloze.MAX_LEN
    assert start["sentence"] == "All human beings are born free"
    for name, params in heads.items():
        carried = np.frombuffer(base64.b64decode(start["heads"][name]), dtype="<f4")
        rounded = live.single_precision(params)
        assert np.array_equal(carried, np.concatenate([v.ravel() for v in rounded.values()]))
        for key, value in params.items():  # single precision: within 6e-8 of each number
            np.testing.assert_allclose(rounded[key], value, rtol=6e-8, atol=0)
    assert list(_loaded(page)) == ["core", "cloze_head", "colours", "heatmap", "cloze_page"]


@pytest.mark.parametrize(
    "change, error, says",
    [
        (lambda h: {"token": h["token"]}, TypeError, "heads must map"),
        (lambda h: h | {"blank": h["position"]}, ValueError, "heads\\['blank'\\] must be a 'mask'"),
    ],
)
def test_the_typed_sentence_refuses_heads_it_cannot_carry(change, error, says):
    with pytest.raises(error, match=says):
        live.typed_sentence(change(_heads()), "all human beings")


@pytest.mark.parametrize(
    "sentence, error, says",
    [
        ("all human pizza", ValueError, "not in the vocabulary: 'pizza'"),
        ("free", ValueError, "at least two tokens"),
        (" ".join(["the"] * 20), ValueError, "at most 19 words"),
        (["all", "human"], TypeError, "sentence must be a string"),
    ],
)
def test_the_typed_sentence_refuses_a_first_sentence_its_box_would_refuse(sentence, error, says):
    with pytest.raises(error, match=says):
        live.typed_sentence(_heads(), sentence)


def _translators():
    from attention_measured.experiments import translation_runs

    return {
        name: (model, model.init(seed))
        for seed, name in enumerate(("Transformer", "Bahdanau"))
        for model in [translation_runs.book_model(name)]
    }


def test_the_translator_carries_both_models_in_single_precision_with_their_names():
    from attention_measured.tasks import translation

    models = _translators()
    page = live.translator(models, "the dog sees a red bird").data
    assert 'id="live-translator" hidden' in page and "<noscript>" in page
    start = _data(page, "start")
    assert start["lexicon"] == translation.LEXICON and start["specials"] == ["<pad>", "<s>", "</s>"]
    assert start["longest"] == translation.LONGEST == 47
    assert (start["beam"], start["most_beam"]) == (4, 16)
    for name, (_, params) in models.items():
        carried = start["models"][name]
        assert [n for n, _ in carried["names"]] == list(params)
        assert [tuple(shape) for _, shape in carried["names"]] == [v.shape for v in params.values()]
        numbers = np.frombuffer(base64.b64decode(carried["weights"]), dtype="<f4")
        rounded = live.single_precision(params)
        assert np.array_equal(numbers, np.concatenate([v.ravel() for v in rounded.values()]))
    assert start["models"]["Transformer"]["config"] == {
        "kind": "Transformer",
        "width": 32,
        "heads": 2,
        "feed_forward": 64,
        "layers": 1,
        "norm_first": False,
        "positions": True,
        "source_vocabulary": 35,
        "target_vocabulary": 35,
        "bos": 1,
    }
    assert start["models"]["Bahdanau"]["config"]["kind"] == "Bahdanau"
    assert list(_loaded(page))[-1] == "translation_page"
    assert {"transformer", "recurrent", "decoding", "translation", "heatmap"} <= set(_loaded(page))


@pytest.mark.parametrize(
    "change, sentence, error, says",
    [
        (lambda m: {}, "the dog sees a bird", TypeError, "models must map"),
        (lambda m: {"T": m["Transformer"][0]}, "the dog sees a bird", TypeError, "models must"),
        (lambda m: m, "the cat sees a bird", ValueError, "unknown source words \\['cat'\\]"),
        (lambda m: m, "the dog a bird", ValueError, "expected a verb at word 2"),
        (lambda m: m, ["the", "dog"], TypeError, "sentence must be a string"),
        (
            lambda m: m,
            " and ".join(["the dog sees a bird"] * 10),
            ValueError,
            "at most 47 words",
        ),
    ],
)
def test_the_translator_refuses_what_its_box_would_refuse(change, sentence, error, says):
    with pytest.raises(error, match=says):
        live.translator(change(_translators()), sentence)


@pytest.mark.parametrize(
    "name, change, says",
    [
        ("Luong", {}, "Bahdanau's translator or a Transformer"),
        ("Transformer, padded batches", {}, "causal, unpadded"),
        ("Transformer, no causal mask", {}, "causal, unpadded"),
    ],
)
def test_the_translator_carries_only_the_models_its_script_twins(name, change, says):
    from attention_measured.experiments import translation_runs

    model = translation_runs.book_model(name)
    with pytest.raises(ValueError, match=says):
        live.carried_translator(model, model.init(0))


def test_single_precision_keeps_the_names_asked_for_in_their_order_and_refuses_others():
    params = {"b": np.array([1 / 3]), "a": np.array([0.1, 0.2])}
    assert list(live.single_precision(params)) == ["b", "a"]
    assert list(live.single_precision(params, ["a"])) == ["a"]
    assert live.single_precision(params)["b"][0] == np.float32(1 / 3)
    with pytest.raises(ValueError, match="params lacks 'c'"):
        live.single_precision(params, ["c"])
    with pytest.raises(TypeError, match="names must be a list"):
        live.single_precision(params, "a")
