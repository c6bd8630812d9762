"""The library behind *Attention, Measured*.

Every model, measure, plot and widget the book's pages use lives here, once:

- :mod:`attention_measured.rng`       the lesson's hash-seeded random stream (Part I, section 1)
- :mod:`attention_measured.attention` softmax, dropping steps, scaled dot-product attention
- :mod:`attention_measured.lesson`    Part I: sequences, the single-query model, its measures
- :mod:`attention_measured.udhr`      Part II: the UDHR corpus and the self-attention head
- :mod:`attention_measured.optim`     Adam, shared by every trained model
- :mod:`attention_measured.flavours`  Part III: every score function behind one interface
- :mod:`attention_measured.taxonomy`  Part III: tasks, models, training and measures for the flavours
- :mod:`attention_measured.selfattention` Part III: the square root of d, several heads, order
- :mod:`attention_measured.memory`    Part III: end-to-end memory networks with hops
- :mod:`attention_measured.plots`     the book's one figure style
- :mod:`attention_measured.widgets`   live ipywidgets and their kernel-free static twins
"""
