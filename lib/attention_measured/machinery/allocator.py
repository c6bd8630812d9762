"""Freed memory kept for the next training step: the library's one speed trick of memory.

A full-batch training step makes arrays of the same shapes every time.  Allocating them afresh
is cheap only while the allocator keeps the memory between steps; glibc, in a fresh process,
gives a block of more than 128 KB back to the system as soon as it is freed, and trims the top
of its heap, so every step pays page faults to get its memory again: Part II's trainings of
several heads spent half their time in page faults (2.8 times as long).  :func:`keep_freed_memory`,
called once when the package is imported, sets glibc's two thresholds so that freed memory below
32 MB stays with the process.  With it, the models are written plainly, every step allocating
its arrays: ``make bench`` times every training in a fresh process with and without it, side by
side (the results agree to the last bit, since no arithmetic depends on where an array lies).

Where it was measured against the other way, buffers kept by each model and written into
through numpy's ``out=`` (the book's models held such workspaces until version 0.4), the plain
models were as fast (0.90 to 1.08 times the time, with memory kept), so the buffers went.
"""

from __future__ import annotations

import ctypes
import functools
import os

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
