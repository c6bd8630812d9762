"""Part I's explorers: drop a step, change the seed, pick an example (live and static twins).

Each explorer only draws and describes what :mod:`attention_measured.lesson` computes (its
``drop_report``, ``seed_report`` and ``example_report``), and hands the two to
:mod:`attention_measured.widgets`.
"""

from __future__ import annotations

import numpy as np

from . import lesson, plots
from .widgets import Control, explorer


@plots.styled
def _render_drop(example: int, step: int):
    r = lesson.drop_report(example, step)
    fig, axes = plots.figure(2, 1, height=4.6)
    for run, ax in enumerate(axes):
        plots.bars(
            ax,
            {"before": r["weights"][run], f"step {step} dropped": r["without"][run]},
            marker=r["marker"],
            colours=(plots.RUNS[run], plots.AFTER),
            title=f"run {run + 1}: p = {r['p'][run]:.3f} → {r['p_without'][run]:.3f}",
        )
        ax.text(step, 0.02, "✕", ha="center", color=plots.INK, fontsize=12, fontweight="bold")
    return fig


def describe_drop(example: int, step: int) -> str:
    r = lesson.drop_report(example, step)
    lines = [f"held-out example {example}: marker step {r['marker']}, dropped step {step}"]
    for run in range(2):
        lines.append(
            f"run {run + 1}: weight of step {step} {r['weights'][run][step]:.3f};  "
            f"p(label 1) {r['p'][run]:.3f} -> {r['p_without'][run]:.3f}  "
            f"(moved {abs(r['p_without'][run] - r['p'][run]):.3f})"
        )
    return "\n".join(lines)


@plots.styled
def _render_seed(seed: int, example: int = 0):
    r = lesson.seed_report(seed, example)
    # runs 1 and 2 in their colours everywhere in the Part; any other seed in neutral grey
    runs = list(lesson.INIT_SEEDS)
    colour = plots.RUNS[runs.index(seed)] if seed in runs else plots.NEUTRAL
    fig, axes = plots.figure(3, 1, height=6.9)
    plots.bars(
        axes[0],
        {f"seed {seed}": r["weights"]},
        marker=r["marker"],
        colours=(colour,),
        title=f"weights (held-out accuracy {r['heldout_accuracy']:.4f})",
    )
    plots.bars(
        axes[1],
        {f"seed {seed}": r["effects"]},
        marker=r["marker"],
        colours=(plots.AFTER,),
        ylabel="|Δp| when dropped",
        title="removal effects",
        ylim=(0, 0.5),
    )
    plots.distribution(
        axes[2],
        r["hundred_weights"],
        {f"seed {seed}": r["marker_weight"]},
        "mean weight on the marker, held-out",
        value_range=(0, 1),
    )
    axes[2].set_title(
        f"among the hundred seeds, {r['share_below']:.0%}\nput less weight on the marker"
    )
    return fig


def describe_seed(seed: int, example: int = 0) -> str:
    r = lesson.seed_report(seed, example)
    heavy, moved = int(np.argmax(r["weights"])), int(np.argmax(r["effects"]))
    return (
        f"init seed {seed}: held-out accuracy {r['heldout_accuracy']:.4f}\n"
        f"  mean weight on the marker {r['marker_weight']:.4f}, "
        f"heaviest step is the marker in {r['marker_hit_rate']:.4f}\n"
        f"  among the hundred seeds, {r['share_below']:.2f} put less weight on the marker\n"
        f"held-out example {example} (marker step {r['marker']})\n"
        f"  heaviest step {heavy} (weight {r['weights'][heavy]:.3f}), "
        f"most influential step {moved} (|Δp| {r['effects'][moved]:.3f})"
    )


@plots.styled
def _render_example(example: int):
    r = lesson.example_report(example)
    return plots.example_figure(
        r["readings"],
        r["marker"],
        lesson.THRESHOLD,
        f"example {example}: marker step {r['marker']}, label {r['label']}",
        {"run 1": r["weights"][0], "run 2": r["weights"][1]},
        {"run 1": r["effects"][0], "run 2": r["effects"][1]},
    )


def describe_example(example: int) -> str:
    r = lesson.example_report(example)
    lines = [
        f"held-out example {example}: marker step {r['marker']}, reading there "
        f"{r['readings'][r['marker']]:.3f}, label {r['label']}"
    ]
    for run in range(2):
        heavy, moved = int(np.argmax(r["weights"][run])), int(np.argmax(r["effects"][run]))
        lines.append(
            f"run {run + 1}: p(label 1) {r['p'][run]:.3f}\n"
            f"  heaviest step {heavy} (weight {r['weights'][run][heavy]:.2f}), "
            f"most influential step {moved} (|Δp| {r['effects'][run][moved]:.3f})"
        )
    return "\n".join(lines)


TWIN_EXAMPLES = 6  # held-out examples offered by the static twins of "drop a step" ...


TWIN_BROWSE = 24  # ... and of "pick an example"


TWIN_SEEDS = list(range(lesson.INIT_SEEDS[0], lesson.INIT_SEEDS[0] + 16))


def drop_a_step(static: bool = False):
    """Pick a held-out example and a step; both runs' weights and p before and after dropping it."""
    controls = {
        "example": Control("held-out example", range(lesson.EXAMPLES), twin=range(TWIN_EXAMPLES)),
        "step": Control("dropped step", range(lesson.STEPS), 11),
    }
    return explorer(
        "drop-a-step",
        controls,
        _render_drop,
        describe_drop,
        static=static,
        alt="Two bar charts of attention weights over 12 steps, for run 1 and run 2, "
        "before and after the chosen step is dropped and the rest renormalised.",
    )


def change_the_seed(static: bool = False):
    """Pick an init seed; retrain (about 30 ms) and show held-out accuracy, example 0's weights
    and removal effects, and where the seed's marker weight falls among the hundred seeds.
    """
    controls = {"seed": Control("init seed", range(2**31), TWIN_SEEDS[0], twin=TWIN_SEEDS)}
    return explorer(
        "change-the-seed",
        controls,
        _render_seed,
        describe_seed,
        static=static,
        alt="For the network trained from the chosen init seed: its attention weights over the "
        "12 steps of held-out example 0 and each step's removal effect, as bar charts, and a "
        "histogram of the hundred seeds' mean weight on the marker with the chosen seed's "
        "drawn as a line.",
    )


def pick_an_example(static: bool = False):
    """Browse held-out sequences: readings, both runs' weights and removal effects."""
    controls = {
        "example": Control("held-out example", range(lesson.EXAMPLES), twin=range(TWIN_BROWSE))
    }
    return explorer(
        "pick-an-example",
        controls,
        _render_example,
        describe_example,
        static=static,
        alt="Three bar charts for one held-out sequence: its readings with the marked "
        "step highlighted, both runs' attention weights, and both runs' removal effects.",
    )
