"""The library behind *Attention, Measured*.

Every model, measure, plot and widget the book's pages use lives here, once:

- :mod:`lib.rng`       the lesson's hash-seeded random stream (Part I, section 1)
- :mod:`lib.attention` softmax, dropping steps, scaled dot-product attention
- :mod:`lib.lesson`    Part I: sequences, the single-query model, its measures
- :mod:`lib.plots`     the book's one figure style
- :mod:`lib.widgets`   live ipywidgets and their kernel-free static twins
"""
