"""Part VI's explorers: one example's rankings against its true cause, for any model and method.

Each only draws and describes what :mod:`attention_measured.experiments.registry` and
:mod:`attention_measured.measures.explanations` compute, and hands the two to
:mod:`attention_measured.book.widgets`, live or as a static twin.
"""

from __future__ import annotations

import functools
import textwrap

import numpy as np

from ..core import checks
from ..experiments import explanation_runs, registry
from ..measures import explanations
from . import pages, plots
from .widgets import Control, explorer

RANKINGS = ["attention", "gradient", "attention × gradient", "gradient × input", "leave one out"]


TWIN_MODELS = [  # one or two from each family; the live widget offers every model
    "Part I network",
    "UDHR head",
    "additive",
    "dot",
    "mean pooling",
    "two heads: head 1",
    "memory network",
    "Bahdanau",
    "Luong",
    "Transformer",
]


TWIN_EXAMPLES = [0, 1]


LIVE_EXAMPLES = 100  # the live widget's examples of each model


def first_seed(model: str) -> int:
    """The seed a model is explored at: its first (Part I's is the lesson's run 1)."""
    return registry.MODELS[checks.choice(model, "model", registry.MODELS)].seeds[0]


@functools.lru_cache(maxsize=32)
def _subject(model: str, seed: int) -> explanations.Subject:
    """The model's Subject explored; of several (one per length), the middle one."""
    made = registry.subjects(model, seed)
    return made[len(made) // 2]


def _example(subject: explanations.Subject, example) -> int:
    """A checked index into the subject's examples."""
    size = len(subject.weights)
    if isinstance(example, bool) or not isinstance(example, (int, np.integer)):
        raise ValueError(f"example must be a whole number, got {example!r}")
    if not 0 <= example < size:
        raise ValueError(f"example must be from 0 to {size - 1}, got {example}")
    return int(example)


def rankings_figure(subject: explanations.Subject, example: int, methods=RANKINGS, words=None):
    """One example's steps ranked by each of ``methods``, one row of bars per method (each
    scaled to its largest), the true cause shaded; a method the model cannot support says why.
    ``words``: the steps' names under the bars (a translator's source words), or None for their
    numbers."""
    if not isinstance(subject, explanations.Subject):
        raise TypeError(f"subject must be a Subject (registry), got {type(subject).__name__}")
    example = _example(subject, example)
    if isinstance(methods, str) or not isinstance(methods, (list, tuple)) or not methods:
        raise TypeError(f"methods must be a list of ranking names, got {methods!r}")
    methods = [checks.choice(m, "methods", explanations.Subject.METHODS) for m in methods]
    # no text below 8.5 points: the frames are a phone's width, shown there at about 0.63
    labels = 0.0 if words is None else 0.7  # room for the slanted words under the last row
    fig, axes = plots.figure(
        nrows=len(methods), width=4.6, height=0.25 + 0.72 * len(methods) + labels
    )
    axes = np.atleast_1d(axes)
    steps = subject.weights.shape[1]
    if words is not None and (isinstance(words, str) or len(words) != steps):
        raise ValueError(f"words must name the {steps} steps, got {words!r}")
    truth = None if subject.truth is None else int(subject.truth[example])
    for ax, method in zip(axes, methods):
        reason = subject.supports(method)
        if reason:
            ax.text(
                0.5,
                0.5,
                "\n".join(textwrap.wrap(f"cannot: {reason}", 62)),
                ha="center",
                va="center",
                fontsize=8.5,
                transform=ax.transAxes,
                color=plots.INK,
            )
            ax.set_axis_off()
            ax.set_title(method, fontsize=9, loc="left")
            continue
        values = subject.importance(method)[example]
        top = values.max()
        scaled = values / top if top > 0 else values
        colours = [plots.MARKER if t == truth else plots.RUNS[0] for t in range(steps)]
        ax.bar(range(steps), scaled, color=colours, width=0.7)
        if truth is not None:
            ax.axvspan(truth - 0.45, truth + 0.45, color=plots.MARKER, alpha=0.15, lw=0)
            place = int(explanations.rank_of_truth(values[None], [truth])[0])
            where = "first" if place == 0 else f"place {place + 1} of {steps}"
            ax.set_title(f"{method}: true cause {where}", fontsize=9, loc="left")
        else:
            ax.set_title(method, fontsize=9, loc="left")
        ax.set_ylim(0, 1.05)
        ax.set_yticks([])
        if words is None:
            ax.set_xticks(
                range(steps), [str(t) if steps <= 20 else "" for t in range(steps)], fontsize=8.5
            )
        elif ax is axes[-1]:
            ax.set_xticks(range(steps), words, fontsize=8.5, rotation=60, ha="right")
        else:  # the words once, under the last row
            ax.set_xticks(range(steps), [""] * steps)
    axes[-1].set_xlabel(
        f"{'source word' if words is not None else 'step'} (bars scaled to each row's largest)",
        fontsize=8.5,
    )
    return fig


def _words(model: str, subject: explanations.Subject, example: int):
    """A translator's source words of ``example``; None for a model whose steps are not words
    of the translation task."""
    if registry.MODELS[model].family != "translators":
        return None
    from ..tasks import translation

    return [translation.SOURCE_WORDS[i] for i in np.asarray(subject.inputs[0])[example]]


def describe_rankings(model: str, method: str, example: int) -> str:
    """The chosen example's rankings in words, and the model's share of examples, over seeds,
    whose cause ``method`` puts first (from the stored sweep)."""
    seed = first_seed(model)
    subject = _subject(model, seed)
    example = _example(subject, example)
    words = _words(model, subject, example)

    def name(t):  # a step by its source word where it has one
        return f"{t} ({words[t]})" if words is not None else str(t)

    lines = [f"{subject.name}, seed {seed}, example {example}"]
    reason = subject.supports(method)
    if reason:
        return "\n".join(lines + textwrap.wrap(f"{method}: cannot, {reason}", pages.WIDTH))
    values = subject.importance(method)[example]
    order = np.argsort(-values, kind="stable")
    ranked = " ".join(name(t) for t in order[:8]) + (" …" if len(order) > 8 else "")
    lines.append(f"{method}, most important first: {ranked}")
    if subject.truth is None:
        lines += textwrap.wrap(f"no true cause: {subject.cannot['truth']}", pages.WIDTH)
        return "\n".join(lines)
    truth = int(subject.truth[example])
    place = int(explanations.rank_of_truth(values[None], [truth])[0])
    lines.append(
        f"true cause: step {name(truth)}, ranked {place + 1} of {len(values)} "
        "(steps tied with it count as above it)"
    )
    stored = explanation_runs.stored()
    share = stored[model]["cards"][seed]["values"][f"first: {method}"]
    _, low, high = explanation_runs.spread(stored, model, f"first: {method}")
    lines.append(
        f"{method} ranks the cause first in {share:.2f} of this seed's examples "
        f"({low:.2f} to {high:.2f} over the model's seeds)"
    )
    return "\n".join(textwrap.fill(line, pages.WIDTH) for line in lines)


def render_rankings(model: str, method: str, example: int):
    """The twin's frame: ``method``'s ranking of the example above the attention weights."""
    subject = _subject(model, first_seed(model))
    shown = ["attention"] if method == "attention" else [method, "attention"]
    return rankings_figure(subject, example, shown, _words(model, subject, example))


def rank_an_example(static: bool = False):
    """Pick a model, a ranking method and an example; see where the true cause falls."""
    methods = [*RANKINGS, "rollout", "flow"]
    controls = {
        "model": Control("model", registry.MODELS, twin=TWIN_MODELS),
        "method": Control("ranking", methods, "leave one out", twin=methods[:-1]),
        "example": Control("example", range(LIVE_EXAMPLES), twin=TWIN_EXAMPLES),
    }
    return explorer(
        "rank-an-example",
        controls,
        render_rankings,
        describe_rankings,
        static=static,
        dpi=90,  # 121 frames: at 100 dpi the page would pass its 1.5 MB on a phone
        alt="Bars over the steps of one example: the chosen ranking above the attention "
        "weights, each scaled to its largest, with the true cause shaded.",
    )


METHOD_COLOURS = {
    "attention": plots.RUNS[0],
    "gradient": plots.NEUTRAL,
    "attention × gradient": plots.INK,
    "gradient × input": plots.AFTER,
    "leave one out": plots.RUNS[1],
    "rollout": plots.MARKER,
    "flow": "#56B4E9",
}


def plot_first_shares(ax, result: dict, models, methods=("attention", "leave one out")) -> None:
    """One row per model, one dot per seed and method: the share of examples whose true cause
    the method ranks first, from a stored sweep (:func:`explanation_runs.stored`).  A method the
    model cannot run is left out of its row."""
    models, methods = list(models), list(methods)
    width = 0.36 / max(len(methods) - 1, 1)  # the dots of one row stay near it
    for row, model in enumerate(models):
        for k, method in enumerate(methods):
            cards = result[model]["cards"].values()
            shares = [
                c["values"][f"first: {method}"] for c in cards if f"first: {method}" in c["values"]
            ]
            shift = (k - (len(methods) - 1) / 2) * width if len(methods) > 1 else 0.0
            ax.scatter(
                shares,
                np.full(len(shares), row + shift),
                s=20,
                color=METHOD_COLOURS.get(method, plots.INK),
                label=method if row == 0 else None,
            )
    ax.set_yticks(range(len(models)), models)
    ax.set_ylim(len(models) - 0.5, -0.5)
    ax.set_xlabel("share of examples whose true cause is ranked first")
    ax.set_xlim(-0.03, 1.03)
    # above the axes, within the figure (the layout makes room), two columns at most: so it
    # fits the figure's phone variant too
    ax.figure.legend(
        *ax.get_legend_handles_labels(), loc="outside upper left", ncols=min(len(methods), 2)
    )
