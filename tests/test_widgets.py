import json
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest

from attention_measured import lesson, udhr, widgets


def tiny_render(a, b):
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.bar([0, 1], [a, b])
    return fig


def twin_data(html):
    return json.loads(
        re.search(
            r'<script type="application/json" class="twin-data">(.*?)</script>', html, re.S
        ).group(1)
    )


def test_static_twin_renders_every_combination_in_slider_order():
    controls = {"a": widgets.Control("first", [1, 2, 3], 2), "b": widgets.Control("second", [5, 6])}
    html = widgets.static_twin(
        "tiny", controls, tiny_render, lambda a, b: f"a={a} b={b}", alt="tiny bars"
    ).data
    data = twin_data(html)
    assert data["sizes"] == [3, 2]
    assert len(data["frames"]) == 6 and len(set(data["frames"])) == 6  # every picture differs
    assert data["texts"] == [f"a={a} b={b}" for a in (1, 2, 3) for b in (5, 6)]
    assert all(f.startswith("data:image/png;base64,") for f in data["frames"])
    assert 'id="twin-tiny"' in html and 'alt="tiny bars"' in html
    assert "a=2 b=5" in html.split("twin-numbers")[1]  # starts at the defaults
    assert "http" not in html  # nothing fetched from elsewhere


def test_static_twin_refuses_bad_names_and_defaults():
    with pytest.raises(ValueError, match="twin name"):
        widgets.static_twin("Bad Name", {"a": widgets.Control("a", [1])}, tiny_render, str, alt="")
    with pytest.raises(ValueError, match="not among its values"):
        widgets.Control("a", [1, 2], default=3)
    with pytest.raises(ValueError, match="at least one value"):
        widgets.Control("a", [])


def test_drop_report_renormalises_and_matches_the_removal_test():
    report = widgets.drop_report(0, 11)
    assert report["marker"] == 11
    np.testing.assert_allclose(report["without"].sum(axis=-1), 1.0)
    assert np.all(report["without"][:, 11] == 0)
    train_set, _, heldout = lesson.split(lesson.make_sequences())
    runs = lesson.train_runs(lesson.INIT_SEEDS, train_set)
    p, p_without = lesson.removal_effects(runs, heldout[0].inputs)
    np.testing.assert_allclose(report["p"], p[:, 0])
    np.testing.assert_allclose(report["p_without"], p_without[:, 0, 11])


def test_seed_report_reproduces_the_lessons_first_run():
    report = widgets.seed_report(lesson.INIT_SEEDS[0])
    assert round(report["heldout_accuracy"], 4) == 0.8889
    assert round(report["marker_weight"], 4) == 0.2721


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: widgets.drop_report(0, 12), "step"),
        (lambda: widgets.drop_report(180, 3), "example index"),
        (lambda: widgets.drop_report(-1, 3), "example index"),
        (lambda: widgets.example_report(2.5), "example index"),
        (lambda: widgets.seed_report("seven"), "seed"),
    ],
)
def test_widget_functions_refuse_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_sentence_report_matches_the_udhr_library():
    report = widgets.sentence_report(3)
    tokens = report["tokens"]
    run = widgets.udhr_run(0)
    np.testing.assert_allclose(report["weights"], udhr.attention_weights(run, tokens))
    rows = np.arange(len(tokens))
    np.testing.assert_allclose(
        report["effect"], udhr.removal_effects(run, tokens)[rows, report["heaviest"]]
    )
    assert np.all(report["weights"][rows, report["heaviest"]] == report["weights"].max(axis=1))
    summary = widgets.robust_sentence_summary(3)
    assert "recalls more than 0.5 of all training tokens: True" in summary


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: widgets.sentence_report(16), "example index"),
        (lambda: widgets.sentence_report(0, query="words"), "unknown query"),
        (lambda: widgets.udhr_run(-1), "seed"),
    ],
)
def test_part_two_widget_functions_refuse_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ------------------------------------------------------------------ Part III
def test_flavour_report_matches_the_measures_of_its_run():
    from attention_measured import taxonomy

    r = widgets.flavour_report("dot", (0,))
    model, params = taxonomy.lesson_run("dot", 0)
    heldout = taxonomy.lesson_data()[1]
    assert r["marker"] == int(heldout.marked[0, 0])
    np.testing.assert_allclose(
        r["weights"][0], model.forward(params, heldout.inputs[:1]).attention.weights[0, 0]
    )
    assert "dot" in widgets.describe_flavour("dot", (0,))


def test_head_report_shows_the_chosen_head():
    from attention_measured import selfattention

    r = widgets.head_report("two heads: head 1", 3)
    model, params = selfattention.heads_run(2, widgets.HEADS_SEED)
    _, weights = model.forward(params, selfattention.heads_data()[1].inputs[3:4])
    np.testing.assert_allclose(r["weights"], weights[0, 1])


def test_part_three_widgets_refuse_bad_choices():
    with pytest.raises(ValueError, match="flavour must be one of"):
        widgets.flavour_report("cosine")
    with pytest.raises(ValueError, match="choice must be one of"):
        widgets.head_report("three heads")
    with pytest.raises(ValueError, match="hop must be between"):
        widgets.hop_report(0, hop=4)
    with pytest.raises(ValueError, match="shuffle"):
        widgets.order_report(0, shuffle=-1)
