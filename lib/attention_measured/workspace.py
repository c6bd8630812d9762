"""Buffers a training loop hands out again at every step (every Part's training).

A training step makes arrays of the same shapes every time.  Allocating them afresh is cheap
only while the allocator keeps the memory between steps; glibc, in a fresh process, gives a
block of more than 128 KB back to the system as soon as it is freed, and trims the top of its
heap, so every step pays page faults to get its memory again.  Part II's head ran twice as
slowly in a fresh process as after one large array had been freed, and Part III's trainings of
several heads spent half their time in page faults.  A :class:`Workspace` removes the
dependence: the first step allocates each buffer, every later step writes into the same memory
through numpy's ``out=`` arguments.  A buffer grows to the largest shape asked of it and hands
out views for smaller ones, so Part IV's batches of varying lengths allocate only until the
longest has been seen.

The buffers are scratch.  What a step leaves in them is overwritten by the next step, so a
pass that writes into a workspace returns views a caller must not keep; the book's public
functions allocate fresh arrays unless they are handed a workspace.

Every model the book trains holds one as its ``work`` attribute (None: fresh arrays at every
step, which the tests compare with to the last bit): Part I's stacked network, Part II's head,
Part III's readers, heads, aligners and memory network, and Part IV's translators; Part V's
adversary trains a Part I network or a reader, whose backward pass uses the reader's.  Layers
that call the same function each take a :func:`part` of the model's workspace, and a recurrent
decoder one part per step, since the backward pass reads every step's record.  What a step
still makes afresh is smaller than what it keeps: a LayerNorm's temporaries, a recurrent
cell's (N, H) arrays and the encoder's states, one number per row (a softmax's maxima and sums,
Part I's logits), and the parameter-sized gradients it returns.

:func:`keep_freed_memory`, called when the package is imported, also sets glibc's two
thresholds once, so that freed memory below 32 MB stays with the process: it serves the code
that has no workspace (measures, explorers, decoding, whose functions return fresh arrays).
No training relies on it: ``make bench`` times every Part's training in a fresh process with
and without it, side by side (the results agree to the last bit, since no arithmetic depends
on where an array lies).
"""

from __future__ import annotations

import ctypes
import functools
import math
import os

import numpy as np

KEEP_BELOW = 32 * 2**20  # blocks smaller than this come from the heap, never from mmap
TRIM_ABOVE = 2 * KEEP_BELOW  # free memory at the heap's top is given back only above this
SWITCH = "ATTENTION_MEASURED_KEEP_FREED_MEMORY"  # "0": leave the allocator as it is
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameters, from glibc's <malloc.h>
_GLIBC_OWN = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")


def on_glibc() -> bool:
    """Whether this process's C library is glibc (Linux's usual one; not macOS, Windows or musl)."""
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, ValueError, OSError):  # no confstr, or no such name: not glibc
        return False


@functools.cache
def keep_freed_memory() -> bool:
    """Ask glibc to keep the memory a training step frees for the next step; True if it did.

    glibc gives a block above 128 KB back to the system when it is freed, and trims the top of
    its heap, so every step of a full-batch training pays page faults to get its temporaries
    again; it raises these thresholds by itself only after large frees, and never above 32 MB.
    This sets them once for the process: blocks below :data:`KEEP_BELOW` (32 MB, glibc's own
    ceiling) come from the heap, and the heap keeps up to :data:`TRIM_ABOVE` (64 MB) free at
    its top.  The arithmetic is untouched.  It does nothing, and returns False, without glibc
    (macOS, Windows, musl), when the environment sets glibc's own variables for these
    thresholds (the reader's choice stands), or when :data:`SWITCH` is "0".
    """
    if os.environ.get(SWITCH, "").strip() == "0":
        return False
    if any(os.environ.get(name) for name in _GLIBC_OWN) or "glibc.malloc." in os.environ.get(
        "GLIBC_TUNABLES", ""
    ):
        return False
    if not on_glibc():
        return False
    mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, KEEP_BELOW)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_ABOVE)
    )


class Workspace:
    """Named scratch buffers, each allocated once and handed out again while it is large enough.

    ``work("scores", (N, V))`` returns an uninitialised float array of that shape, the same
    array at every call with that name and shape.  A new shape is a view of the same memory
    when it fits, and grows the memory when it does not, so that batches of varying lengths
    (Part IV's) allocate only until the longest has been seen.  A workspace pickles as an empty
    one, so a remembered result that holds it stores no scratch.
    """

    def __init__(self):
        self._buffers: dict[str, np.ndarray] = {}  # the array last handed out under each name
        self._memory: dict[str, np.ndarray] = {}  # the flat memory behind it
        self._parts: dict[str, Workspace] = {}

    def __call__(self, name: str, shape: tuple) -> np.ndarray:
        buffer = self._buffers.get(name)
        if buffer is not None and buffer.shape == shape:
            return buffer
        if not isinstance(name, str):
            raise TypeError(f"name must be a buffer's name (str), got {name!r}")
        if not (isinstance(shape, tuple) and all(isinstance(n, int) and n >= 0 for n in shape)):
            raise ValueError(f"shape must be a tuple of sizes (ints >= 0), got {shape!r}")
        size = math.prod(shape)
        memory = self._memory.get(name)
        if memory is None or memory.size < size:
            memory = self._memory[name] = np.empty(size)
        buffer = self._buffers[name] = memory[:size].reshape(shape)
        return buffer

    def part(self, name: str) -> Workspace:
        """A workspace of its own under ``name``, made at the first call: one per layer of a
        model, so that layers calling the same function (and so asking for the same buffer
        names) each keep their own buffers."""
        found = self._parts.get(name)
        if found is None:
            if not isinstance(name, str):
                raise TypeError(f"name must be a part's name (str), got {name!r}")
            found = self._parts[name] = Workspace()
        return found

    def __reduce__(self):
        return Workspace, ()

    def __repr__(self) -> str:
        return f"Workspace({len(self._buffers)} buffers, {self.nbytes / 1e6:.2f} MB)"

    @property
    def nbytes(self) -> int:
        """The bytes its buffers hold, its parts' included."""
        own = sum(memory.nbytes for memory in self._memory.values())
        return own + sum(part.nbytes for part in self._parts.values())


def buffer(work: Workspace | None, name: str, shape: tuple) -> np.ndarray | None:
    """``work``'s buffer ``name`` of ``shape``, or None without a workspace: what numpy's
    ``out=`` takes to allocate as usual, so one line of code serves both cases."""
    if _checked(work) is None:
        return None
    found = work._buffers.get(name)
    if found is not None and found.shape == shape:  # every step after the first
        return found
    return work(name, tuple(int(n) for n in shape))


def scratch(work: Workspace | None, name: str, shape: tuple) -> np.ndarray:
    """``work``'s buffer ``name`` of ``shape``, or a fresh uninitialised array without a
    workspace: for arrays a step fills piece by piece rather than through ``out=``."""
    found = buffer(work, name, shape)
    return np.empty(shape) if found is None else found


def take_rows(table: np.ndarray, ids: np.ndarray, work: Workspace | None, name: str) -> np.ndarray:
    """``table[ids]``, the rows of an embedding table (V, d) for integer ids (...): (..., d), into
    ``work``'s buffer ``name`` when a workspace is given.  numpy's ``take`` writes straight into
    an ``out`` only in "clip" mode (in "raise" mode it fills a temporary first), so with a
    workspace the ids must already have been checked to lie in range, as a training step's
    are; without one an id out of range raises IndexError, as ``table[ids]`` does."""
    if work is None:
        return np.take(table, ids, axis=0)
    return np.take(
        table, ids, axis=0, mode="clip", out=buffer(work, name, ids.shape + table.shape[1:])
    )


def linear(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray, work: Workspace | None, name: str
) -> np.ndarray:
    """torch's ``Linear``, x Wᵀ + b, for x (..., I), weight (O, I) and bias (O,): (..., O), into
    ``work``'s buffer ``name`` when a workspace is given (the bias added in place, so the numbers
    are those of ``x @ weight.T + bias``)."""
    out = np.matmul(x, weight.T, out=buffer(work, name, x.shape[:-1] + weight.shape[:1]))
    out += bias
    return out


def part(work: Workspace | None, name: str) -> Workspace | None:
    """``work``'s part ``name`` (:meth:`Workspace.part`), or None without a workspace."""
    return None if _checked(work) is None else work.part(name)


def _checked(work):
    """``work`` itself, refused unless it is a Workspace or None."""
    if work is not None and not isinstance(work, Workspace):
        raise TypeError(f"work must be a Workspace or None, got {type(work).__name__}")
    return work
