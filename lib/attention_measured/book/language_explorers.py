"""Part VII's explorers: any head of the copying model on any of a few held-out sequences, with
its scores and what removing it does to the copy (:func:`head_report` computes the numbers);
and any position scheme at any test length, with how much of the copy it gets right
(:func:`position_report`)."""

from __future__ import annotations

import functools

import numpy as np

from ..core import checks
from ..experiments import language_runs
from ..measures import induction
from ..models.language_model import POSITIONS
from ..tasks.repeats import repeats
from . import plots
from .pages import at_least
from .widgets import Control, explorer

SEQUENCES = 8  # the held-out sequences the explorer offers


@functools.lru_cache(maxsize=64)  # a twin's frame draws and describes from one report
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


TEST_LENGTHS = (32, 64, 128)  # the training length, twice and four times it (Part VII, positions)


def share_bound(share: float) -> str:
    """A share of the copy predicted right, as the bound every nudge and processor keeps (Part VII,
    positions): "< 0.15" near chance (below 0.13), else "≥ " :func:`~.pages.at_least`."""
    share = checks.real(share, "share", 0.0, 1.0)
    return "< 0.15" if share < 0.13 else f"≥ {at_least(share):.2f}"


@functools.lru_cache(maxsize=32)
def position_report(scheme: str, length: int) -> dict:
    """Seed 0's model with positions ``scheme`` (trained at 32 tokens) on held-out copying
    sequences of ``length`` tokens (Part VII, positions): {"head", layer 2's head with the higher
    induction score at the training length, "weights" (L, L), its weights on the first sequence,
    "start" and "repeat" of its copy, "right"
    (repeat − 1,) True where the model predicts the copy's next token, "share": the share right on
    all :data:`~.language_runs.HELD_OUT` sequences, as :func:`~.language_runs.carried` counts}."""
    if scheme not in POSITIONS:
        raise ValueError(f"scheme must be one of {POSITIONS}, got {scheme!r}")
    length = checks.integer(length, "length", 4, language_runs.CONTEXT)
    run, history = language_runs.train(seed=0, positions=scheme)
    head = int(np.argmax(history.induction[-1][1]))  # layer 2's induction head, at 32
    data = repeats(
        language_runs.HELD_OUT, length, language_runs.VOCABULARY, language_runs.HELD_OUT_SEED
    )
    out = run.model.forward(run.params, data.tokens[:1])
    right = out.output[0, :-1].argmax(axis=-1) == data.tokens[0, 1:]
    repeat = int(data.repeat[0])
    return {
        "head": head,
        "weights": out.parts["weights"][1][0, head],
        "start": length - repeat,
        "repeat": repeat,
        "right": right[data.repeated[0, :-1]],
        "share": float(language_runs.carried(run, [length])[0]),
    }


@plots.styled
def _render_position(scheme: str, length: int):
    r = position_report(scheme, length)
    fig, (ax, strip) = plots.figure(
        height=4.2, nrows=2, gridspec_kw={"height_ratios": [6, 1]}, sharex=True
    )
    title = f"{scheme}, tested at {length}: layer 2, head {r['head']}"
    plots.heatmap(ax, r["weights"], [""] * length, [""] * length, title, colorbar=False)
    marks = np.arange(0, length, length // 4)
    ax.set_yticks(marks, [str(t) for t in marks])
    ax.set_xticks(marks)
    ax.set_xlabel("")
    for line in (ax.axhline, ax.axvline):
        line(r["start"] - 0.5, color=plots.RUNS[1], ls="--", lw=1)
    if length > language_runs.LENGTH:  # where the training's sequences ended
        ax.axvline(language_runs.LENGTH - 0.5, color=plots.MARKER, ls=":", lw=1.5)
        ax.text(language_runs.LENGTH, 0.97 * length, " training's length", color=plots.MARKER)
    # the copy's predictions: the token after position t, for t from the copy's start
    where = r["start"] + np.arange(len(r["right"]))
    strip.bar(where, 1, 1, color=[plots.AFTER if ok else plots.NEUTRAL for ok in r["right"]])
    strip.set_yticks([])
    strip.set_xticks(marks, [str(t) for t in marks])
    strip.set_xlabel("position")
    right = f"{int(r['right'].sum())} of {len(r['right'])}"
    strip.set_title(f"copy predicted right (green): {right}", fontsize=9)
    return fig


def describe_position(scheme: str, length: int) -> str:
    r = position_report(scheme, length)
    return (
        f"positions: {scheme}; trained at {language_runs.LENGTH} tokens, tested at {length}\n"
        f"the sequence shown: a copy of {r['repeat']} tokens from position {r['start']}\n"
        f"on {language_runs.HELD_OUT} held-out sequences of {length} tokens: "
        f"{share_bound(r['share'])} of the copy right"
    )


def pick_a_scheme(static: bool = False):
    """Any of the five position schemes at the training length, twice and four times it: the
    weights of layer 2's induction head on a held-out sequence, which of its copy's tokens the
    model gets right, and the share right on all held-out sequences (Part VII, positions)."""
    controls = {
        "scheme": Control("positions", list(POSITIONS), default="rotary"),
        "length": Control("test length", list(TEST_LENGTHS)),
    }
    return explorer(
        "pick-a-scheme-and-length",
        controls,
        _render_position,
        describe_position,
        static=static,
        alt="The attention weights of layer 2's induction head on a held-out sequence of "
        "the chosen length, queries as rows and keys as columns, with dashed lines where the "
        "copy starts and a dotted line where the training's sequences ended; below, a strip "
        "marking each of the copy's tokens the model predicted right.",
    )
