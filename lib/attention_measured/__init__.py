"""The library behind *Attention, Measured*: every model, measure, plot and widget of the book.

The layers, and which may import which, are drawn in ``lib/README.md``; each module's docstring
names the section of the book that explains it.
"""

from .workspace import keep_freed_memory as _keep_freed_memory

_keep_freed_memory()  # freed memory stays for the next training step (workspace's docstring)
