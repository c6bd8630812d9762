"""What the explorers show comes from the Parts' modules, and bad choices are refused by name."""

import numpy as np
import pytest

from attention_measured.book import (
    cloze_explorers,
    flavour_explorers,
    marked_step_explorers,
    translation_explorers,
)
from attention_measured.book import pages as book_pages
from attention_measured.experiments import (
    cloze_runs,
    flavour_runs,
    head_runs,
    marked_step_runs,
    translation_runs,
)
from attention_measured.measures import cloze_recall, markers, removal
from attention_measured.models import cloze_head
from attention_measured.tasks import marked_step


def test_drop_report_renormalises_and_matches_the_removal_test():
    report = marked_step_explorers.drop_report(0, 11)
    assert report["marker"] == 11
    np.testing.assert_allclose(report["without"].sum(axis=-1), 1.0)
    assert np.all(report["without"][:, 11] == 0)
    heldout, runs = marked_step_runs.two_runs()
    p, p_without = marked_step_runs.MODEL.removal_effects(runs, heldout[0].inputs)
    np.testing.assert_allclose(report["p"], p[:, 0])
    np.testing.assert_allclose(report["p_without"], p_without[:, 0, 11])
    assert "dropped step 11" in marked_step_explorers.describe_drop(0, 11)


def test_seed_report_reproduces_the_lessons_first_run():
    report = marked_step_explorers.seed_report(marked_step_runs.INIT_SEEDS[0])
    assert round(report["heldout_accuracy"], 4) == 0.8889
    assert round(report["marker_weight"], 4) == 0.2721
    assert "held-out accuracy 0.8889" in marked_step_explorers.describe_seed(
        marked_step_runs.INIT_SEEDS[0]
    )


def test_two_runs_hands_out_copies_that_a_caller_cannot_spoil():
    heldout, runs = marked_step_runs.two_runs()
    runs.query[:] = 0.0
    heldout.inputs[:] = 0.0
    again_heldout, again = marked_step_runs.two_runs()
    assert np.all(again.query != 0.0) and np.any(again_heldout.inputs != 0.0)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: marked_step_explorers.drop_report(0, 12), ValueError, "step"),
        (lambda: marked_step_explorers.drop_report(180, 3), ValueError, "example"),
        (lambda: marked_step_explorers.drop_report(-1, 3), ValueError, "example"),
        (lambda: marked_step_explorers.example_report(2.5), TypeError, "example"),
        (lambda: marked_step_explorers.seed_report("seven"), TypeError, "seed"),
    ],
)
def test_part_one_reports_refuse_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_sentence_report_matches_the_udhr_library():
    report = cloze_explorers.sentence_report(3)
    tokens = report["tokens"]
    run = cloze_runs.train(0)
    np.testing.assert_allclose(report["weights"], cloze_head.attention_weights(run, tokens))
    rows = np.arange(len(tokens))
    effects = removal.effects(*run.model.removal_effects(run.params, tokens))
    np.testing.assert_allclose(report["effect"], effects[rows, report["heaviest"]])
    assert np.all(report["weights"][rows, report["heaviest"]] == report["weights"].max(axis=1))
    summary = " ".join(cloze_explorers.robust_sentence_summary(3).split())  # undo the wrapping
    floor = cloze_runs.RECALL_FLOOR
    expected = cloze_recall.top1_accuracy(run) > floor
    assert f"recalls more than {floor} of all training tokens: {expected}" in summary


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: cloze_explorers.sentence_report(16), "index"),
        (lambda: cloze_explorers.sentence_report(0, query="words"), "query must be one of"),
        (lambda: cloze_runs.train(-1), "seed"),
    ],
)
def test_part_two_reports_refuse_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_flavour_report_matches_the_measures_of_its_run():
    r = flavour_explorers.flavour_report("dot", (0,))
    model, params, _ = flavour_runs.reader_run("dot", 0)
    heldout = marked_step.lesson_data()[1]
    assert r["marker"] == int(heldout.marked[0, 0])
    weights = model.forward(params, heldout.inputs[:1]).weights[0]
    np.testing.assert_allclose(r["weights"][0], weights)
    assert r["measures"][0] == markers.measure(model, params, heldout)
    assert "dot" in flavour_explorers.describe_flavour("dot", (0,))


def test_head_report_shows_the_chosen_head():
    r = flavour_explorers.head_report("two heads: head 1", 3)
    model, params, _ = head_runs.heads_run(2, head_runs.HEADS_SEED)
    weights = model.forward(params, head_runs.heads_data()[1].inputs[3:4]).weights
    np.testing.assert_allclose(r["weights"], weights[0, 1])


def test_hop_report_reads_the_chosen_hop():
    r = flavour_explorers.hop_report(0, hop=2)
    assert r["hop"] == 2 and len(r["weights"]) == len(r["sentences"])
    np.testing.assert_allclose(r["weights"].sum(), 1.0)


def test_describe_says_so_when_no_step_moves_p_or_all_weights_tie():
    # concat, seed 0: on example 0 its output is saturated, every |Δp| below the threshold
    r = flavour_explorers.flavour_report("concat", (0,))
    assert max(r["effects"][0]) < flavour_explorers.NEGLIGIBLE
    text = flavour_explorers.describe_flavour("concat", (0,))
    assert "no step moves p" in text and "most influential" not in text
    # mean pooling: every weight 1/12, so no step is the heaviest
    text = flavour_explorers.describe_flavour("mean pooling", (0,))
    assert "all weights equal (0.083)" in text and "heaviest step" not in text
    # feed-forward, seed 0: a real effect is still named
    assert "most influential step 8" in flavour_explorers.describe_flavour("feed-forward", (0,))


def test_hop_frames_keep_their_title_inside_the_frame():
    import matplotlib.pyplot as plt

    from attention_measured.book import widgets

    fig = flavour_explorers.render_hop(4, 1)  # the longest title of the twin's stories
    try:
        fig.set_size_inches(widgets.FRAME_WIDTH, fig.get_figheight())
        fig.canvas.draw()
        box = fig.bbox
        for text in fig.findobj(plt.Text):
            if text.get_text().strip() and text.get_visible():
                extent = text.get_window_extent()
                assert extent.x0 >= box.x0 - 1 and extent.x1 <= box.x1 + 1, text.get_text()
    finally:
        plt.close(fig)


def test_part_three_reports_refuse_bad_choices():
    with pytest.raises(ValueError, match="flavour must be one of"):
        flavour_explorers.flavour_report("cosine")
    with pytest.raises(ValueError, match="choice must be one of"):
        flavour_explorers.head_report("three heads")
    with pytest.raises(ValueError, match="hop must be an integer between 1 and 3"):
        flavour_explorers.hop_report(0, hop=4)
    with pytest.raises(ValueError, match="shuffle"):
        flavour_explorers.order_report(0, shuffle=-1)


@pytest.mark.parametrize(
    "describe, args, expected",
    [
        (marked_step_explorers.describe_example, (0,), "run 2: p(label 1)"),
        (marked_step_explorers.describe_drop, (0, 11), "dropped"),
        (
            marked_step_explorers.describe_seed,
            (marked_step_runs.INIT_SEEDS[0],),
            "held-out accuracy 0.8889",
        ),
        (flavour_explorers.describe_flavour, ("feed-forward, bias per position",), "seed 1"),
        (cloze_explorers.describe_sentence, (0,), "dropping the heaviest key moves p(true)"),
        (cloze_explorers.describe_query_variant, (0, "blank"), "blank query"),
        (cloze_explorers.describe_udhr_seed, (0,), "loss per token 4.5846 at iteration 1"),
        (flavour_explorers.describe_head, ("two heads: head 1", 0), "most influential step"),
        (flavour_explorers.describe_order, (0, 3), "P(A before B)"),
        (flavour_explorers.describe_hop, (0, 1), "hop 1 of 3"),
    ],
)
def test_every_explorer_describes_its_default_position(describe, args, expected):
    text = describe(*args)
    assert expected in text
    assert max(map(len, text.splitlines())) <= book_pages.WIDTH  # fits the column, phone included


# ------------------------------------------------------------------ Part IV
def test_part_four_explorers_describe_what_comparison_computes():
    from attention_measured.book import translation_explorers
    from attention_measured.experiments import translation_runs
    from attention_measured.tasks import translation

    source = translation_explorers.test_sentence(12)
    assert len(source) == 12
    assert translation.translate(source).source == source
    text = translation_explorers.describe_alignment("Transformer", 12)
    r = translation_runs.translate("Transformer", 0, source)
    wide = translation_runs.translate("Transformer", 0, source, beam=4)
    assert wide["log_prob"] >= r["log_prob"] - 1e-12 and r["log_prob"] < 0
    assert wide["weights"].shape == r["weights"].shape
    assert f"output: {' '.join(r['output'])}"[:60] in text.replace("\n  ", " ")
    assert "of 12 words" in text
    assert all(len(line) <= book_pages.WIDTH for line in text.splitlines())
    fig = translation_explorers.render_pair("the red fox sees a dog")
    assert len(fig.axes) == 1


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: translation_explorers.test_sentence(41),
            "length",
        ),
        (
            lambda: translation_explorers.test_sentence(12, 20),
            "index",
        ),
        (lambda: translation_runs.book_model("GPT"), "model"),
        (
            lambda: translation_explorers.render_alignment("fixed context"),
            "no attention weights",
        ),
        (
            lambda: translation_explorers.describe_alignment("GPT"),
            "model must be one of",
        ),
    ],
)
def test_part_four_bad_choices_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ------------------------------------------------------------------ Part V
def test_part_five_explorer_describes_rankings_against_the_true_cause():
    from attention_measured.book import explanation_explorers
    from attention_measured.experiments import explanation_runs, registry
    from attention_measured.measures import explanations

    subject = registry.heads_subject("two heads: head 1", 0)
    text = explanation_explorers.describe_rankings("two heads: head 1", "leave one out", 3)
    place = explanations.rank_of_truth(subject.importance("leave one out")[[3]], subject.truth[[3]])
    assert f"true cause: step {subject.truth[3]}, ranked {place[0] + 1} of 12" in text
    # the statistic is the explored seed's own, with the spread over the model's seeds
    stored = explanation_runs.stored()["two heads: head 1"]["cards"][0]["values"]
    assert f"{stored['first: leave one out']:.2f} of this seed's examples" in text
    assert "over the model's seeds" in text and "seed 0, example 3" in text
    assert "no true cause" in explanation_explorers.describe_rankings("UDHR head", "attention", 0)
    assert "cannot" in explanation_explorers.describe_rankings("Transformer", "gradient", 0)
    fig = explanation_explorers.render_rankings("two heads: head 1", "gradient × input", 3)
    assert len(fig.axes) == 2 and "true cause" in fig.axes[0].get_title(loc="left")
    fig = explanation_explorers.render_rankings("Transformer", "gradient", 0)
    assert "cannot" in fig.axes[0].texts[0].get_text()


def test_part_five_explorer_names_a_translators_steps_by_their_source_words():
    from attention_measured.book import explanation_explorers
    from attention_measured.tasks import translation

    subject = explanation_explorers._subject("Bahdanau", 0)
    words = [translation.SOURCE_WORDS[i] for i in subject.inputs[0][1]]
    fig = explanation_explorers.render_rankings("Bahdanau", "leave one out", 1)
    assert [t.get_text() for t in fig.axes[-1].get_xticklabels()] == words
    text = explanation_explorers.describe_rankings("Bahdanau", "attention", 1)
    truth = int(subject.truth[1])
    assert f"true cause: step {truth} ({words[truth]})" in text
    with pytest.raises(ValueError, match="words"):
        explanation_explorers.rankings_figure(subject, 1, ["attention"], words[:-1])


def test_part_four_alignment_is_scored_only_where_it_means_something():
    from attention_measured.book import translation_explorers
    from attention_measured.experiments import translation_runs

    source = translation_explorers.test_sentence(20)
    r = translation_runs.translate("Bahdanau", 0, source)
    assert r["forced"].shape == (len(r["reference"]) + 1, len(source))
    text = translation_explorers.describe_alignment("Bahdanau", 20)
    still = translation_runs.still_right(r["output"], r["reference"])
    assert r["output"][:still] == r["reference"][:still]
    assert still == len(r["output"]) or r["output"][still] != r["reference"][still]
    assert f"of {still} while the output matches the reference" in text
    forced = (r["forced"][:20].argmax(axis=1) == r["alignment"]).sum()
    assert f"  {forced} of 20 given the true previous words" in text


@pytest.mark.parametrize("example", [-1, 180, 2.0, True])
def test_part_five_explorer_refuses_bad_examples(example):
    from attention_measured.book import explanation_explorers

    with pytest.raises(ValueError, match="example"):
        explanation_explorers.render_rankings("two heads: head 1", "attention", example)


def _builders():
    """Every explorer builder of the book: the public functions of the *_explorers modules that
    take ``static``."""
    import importlib
    import inspect

    names = ["explanation", "marked_step", "flavour", "translation", "cloze"]
    for module in (
        importlib.import_module(f"attention_measured.book.{n}_explorers") for n in names
    ):
        for name, function in inspect.getmembers(module, inspect.isfunction):
            mine = function.__module__ == module.__name__  # not widgets.explorer, imported
            if (
                mine
                and not name.startswith("_")
                and "static" in inspect.signature(function).parameters
            ):
                yield f"{module.__name__.rsplit('.', 1)[-1]}.{name}", function


@pytest.mark.parametrize("name, builder", list(_builders()))
def test_every_explorer_refuses_a_flag_that_is_not_true_or_false(name, builder):
    # "False" is a non-empty string, so `if static:` would build the static twin
    for bad in ("False", 0, None):
        with pytest.raises(TypeError, match="static must be True or False"):
            builder(static=bad)


@pytest.mark.parametrize("name, builder", list(_builders()))
def test_every_explorer_declares_its_choices_once_for_both_forms(name, builder, monkeypatch):
    from attention_measured.book import widgets

    seen = {}
    monkeypatch.setattr(widgets, "live", lambda controls, *a: seen.setdefault("live", controls))
    monkeypatch.setattr(
        widgets, "static_twin", lambda n, controls, *a, **k: seen.setdefault("static", controls)
    )
    builder(static=False)
    builder(static=True)
    live, static = seen["live"], seen["static"]
    assert list(live) == list(static)
    for key, control in live.items():
        assert isinstance(control, widgets.Control)
        assert control.label == static[key].label and control.default == static[key].default
        assert all(v in control.values for v in control.shown)  # the twin draws what it offers


def test_the_document_figure_refuses_an_empty_set_of_models():
    from attention_measured.book import flavour_explorers
    from attention_measured.models import hierarchical
    from attention_measured.tasks import documents

    docs = documents.documents(2, seed=1)
    with pytest.raises(ValueError, match="seed: params"):
        flavour_explorers.document_weights(hierarchical.Hierarchical(), {}, docs, [])


def test_part_seven_head_report_matches_the_library_and_refuses_bad_choices():
    from attention_measured.book import language_explorers
    from attention_measured.experiments import language_runs

    r = language_explorers.head_report(1, 0, 0)
    run, _ = language_runs.train(seed=0)
    held = language_runs.held_out()
    weights = run.model.forward(run.params, held.tokens[:1]).parts["weights"][0]
    np.testing.assert_array_equal(r["weights"], weights[0, 0])
    assert r["previous"] > 0.9 and r["without"] > r["loss"] + 1.0
    assert "copy of" in language_explorers.describe_head(2, 1, 3)
    for bad, message in [((3, 0, 0), "layer"), ((1, 2, 0), "head"), ((1, 0, 8), "sequence")]:
        with pytest.raises(ValueError, match=message):
            language_explorers.head_report(*bad)


def test_part_seven_position_report_counts_as_carried_does_and_refuses_bad_choices():
    from attention_measured.book import language_explorers
    from attention_measured.experiments import language_runs

    r = language_explorers.position_report("rotary", 32)
    run, history = language_runs.train(seed=0)  # rotary is the default scheme
    assert r["share"] == language_runs.carried(run, [32])[0]
    assert r["head"] == np.argmax(history.induction[-1][1])
    held = language_runs.held_out()  # at the training length, the explorer's sequences
    weights = run.model.forward(run.params, held.tokens[:1]).parts["weights"][1]
    np.testing.assert_array_equal(r["weights"], weights[0, r["head"]])
    alibi = language_explorers.position_report("alibi", 32)
    assert alibi["head"] == 1  # its gentle slope is its induction head (the page's table)
    assert r["repeat"] == held.repeat[0] and len(r["right"]) == r["repeat"] - 1
    assert r["right"].mean() > 0.8 and r["weights"].shape == (32, 32)
    text = language_explorers.describe_position("rotary", 32)
    assert "tested at 32" in text and language_explorers.share_bound(r["share"]) in text
    assert language_explorers.share_bound(0.1) == "< 0.15"
    assert language_explorers.share_bound(0.7538) == "≥ 0.70"
    for bad, message in [(("rope", 32), "scheme"), (("alibi", 129), "length")]:
        with pytest.raises(ValueError, match=message):
            language_explorers.position_report(*bad)
    with pytest.raises(ValueError, match="share"):
        language_explorers.share_bound(1.5)


def test_bounds_fall_on_their_grid_beyond_the_margin_and_refuse_bad_input():
    from attention_measured import book

    assert book.at_least(0.7538) == pytest.approx(0.70)
    assert book.at_most(0.1325, 0.1, 0.05) == pytest.approx(0.2)
    for v in np.linspace(0.0, 3.0, 61):
        assert book.at_least(v) <= v - 0.02 + 1e-12 and book.at_most(v) >= v + 0.02 - 1e-12
    for call, error in [
        (lambda: book.at_least("0.5"), TypeError),
        (lambda: book.at_most(np.nan), ValueError),
        (lambda: book.at_least(0.5, step=0), ValueError),
        (lambda: book.at_most(0.5, margin=-1), ValueError),
    ]:
        with pytest.raises(error):
            call()
