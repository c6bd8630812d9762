"""Part VI: what each family's scorecard costs, and the share the adversarial search takes.

The closing sweep (every model on every seed, `explanation_runs.write`) takes minutes, so the book
ships its result; this benchmark times one card per family side by side (the models are trained
once, and remembered, before the clock starts), and the same cards without the adversarial
search, the costliest measure.  Ratios to Part I's card are printed, never asserted; the last
line estimates the whole sweep from the cards' times and each family's count of model-seeds.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import best_of  # noqa: E402

from attention_measured.experiments import explanation_runs, registry
from attention_measured.measures import explanations

CARDS = {  # one model of each family, at its first seed
    "marked step": "Part I network",
    "cloze head": "UDHR head",
    "flavours": "additive",
    "heads and memory": "memory network",
    "translators": "Bahdanau",
}


def main() -> None:
    print("Part VI: one scorecard per family (seconds), with and without the adversarial search")
    print(f"  {'':<32}{'card':>8}{'no adversary':>14}{'/ Part I':>10}")
    times = {}
    for family, model in CARDS.items():
        seed = registry.MODELS[model].seeds[0]
        built = registry.subjects(model, seed)  # trains once, outside the clock
        whole = best_of(lambda model=model, seed=seed: explanation_runs.card(model, seed), 1)
        rows, explanations.ADVERSARIAL_ROWS = explanations.ADVERSARIAL_ROWS, 0
        try:
            quick = best_of(lambda built=built: explanations.scorecard(built), 1)
        finally:
            explanations.ADVERSARIAL_ROWS = rows
        times[family] = (whole, quick)
    for family, (whole, quick) in times.items():
        ratio = whole / times["marked step"][0]
        print(f"  {CARDS[family]:<32}{whole:7.1f} s{quick:12.1f} s{ratio:9.1f}x")
    # a translator explained at every word repeats each sentence once per word: the Subject runs
    # each distinct input once (Subject._distinct); the same ranking with every copy run
    translator = registry.subjects("Bahdanau", 0)

    def saliency():
        for subject in translator:
            subject._cache.pop("gradient × input", None)
            subject.importance("gradient × input")

    once = best_of(saliency, 1)
    distinct = explanations.Subject._distinct
    explanations.Subject._distinct = lambda self, inputs, change: (None, None)
    try:
        every = best_of(saliency, 1)
    finally:
        explanations.Subject._distinct = distinct
    print(f"  Bahdanau's gradient × input, each sentence once: {once:.1f} s, every copy run:")
    print(f"  {every:.1f} s ({every / once:.1f} times as long)")
    counts = {}
    for entry in registry.MODELS.values():
        counts[entry.family] = counts.get(entry.family, 0) + len(entry.seeds)
    total = sum(times[family][0] * n for family, n in counts.items())
    cards = sum(counts.values())
    print(f"  the whole sweep, {cards} cards: about {total / 60:.0f} min on one core")


if __name__ == "__main__":
    main()
