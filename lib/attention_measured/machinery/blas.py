"""One BLAS thread for the book's small matrix products (every Part).

The book's matrices are tiny: Part I's have an inner dimension of 2, Part IV's of 24.  Splitting
such a product over threads costs more than it saves, and when another process holds a core,
OpenBLAS's threads wait for each other: the 100-seed sweep of Part I took 1.9 s on one thread
and 8.1 s on two beside a busy core.  The training loops therefore run with one BLAS thread,
through :func:`one_thread`; the limit is lifted again when they return, so a reader's own code
keeps its own setting.
"""

from __future__ import annotations

import functools
import threading

_inside = threading.local()  # how deep this thread is in one_thread calls


@functools.lru_cache(maxsize=1)
def _controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_thread(function):
    """Decorator: run ``function`` with BLAS limited to one thread, restoring the previous limit
    after.  A call from inside another such function costs nothing more (the limit holds
    already), so a model's forward pass can carry it and still be called per training step.
    """
    if not callable(function):
        raise TypeError(f"function must be a function to run on one thread, got {function!r}")

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if getattr(_inside, "depth", 0):
            return function(*args, **kwargs)
        with _controller().limit(limits=1, user_api="blas"):
            _inside.depth = 1
            try:
                return function(*args, **kwargs)
            finally:
                _inside.depth = 0

    return wrapper
