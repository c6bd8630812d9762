"""Shared timing for the benchmarks: the best of a few repeats, idle or beside a busy core."""

import contextlib
import subprocess
import sys
import time


def best_of(function, repeats: int) -> float:
    """The fastest of ``repeats`` timed calls of ``function`` (seconds), after one untimed call."""
    function()  # warm-up: imports, caches, page faults
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


@contextlib.contextmanager
def busy_core():
    """Another process spinning on one core while the block runs (a reader's busy laptop)."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)  # let it start spinning
        yield
    finally:
        spinner.kill()
        spinner.wait()


def both_ways(function, repeats: int) -> tuple[float, float]:
    """(best time on an idle machine, best time while another process holds a core), in seconds."""
    idle = best_of(function, repeats)
    with busy_core():
        busy = best_of(function, repeats)
    return idle, busy
