"""Part VII's explorer: any head of the copying model on any of a few held-out sequences, with
its scores and what removing it does to the copy (:func:`head_report` computes the numbers)."""

from __future__ import annotations

from ..core import checks
from ..experiments import language_runs
from ..measures import induction
from . import plots
from .widgets import Control, explorer

SEQUENCES = 8  # the held-out sequences the explorer offers


def head_report(layer: int, head: int, sequence: int) -> dict:
    """Layer ``layer`` (1 or 2) and head ``head`` (0 or 1) of seed 0's rotary model on held-out
    sequence ``sequence``: {"weights" (L, L), "repeat", "previous", "induction", "loss",
    "without": the loss on the copy with and without the head} (Part VII, induction heads)."""
    layer = checks.integer(layer, "layer", 1, 2)
    head = checks.index(head, "head", 2)
    sequence = checks.index(sequence, "sequence", SEQUENCES)
    run, _ = language_runs.train(seed=0)
    held = language_runs.held_out()
    tokens, source = held.tokens[[sequence]], held.source[[sequence]]
    weights = run.model.forward(run.params, tokens).parts["weights"][layer - 1]
    copy = held.repeated[[sequence], :-1]
    losses = run.model.losses(run.params, tokens)
    without = run.model.losses(run.params, tokens, ablate=[(layer - 1, head)])
    return {
        "weights": weights[0, head],
        "repeat": int(held.repeat[sequence]),
        "previous": float(induction.previous_token_score(weights)[head]),
        "induction": float(induction.induction_score(weights, source)[head]),
        "loss": float(losses[copy].mean()),
        "without": float(without[copy].mean()),
    }


@plots.styled
def _render_head(layer: int, head: int, sequence: int):
    r = head_report(layer, head, sequence)
    start = len(r["weights"]) - r["repeat"]
    fig, ax = plots.figure(height=3.6)
    ticks = [str(t) if t % 8 == 0 else "" for t in range(len(r["weights"]))]
    plots.heatmap(ax, r["weights"], ticks, ticks, f"layer {layer}, head {head}", colorbar=False)
    for line in (ax.axhline, ax.axvline):
        line(start - 0.5, color=plots.RUNS[1], ls="--", lw=1)
    return fig


def describe_head(layer: int, head: int, sequence: int) -> str:
    r = head_report(layer, head, sequence)
    start = len(r["weights"]) - r["repeat"]
    return (
        f"held-out sequence {sequence}: a copy of {r['repeat']} tokens from position {start}\n"
        f"layer {layer}, head {head}: previous-token score {r['previous']:.2f}, "
        f"induction score {r['induction']:.2f}\n"
        f"loss on the copy {r['loss']:.2f} nats; with this head removed {r['without']:.2f}"
    )


def pick_a_head(static: bool = False):
    """Any head of the copying model on a held-out sequence: its weights, its scores, and the
    copy's loss with the head removed (Part VII, induction heads)."""
    controls = {
        "layer": Control("layer", [1, 2]),
        "head": Control("head", [0, 1]),
        "sequence": Control("held-out sequence", range(SEQUENCES)),
    }
    return explorer(
        "pick-a-layer-and-head",
        controls,
        _render_head,
        describe_head,
        static=static,
        alt="The chosen head's attention weights on the chosen held-out sequence, queries as "
        "rows and keys as columns, with dashed lines where the copy starts.",
    )
