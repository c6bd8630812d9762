"""The library behind *Attention, Measured*.

Every model, measure, plot and widget the book's pages use lives here, once:

- :mod:`lib.rng`       the lesson's hash-seeded random stream (Part I, section 1)
- :mod:`lib.attention` softmax, dropping steps, scaled dot-product attention
- :mod:`lib.lesson`    Part I: sequences, the single-query model, its measures
- :mod:`lib.udhr`      Part II: the UDHR corpus and the self-attention head
- :mod:`lib.optim`     Adam, shared by every trained model
- :mod:`lib.flavours`  Part III: every score function behind one interface
- :mod:`lib.taxonomy`  Part III: tasks, models, training and measures for the flavours
- :mod:`lib.selfattention` Part III: the square root of d, several heads, order
- :mod:`lib.memory`    Part III: end-to-end memory networks with hops
- :mod:`lib.plots`     the book's one figure style
- :mod:`lib.widgets`   live ipywidgets and their kernel-free static twins
"""
