"""Part IV: how long each translator takes to train, and what the key-value cache saves.

Each model of Part IV trains once for the book's budget (300 Adam steps of 32 sentences) and is
timed, idle and beside a busy core; trained models are remembered by the library, so the
benchmark calls `training.trained.uncached`, which trains every time.  The ratios to the
Transformer are printed, never asserted.  Then greedy decoding with and without the key-value
cache is raced on the same sentences, at growing lengths.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import best_of, both_ways  # noqa: E402

from attention_measured.core import training
from attention_measured.experiments import translation_runs
from attention_measured.tasks import translation


def main() -> None:
    train, test = translation.book_data()
    print(
        f"Part IV: one training run per model ({translation_runs.STEPS} Adam steps of 32 sentences)"
    )
    print(f"  {'':<28}{'idle':>8}{'busy core':>12}{'/ Transformer':>16}")
    times = {}
    for name in translation_runs.MODELS[:5]:  # the four recurrent models and the Transformer
        model = translation_runs.book_model(name)
        rate = translation_runs.learning_rate(name)
        times[name] = both_ways(
            lambda model=model, rate=rate: training.trained.uncached(
                model, 0, train, None, translation_runs.STEPS, rate
            ),
            1,
        )
    for name, (idle, busy) in times.items():
        ratio = idle / times["Transformer"][0]
        print(f"  {name:<28}{idle:7.1f} s{busy:10.1f} s{ratio:14.1f}x")

    print("greedy decoding of 20 sentences, one trained Transformer: without / with the cache")
    model, params, _ = translation_runs.run("Transformer", 0)
    for length in (10, 20, 30, 40):
        source = test[length].source
        plain = best_of(lambda source=source: model.greedy(params, source, cache=False), 3)
        cached = best_of(lambda source=source: model.greedy(params, source, cache=True), 3)
        print(
            f"  {length} words: {plain * 1000:6.1f} ms / {cached * 1000:6.1f} ms "
            f"= {plain / cached:4.1f}x"
        )


if __name__ == "__main__":
    main()
