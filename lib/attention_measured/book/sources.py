"""What the book's three sources print, as data, and the book's own numbers beside them.

The book reproduces and tests three pieces of source material (cited on the
first page of the Part that uses each):

- the lesson "Attention Mechanism" (Part I), whose printed tables are
  :data:`LESSON_PRINTED`; :func:`lesson_side_by_side` sets them beside what
  :func:`attention_measured.experiments.marked_step_runs.summary` computes;
- the "Dictionary of Applied Machine Learning" entry "attention" and its
  Python demo (Part IV), which prints an initial loss of 4.5846 and a final
  loss of 0.0000 (:data:`DEMO_PRINTED`);
- the article "Craft your own Attention layer in 6 lines" (Part V), whose
  claims the book quotes where it tests them.

The printed values are quoted exactly as the sources print them, to four
decimals; they are data, not prose.
"""

from __future__ import annotations

from ..experiments import marked_step_runs

# The lesson's printed tables (sections "The Sequence Setup and the Baseline",
# "Query, Key and Value", "Where the Weights Fall", "A High Weight Is Not Causation").
LESSON_PRINTED: dict[str, float | int] = {
    "baseline (most frequent class)": 0.6333,
    "run 1: training accuracy": 0.9028,
    "run 1: held-out accuracy": 0.8889,
    "run 2: training accuracy": 0.9889,
    "run 2: held-out accuracy": 0.9944,
    "run 1: weight on the marker": 0.2721,
    "run 2: weight on the marker": 0.9691,
    "run 1: heaviest step is the marker": 0.3444,
    "run 2: heaviest step is the marker": 1.0000,
    "run 1: weight-effect agreement": 0.5889,
    "run 2: weight-effect agreement": 1.0000,
    "run 1: effect of the heaviest step": 0.3318,
    "run 2: effect of the heaviest step": 0.4081,
    "run 1: weight > 0.5": 81,
    "run 2: weight > 0.5": 180,
    "run 1: ... but effect < 0.05": 27,
    "run 2: ... but effect < 0.05": 43,
}


_FIELDS = {
    "training accuracy": "train_accuracy",
    "held-out accuracy": "heldout_accuracy",
    "weight on the marker": "marker_weight",
    "heaviest step is the marker": "marker_hit_rate",
    "weight-effect agreement": "agreement",
    "effect of the heaviest step": "effect_of_heaviest",
    "weight > 0.5": "heavy_count",
    "... but effect < 0.05": "heavy_inert_count",
}


# The demo's printed losses per predicted token (Part IV, sections 3 and 4).
DEMO_PRINTED = {"initial loss": 4.5846, "final loss": 0.0000}


def lesson_side_by_side() -> list[tuple[str, float | int, float | int, bool]]:
    """Rows (quantity, the lesson's printed value, the book's value, equal as printed) (Part I).

    The book's value is :func:`attention_measured.experiments.marked_step_runs.summary`, rounded as
    the lesson prints it: four decimals, counts whole.
    """
    book = marked_step_runs.summary()
    rows = []
    for name, printed in LESSON_PRINTED.items():
        if name.startswith("baseline"):
            ours = book["baseline"]
        else:
            run, quantity = name.split(": ", 1)
            ours = book["runs"][int(run[-1]) - 1][_FIELDS[quantity]]
        shown = ours if isinstance(printed, int) else round(ours, 4)
        rows.append((name, printed, shown, shown == printed))
    return rows
