"""Part III's explorers: a sentence pair with its alignment, one model's translation of a chosen
sentence, and every model's accuracy at a chosen length.

Each only draws and describes what :mod:`attention_measured.tasks.translation` and
:mod:`attention_measured.experiments.translation_runs` compute, and hands the two to
:mod:`attention_measured.book.widgets`, live or as a static twin.
"""

from __future__ import annotations

import textwrap

import numpy as np

from ..core import checks
from ..experiments import translation_runs
from ..tasks import translation
from . import pages, plots
from .widgets import Control, explorer

ATTENTION_MODELS = ["Bahdanau", "Luong", "Luong, input feeding", "Transformer"]


CURVE_MODELS = ["fixed context", "Bahdanau", "Luong", "Luong, input feeding", "Transformer"]


CURVE_COLOURS = dict(
    zip(CURVE_MODELS, [plots.NEUTRAL, plots.RUNS[0], plots.AFTER, plots.MARKER, plots.RUNS[1]])
)


TWIN_SENTENCE_LENGTHS = [8, 12, 16, 20, 26]  # the twin's sentences: test sentence 0 of each


TWIN_LENGTHS = [5, 10, 15, 20, 22, 25, 30, 35, 40]


def test_sentence(length: int, index: int = 0) -> tuple[str, ...]:
    """The source words of test sentence ``index`` of ``length`` words."""
    test = translation.book_data()[1]
    length = _checked_length(length)
    corpus = test[length]
    index = checks.index(index, "index", len(corpus.source))
    return tuple(translation.SOURCE_WORDS[i] for i in corpus.source[index])


def _checked_length(length: int) -> int:
    low, high = translation.TEST_LENGTHS
    return checks.integer(length, "length", low, high)


@plots.styled
def render_pair(source):
    """The source words above their translation, a line from each target word to the source word
    it translates (Part III, the task)."""
    pair = translation.translate(source)
    n = len(pair.source)
    fig, ax = plots.figure(height=1.5)
    for row, words in ((1, pair.source), (0, pair.target)):
        for j, word in enumerate(words):
            ax.text(
                j, row, word, ha="center", va="center", fontsize=9, rotation=90 if n > 14 else 0
            )
    for i, j in enumerate(pair.alignment):
        crossed = i != j
        ax.plot([j, i], [0.82, 0.18], color=plots.MARKER if crossed else plots.NEUTRAL, lw=1.2)
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylim(-0.35, 1.35)
    ax.set_yticks([0, 1], ["target", "source"])
    ax.set_xticks([])
    ax.grid(False)
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    return fig


@plots.styled
def render_alignment(model: str, length: int = 12, seed: int = 0):
    """Where each output word looked: the model's attention while it translates greedily, with
    the true alignment ringed up to the first wrong word."""
    r = translation_runs.translate(_attending(model), seed, test_sentence(length))
    words = list(r["output"])
    shown = len(words) + 1  # the output words and the step that wrote </s> (or the last step)
    weights = r["weights"][:shown]
    # sized by the reference, not by the output: a chaotic run may write one word more or less
    fig, ax = plots.figure(height=1.2 + 0.16 * (len(r["reference"]) + 1))
    rows = words + ["</s>" if shown <= len(r["weights"]) else "…"]
    plots.heatmap(ax, weights, rows[: len(weights)], list(r["source"]), title=model, colorbar=False)
    ax.set_xlabel("source word")
    ax.set_ylabel("output word")
    # the true alignment is ringed only while the output is the reference: after a mistake the
    # model translates its own words, not the reference's
    still = translation_runs.still_right(words, r["reference"])
    truth = [(i, j) for i, j in enumerate(r["alignment"]) if i < min(len(weights), still)]
    ax.scatter(
        [j for _, j in truth],
        [i for i, _ in truth],
        s=30,
        facecolors="none",
        edgecolors=plots.MARKER,
        linewidths=1.2,
    )
    return fig


def _attending(model: str) -> str:
    """``model`` if it is one of the models with attention, whose weights can be drawn."""
    if model == "fixed context":
        raise ValueError("model 'fixed context' has no attention weights to draw")
    return checks.choice(model, "model", ATTENTION_MODELS)


def describe_alignment(model: str, length: int = 12, seed: int = 0) -> str:
    r = translation_runs.translate(_attending(model), seed, test_sentence(length))
    score = translation_runs.translation_measures(r)
    lines = [f"{model}, seed {seed}, test sentence of {length} words"]
    for label in ("source", "output", "reference"):
        words = r[label]
        lines += textwrap.wrap(f"{label}: {' '.join(words)}", pages.WIDTH, subsequent_indent="  ")
    exact, n = "yes" if score["exact"] else "no", score["words"]
    lines.append(f"exact: {exact}; {score['right']} of {n} words right")
    lines.append("heaviest weight on the word being translated:")
    matched = f"{score['on_truth']} of {score['still']}"
    lines.append(f"  {matched} while the output matches the reference")
    lines.append(f"  {score['forced']} of {n} given the true previous words")
    return "\n".join(lines)


def pick_a_sentence(static: bool = False):
    """Pick a model and a test sentence; see where each output word looked."""
    low, high = translation.TEST_LENGTHS
    controls = {
        "model": Control("model", ATTENTION_MODELS),
        "length": Control("sentence length", range(low, high + 1), 12, twin=TWIN_SENTENCE_LENGTHS),
        "seed": Control("seed", translation_runs.SEEDS, twin=[translation_runs.SEEDS[0]]),
    }
    return explorer(
        "pick-a-sentence",
        controls,
        render_alignment,
        describe_alignment,
        static=static,
        alt="A matrix of attention weights: one row per output word, one column per source "
        "word, darker where the word looked; circles mark the source word each target word "
        "truly translates.",
    )


MEASURES = {
    "exact": "sentences exactly right",
    "words": "words right",
    "aligned": "heaviest weight on the true word",
    "early": "outputs ended too early",
    "bleu": "BLEU (0 to 100)",
}


UNSEEN = "lengths never seen in training"  # the shading's label, drawn once per axes


def plot_lengths(
    ax, names=CURVE_MODELS, measure: str = "exact", length: int | None = None, beam=None
):
    """One measure of :func:`translation_runs.length_curve` against sentence length on ``ax``: each
    model's mean over seeds, and a band from its worst seed to its best; lengths never seen in
    training shaded; a dotted line at ``length`` if given.  With ``beam``, the curves of beam
    search of that width (:func:`translation_runs.beam_curve`), dashed."""
    checks.choice(measure, "measure", tuple(MEASURES))
    curves = translation_runs.length_curves(names, beam=beam)
    lengths = curves["lengths"]
    top = 100 if measure == "bleu" else 1
    if not any(t.get_gid() == UNSEEN for t in ax.texts):  # once, if greedy and beam share ax
        ax.axvspan(translation.TRAIN_LENGTHS[1] + 0.5, lengths[-1] + 0.5, color="#eeeeee", lw=0)
        ax.text(
            translation.TRAIN_LENGTHS[1] + 1,
            1.08 * top,
            "never seen in training",
            fontsize=9,
            va="top",
            gid=UNSEEN,
        )
    for name in names:
        values = curves[name][measure]
        colour = CURVE_COLOURS.get(name, plots.INK)
        ax.fill_between(
            lengths, values.min(axis=0), values.max(axis=0), color=colour, alpha=0.2, lw=0
        )
        label = name if beam is None else f"{name}, beam {beam}"
        style = "-" if beam is None else "--"
        ax.plot(lengths, values.mean(axis=0), color=colour, label=label, lw=1.6, ls=style)
    if length is not None:
        ax.axvline(_checked_length(length), color=plots.INK, lw=1, ls=":")
    ax.set_xlabel("source sentence length (words)")
    ax.set_ylabel(MEASURES[measure])
    ax.set_ylim(-0.02 * top, 1.12 * top)


@plots.styled
def render_lengths(length: int = 20):
    """Exact-match accuracy against sentence length for every model, a line at the chosen
    length."""
    fig, ax = plots.figure(height=3.0)
    plot_lengths(ax, CURVE_MODELS, "exact", length)
    ax.legend(fontsize=8.5, loc="center right")  # 8.5 points: a twin's frame on a phone
    return fig


def describe_lengths(length: int = 20) -> str:
    curves = translation_runs.length_curves(CURVE_MODELS)
    at = int(np.flatnonzero(curves["lengths"] == _checked_length(length))[0])
    seen = "seen" if length <= translation.TRAIN_LENGTHS[1] else "never seen"
    lines = [
        f"sentences of {length} words ({seen} in training); "
        f"mean of {len(translation_runs.SEEDS)} seeds"
    ]
    for name in CURVE_MODELS:
        exact, words = curves[name]["exact"][:, at], curves[name]["words"][:, at]
        lines.append(
            f"  {name:21s} exact {exact.mean():.2f} ({exact.min():.2f}-{exact.max():.2f}), "
            f"words {words.mean():.2f}"
        )
    return "\n".join(lines)


def slide_the_length(static: bool = False):
    """A length slider over every model's accuracy curve."""
    low, high = translation.TEST_LENGTHS
    return explorer(
        "slide-the-length",
        {"length": Control("length", range(low, high + 1), 20, twin=TWIN_LENGTHS)},
        render_lengths,
        describe_lengths,
        static=static,
        alt="Exact-match accuracy against source length for five models, with a dotted line "
        "at the chosen length; lengths past 22 are shaded as never seen in training.",
    )
