"""The library behind *Attention, Measured*: every model, measure, plot and widget of the book.

Its packages, and which may import which, are drawn in ``lib/README.md``; each module's
docstring names the section of the book that explains it.
"""

from .machinery.allocator import keep_freed_memory as _keep_freed_memory

_keep_freed_memory()  # freed memory stays for the next training step (allocator's docstring)
