"""Buffers a training loop hands out again at every step (Part II, section 3; Part IV).

A training step makes arrays of the same shapes every time.  Allocating them afresh is cheap
only while the allocator keeps the memory between steps; glibc, in a fresh process, gives a
block of more than 128 KB back to the system as soon as it is freed and pays page faults to
get it again at the next step.  Part II's head ran twice as slowly in a fresh process as after
one large array had been freed, which makes glibc raise that threshold.  A :class:`Workspace`
removes the dependence: the first step allocates each buffer, every later step writes into
the same memory through numpy's ``out=`` arguments.

The buffers are scratch.  What a step leaves in them is overwritten by the next step, so a
pass that writes into a workspace returns views a caller must not keep; the book's public
functions allocate fresh arrays unless they are handed a workspace.
"""

from __future__ import annotations

import numpy as np


class Workspace:
    """Named scratch buffers, each allocated once and handed out again while its shape holds.

    ``work("scores", (N, V))`` returns an uninitialised float array of that shape, the same
    array at every call with that name and shape; a new shape replaces it.  A workspace pickles
    as an empty one, so a remembered result that holds it stores no scratch.
    """

    def __init__(self):
        self._buffers: dict[str, np.ndarray] = {}

    def __call__(self, name: str, shape: tuple) -> np.ndarray:
        buffer = self._buffers.get(name)
        if buffer is not None and buffer.shape == shape:
            return buffer
        if not isinstance(name, str):
            raise TypeError(f"name must be a buffer's name (str), got {name!r}")
        if not (isinstance(shape, tuple) and all(isinstance(n, int) and n >= 0 for n in shape)):
            raise ValueError(f"shape must be a tuple of sizes (ints >= 0), got {shape!r}")
        buffer = self._buffers[name] = np.empty(shape)
        return buffer

    def __reduce__(self):
        return Workspace, ()

    def __repr__(self) -> str:
        return f"Workspace({len(self._buffers)} buffers, {self.nbytes / 1e6:.2f} MB)"

    @property
    def nbytes(self) -> int:
        """The bytes its buffers hold."""
        return sum(buffer.nbytes for buffer in self._buffers.values())


def buffer(work: Workspace | None, name: str, shape: tuple) -> np.ndarray | None:
    """``work``'s buffer ``name`` of ``shape``, or None without a workspace: what numpy's
    ``out=`` takes to allocate as usual, so one line of code serves both cases."""
    if work is None:
        return None
    if not isinstance(work, Workspace):
        raise TypeError(f"work must be a Workspace or None, got {type(work).__name__}")
    found = work._buffers.get(name)
    if found is not None and found.shape == shape:  # every step after the first
        return found
    return work(name, tuple(int(n) for n in shape))
