"""The library behind *Attention, Measured*: every model, measure, plot and widget of the book.

The layers, and which may import which, are drawn in ``lib/README.md``; each module's docstring
names the section of the book that explains it.
"""
