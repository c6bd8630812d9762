"""`make bench`: Part I's vectorised code against the plain-Python loop oracle, side by side.

Speed is reported as ratios measured in one run on one machine, never asserted
in a test.  Each timing is the best of a few repeats, after one warm-up call.
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import best_of  # noqa: E402

import lesson_oracle  # noqa: E402  (the loop version, kept beside the tests)
from attention_measured import lesson  # noqa: E402




def main() -> None:
    train_set = lesson.split(lesson.make_sequences())[0]
    seeds = range(lesson.INIT_SEEDS[0], lesson.INIT_SEEDS[0] + 100)

    print("Part I benchmark (best of repeated runs, this machine)")
    start = time.perf_counter()
    oracle = lesson_oracle.summary()
    loop_time = time.perf_counter() - start
    fast = lesson.summary()
    same = all(abs(oracle["runs"][r][k] - fast["runs"][r][k]) < 1e-9 for r in range(2) for k in fast["runs"][r])
    summary_time = best_of(lesson.summary, 5)
    one_time = best_of(lambda: lesson.train_runs([lesson.INIT_SEEDS[0]], train_set), 5)
    sweep_time = best_of(lambda: lesson.sweep(seeds), 3)

    rows = [
        ("summary(), loop oracle (pure Python)", loop_time, ""),
        ("summary(), vectorised", summary_time, f"{loop_time / summary_time:.0f}x faster (target >= 100x)"),
        ("one network, 200 epochs", one_time, f"target < 50 ms: {'met' if one_time < 0.05 else 'NOT met'}"),
        ("sweep of 100 seeds", sweep_time, f"target < 2 s: {'met' if sweep_time < 2 else 'NOT met'}"),
    ]
    for name, seconds, note in rows:
        print(f"  {name:40} {seconds * 1000:10.1f} ms   {note}")
    print(f"  oracle and vectorised summaries agree to 1e-9: {same}")


if __name__ == "__main__":
    main()
