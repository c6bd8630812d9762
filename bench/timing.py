"""Shared timing for the benchmarks: best of a few repeats after a warm-up."""
import time


def best_of(function, repeats: int) -> float:
    """The fastest of ``repeats`` timed calls of ``function``, in seconds, after one untimed call."""
    function()                                   # warm-up: imports, caches, page faults
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)
