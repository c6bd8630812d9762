"""Part II's vectorised training against the one-sentence-at-a-time loop oracle, side by side.

Both train the "token" head from seed 0 for the same number of iterations; the ratio of their
times is printed with its target, never asserted in a test.  Each timing is the best of five
repeats, after one warm-up call: in a fresh process, after a large free, and beside a busy core.
Then one full 4000-iteration run of the vectorised code is timed idle and beside a busy core.
`cloze_runs.train` remembers its results; the benchmark calls `cloze_runs.train.uncached`, which
trains every time.

The allocator used to matter.  A step makes arrays of about 160 KB (206 tokens x 98 scores); in
a fresh process glibc hands memory of that size back to the kernel as soon as it is freed and
pays page faults to get it again, until a larger array (a few MB) has been freed and glibc
raises its thresholds.  Importing the package sets glibc's thresholds itself
(`allocator.keep_freed_memory`, timed on its own by `bench_allocator.py`), so the fresh process
and the process after a 4 MB free should time alike.
"""

import contextlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import cloze_head_oracle  # noqa: E402  (the loop version, kept beside the tests)
import numpy as np  # noqa: E402
from timing import best_of, busy_core  # noqa: E402

from attention_measured.experiments import cloze_runs
from attention_measured.tasks import cloze

ITERATIONS = 200
AGREEMENT = 80  # beyond ~100 iterations rounding differences grow chaotically


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


REPEATS = 5
TARGET = 2.5  # times the loop oracle's speed, in a fresh process and after a large free
TARGET_BUSY = 2.0  # beside a busy core
TARGET_SLOWDOWN = 1.5  # the full run beside a busy core, at most this many times its idle time


def race() -> tuple[float, float]:
    loop = best_of(
        lambda: cloze_head_oracle.train(cloze.SENTENCES, seed=0, epochs=ITERATIONS), REPEATS
    )
    fast = best_of(lambda: cloze_runs.train.uncached(seed=0, epochs=ITERATIONS), REPEATS)
    return loop, fast


def main() -> None:
    print(
        f"Part II benchmark (best of {REPEATS} runs, this machine, {ITERATIONS} training "
        "iterations each)"
    )
    oracle_curve = np.array(cloze_head_oracle.train(cloze.SENTENCES, seed=0, epochs=AGREEMENT)[0])
    gap = float(
        np.max(np.abs(oracle_curve - cloze_runs.train.uncached(seed=0, epochs=AGREEMENT).curve))
    )
    rows = []
    for state in ("fresh process", "after a 4 MB free"):
        if state != "fresh process":
            np.ones(1 << 19)  # allocated and freed at once: glibc keeps memory from now on
        loop, fast = race()
        rows.append((f"loop oracle ({state})", loop, ""))
        rows.append(
            (
                f"vectorised ({state})",
                fast,
                f"{loop / fast:.1f}x faster (target >= {TARGET}x: "
                f"{_verdict(loop / fast >= TARGET)})",
            )
        )
    with busy_core():
        loop, fast = race()
    rows.append(("loop oracle (beside a busy core)", loop, ""))
    rows.append(
        (
            "vectorised (beside a busy core)",
            fast,
            f"{loop / fast:.1f}x faster (target >= {TARGET_BUSY}x: "
            f"{_verdict(loop / fast >= TARGET_BUSY)})",
        )
    )
    full = {}
    for state in ("idle", "beside a busy core"):
        with busy_core() if state != "idle" else contextlib.nullcontext():
            start = time.perf_counter()
            cloze_runs.train.uncached(seed=0, epochs=cloze_runs.EPOCHS)
            full[state] = time.perf_counter() - start
    slowdown = full["beside a busy core"] / full["idle"]
    rows.append((f"vectorised, all {cloze_runs.EPOCHS} iterations (idle)", full["idle"], ""))
    rows.append(
        (
            f"vectorised, all {cloze_runs.EPOCHS} iterations (beside a busy core)",
            full["beside a busy core"],
            f"{slowdown:.2f}x its idle time (target <= {TARGET_SLOWDOWN}x: "
            f"{_verdict(slowdown <= TARGET_SLOWDOWN)})",
        )
    )
    for name, seconds, note in rows:
        print(f"  {name:52} {seconds * 1000:9.1f} ms   {note}")
    print(
        f"  largest loss gap over the first {AGREEMENT} iterations, oracle vs vectorised: {gap:.1e}"
    )


if __name__ == "__main__":
    main()
