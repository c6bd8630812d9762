"""Explorers of the marked-step pages (Part I): drop a step, change the seed, pick an example.
Each computes its numbers here (:func:`drop_report`, :func:`seed_report`,
:func:`example_report`) from the models and measures below, and draws and describes them."""

from __future__ import annotations

import numpy as np

from ..core import checks, rng
from ..core.losses import sigmoid
from ..experiments import marked_step_runs
from ..experiments.marked_step_runs import EXAMPLES, MODEL, example, hundred_seeds, train, two_runs
from ..machinery.cache import remembered
from ..measures import removal
from ..measures.markers import accuracy, marker_weight
from ..tasks import marked_step
from ..tasks.marked_step import STEPS, check_step
from . import plots
from .widgets import Control, explorer


def drop_report(example_index: int, step: int) -> dict:
    """Both runs on one held-out example with ``step`` dropped: weights and p before and after
    (section 4).

    Returns {"weights": (2, T), "without": (2, T), "p": (2,), "p_without": (2,), "marker": int}.
    """
    step = check_step(step)
    chosen = example(checks.index(example_index, "example_index", EXAMPLES))
    runs = two_runs()[1]
    keep = np.arange(STEPS) != step
    before, after = (MODEL.forward(runs, chosen.inputs, keep=k) for k in (None, keep))
    return {
        "weights": before.weights[:, 0],
        "without": after.weights[:, 0],
        "p": sigmoid(before.output)[:, 0],
        "p_without": sigmoid(after.output)[:, 0],
        "marker": int(chosen.markers[0]),
    }


@remembered
def seed_report(seed: int, example_index: int = 0) -> dict:
    """Train one network from ``seed``; measure it on the held-out set and on one example
    (section 5).

    Returns held-out accuracy, marker weight and hit rate (floats), the example's "weights"
    and removal "effects" (each (T,)) and its "marker", and where the seed falls among
    :func:`hundred_seeds`: "hundred_weights" (100,) and "share_below", the share of the hundred
    seeds whose marker weight is lower.
    """
    params = train(rng.check_seed(seed)).params
    heldout = two_runs()[0]
    chosen = example(checks.index(example_index, "example_index", EXAMPLES))
    weight, hit = marker_weight(MODEL, params, heldout)
    swept = hundred_seeds()
    hundred = swept["marker_weight"]
    # a seed of the hundred is compared by its value in the sweep, as section 5's table does
    # (the sweep trains the seeds stacked, which may round differently in the last bits)
    among = np.flatnonzero(swept["seeds"] == int(seed))
    reference = hundred[among[0]] if among.size else float(weight)
    return {
        "seed": int(seed),
        "heldout_accuracy": float(accuracy(MODEL, params, heldout)),
        "marker_weight": float(weight),
        "marker_hit_rate": float(hit),
        "weights": MODEL.forward(params, chosen.inputs).weights[0],
        "effects": removal.effects(*MODEL.removal_effects(params, chosen.inputs))[0],
        "marker": int(chosen.markers[0]),
        "hundred_weights": hundred,
        "share_below": float(np.mean(hundred < reference)),
    }


def example_report(example_index: int) -> dict:
    """Readings, both runs' weights, removal effects and p for one held-out example (section 3)."""
    chosen = example(checks.index(example_index, "example_index", EXAMPLES))
    runs = two_runs()[1]
    p, p_without = MODEL.removal_effects(runs, chosen.inputs)
    return {
        "readings": chosen.readings[0],
        "marker": int(chosen.markers[0]),
        "label": int(chosen.labels[0]),
        "weights": MODEL.forward(runs, chosen.inputs).weights[:, 0],
        "effects": removal.effects(p, p_without)[:, 0],
        "p": p[:, 0],
    }


@plots.styled
def _render_drop(example: int, step: int):
    r = drop_report(example, step)
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
    r = drop_report(example, step)
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
    r = seed_report(seed, example)
    # runs 1 and 2 in their colours everywhere in the Part; any other seed in neutral grey
    runs = list(marked_step_runs.INIT_SEEDS)
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
    r = seed_report(seed, example)
    heavy, moved = int(np.argmax(r["weights"])), int(np.argmax(r["effects"]))
    return (
        f"init seed {seed}: held-out accuracy {r['heldout_accuracy']:.4f}\n"
        f"  mean weight on the marker {r['marker_weight']:.4f}\n"
        f"  the heaviest step is the marker in {r['marker_hit_rate']:.4f} "
        "of the held-out sequences\n"
        f"  among the hundred seeds, {r['share_below']:.2f} put less weight on the marker\n"
        f"held-out example {example} (marker step {r['marker']})\n"
        f"  heaviest step {heavy} (weight {r['weights'][heavy]:.3f}), "
        f"most influential step {moved} (|Δp| {r['effects'][moved]:.3f})"
    )


@plots.styled
def _render_example(example: int):
    r = example_report(example)
    return plots.example_figure(
        r["readings"],
        r["marker"],
        marked_step.THRESHOLD,
        f"example {example}: marker step {r['marker']}, label {r['label']}",
        {"run 1": r["weights"][0], "run 2": r["weights"][1]},
        {"run 1": r["effects"][0], "run 2": r["effects"][1]},
    )


def describe_example(example: int) -> str:
    r = example_report(example)
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


TWIN_SEEDS = list(range(marked_step_runs.INIT_SEEDS[0], marked_step_runs.INIT_SEEDS[0] + 16))


def drop_a_step(static: bool = False):
    """Pick a held-out example and a step; both runs' weights and p before and after dropping it."""
    controls = {
        "example": Control(
            "held-out example", range(marked_step_runs.EXAMPLES), twin=range(TWIN_EXAMPLES)
        ),
        "step": Control("dropped step", range(marked_step.STEPS), 11),
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
        "example": Control(
            "held-out example", range(marked_step_runs.EXAMPLES), twin=range(TWIN_BROWSE)
        )
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
