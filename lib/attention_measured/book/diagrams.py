"""Schematic pictures of the mechanisms, drawn with code in the book's style (every Part).

Each function returns ``(figure, alt)``: a matplotlib figure one text column
wide, so it is shown at full size, and the text that describes it to a reader
who cannot see it.  Nothing here is measured; the pictures show what the code
of the other modules computes.

- :func:`attention_in_one_picture`     a query meets keys, weights pool values (the book's opening)
- :func:`single_query_model`           Part I's network: one learned query over twelve steps
- :func:`dropping_a_step`              Part I: remove one step, renormalise, see the output move
- :func:`adam_iteration`               Part IV: one iteration of training, forward, back, Adam
- :func:`feed_forward_layer`           Part V: one neuron scores each step, no query
- :func:`two_level_attention`          Part V: words pool into sentences, sentences into one
- :func:`self_attention_matrices`      Part II: Q Kᵀ, a softmax on each row, times V
- :func:`self_attention_head`          Part IV's head: every token asks, none may answer itself
- :func:`encoder_decoder`              a translator's decoder state asks the encoder's states
- :func:`additive_and_multiplicative`  two ways to score a query against a key
- :func:`several_heads`                the columns split into heads, each its own attention
- :func:`positional_encodings`         a position vector added to each step's content
- :func:`memory_hops`                  a question reads a story's memory, hop after hop
- :func:`recurrent_encoder`            Part V: a sentence read both ways, a state per word
- :func:`fixed_context`                Part V: a sentence squeezed into one vector
- :func:`bahdanau_step`                Part V: the previous state asks, the context enters the step
- :func:`teacher_forcing`              Part V: true previous words in training, its own in use
- :func:`transformer_layers`           Part III: the whole Transformer, residuals drawn, N× stacked
- :func:`attention_masks`              Part III: the causal mask and a padding mask, as matrices
- :func:`tiled_scores`                 Part III: every score at once, or one block of keys at a time
- :func:`kv_cache`                     Part III: one decoding step reads the cached keys and values
- :func:`induction_lookup`             Part VII: find the earlier copy, read the token after it
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from ..core import checks
from ..core.attention import sinusoidal_positions, softmax
from . import phone_figures, plots

QUERY = plots.RUNS[1]  # orange: what asks


KEY = plots.RUNS[0]  # blue: what is asked


VALUE = plots.AFTER  # green: what is read


WEIGHT = plots.MARKER  # purple: how much


SMALL = 9.5  # points: every figure is one column wide, shown at full size


FONT = 10.5


def _canvas(height: float, width: float = plots.COLUMN):
    """A blank drawing, one column wide, whose coordinates are inches; on a phone it is scaled
    as a whole (:func:`phone_figures.scaled_as_a_drawing`)."""
    fig = phone_figures.scaled_as_a_drawing(plt.figure(figsize=(width, height)))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")
    return fig, ax


def _tint(colour: str, amount: float):
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    return tuple(1 - amount * (1 - rgb))


def _box(ax, x, y, w, h, text="", colour=plots.NEUTRAL, fill=0.25, size=FONT, weight="normal"):
    box = ax.add_patch(
        FancyBboxPatch(
            (x, y),
            w,
            h,
            boxstyle="round,pad=0,rounding_size=0.06",
            linewidth=1.3,
            edgecolor=colour,
            facecolor=_tint(colour, fill),
        )
    )
    if text:
        label = ax.text(
            x + w / 2,
            y + h / 2,
            text,
            ha="center",
            va="center",
            fontsize=size,
            color=plots.INK,
            fontweight=weight,
        )
        phone_figures.kept_inside(label, box)  # rewrapped to the box's width on a phone


def _arrow(ax, start, end, colour=plots.INK, width=1.2, curve=0.0):
    ax.add_patch(
        FancyArrowPatch(
            start,
            end,
            arrowstyle="-|>",
            mutation_scale=11,
            linewidth=width,
            color=colour,
            connectionstyle=f"arc3,rad={curve}",
            shrinkA=1,
            shrinkB=1,
        )
    )


def _text(ax, x, y, text, size=SMALL, colour=plots.INK, **kwargs):
    ax.text(x, y, text, fontsize=size, color=colour, **kwargs)


def _square(ax, x, y, size, facecolor, **kwargs):
    """One cell of a vector or a matrix, (x, y) its lower left corner, white between cells."""
    ax.add_patch(
        Rectangle((x, y), size, size, edgecolor="white", linewidth=1, facecolor=facecolor, **kwargs)
    )


def _vector(ax, x, y, values, colour, cell=0.22):
    """A small vector: a row of cells shaded by ``values`` (each in [-1, 1])."""
    for i, v in enumerate(values):
        _square(ax, x + i * cell, y, cell, _tint(colour, 0.25 + 0.7 * abs(v)))


@plots.styled
def attention_in_one_picture():
    """A query scores five keys, the softmax turns the scores into weights, the weights pool the
    values.
    """
    fig, ax = _canvas(3.5)
    rng = np.random.RandomState(3)
    weights = np.array([0.05, 0.12, 0.62, 0.15, 0.06])
    xs = 1.15 + np.arange(5) * 0.78
    _text(ax, 0.05, 3.22, "query", colour=QUERY, fontweight="bold")
    _vector(ax, 0.05, 2.78, rng.uniform(-1, 1, 3), QUERY)
    _arrow(ax, (0.75, 2.89), (xs[0] - 0.05, 2.89), QUERY)
    output = np.zeros(3)
    values = rng.uniform(-1, 1, (5, 3))
    for i, (x, w) in enumerate(zip(xs, weights)):
        _text(ax, x + 0.33, 3.22, f"key {i + 1}", colour=KEY, ha="center")
        _vector(ax, x, 2.78, rng.uniform(-1, 1, 3), KEY)
        height = 1.05 * w / weights.max()
        ax.add_patch(Rectangle((x + 0.04, 1.35), 0.58, height, facecolor=WEIGHT))
        _text(ax, x + 0.33, 1.35 + height + 0.05, f"{w:.2f}", ha="center")
        _vector(ax, x, 0.72, values[i], VALUE)
        _text(ax, x + 0.33, 0.48, f"value {i + 1}", colour=VALUE, ha="center", va="top")
        output += w * values[i]
    _text(ax, 5.1, 2.89, "score each key:\nq · k", va="center")
    _text(ax, 5.1, 1.85, "softmax: weights\nthat sum to 1", va="center", colour=WEIGHT)
    _vector(ax, 5.35, 0.72, output / np.abs(output).max(), VALUE)
    _arrow(ax, (xs[-1] + 0.72, 0.83), (5.3, 0.83), VALUE)
    _text(ax, 5.1, 0.48, "output:\nΣ weight × value", va="top")
    alt = (
        "A query vector is compared with five key vectors; the softmax turns the five scores into "
        "weights that sum to one, drawn as bars (0.05, 0.12, 0.62, 0.15, 0.06); the output is "
        "the weighted sum of the five value vectors below, dominated by value 3."
    )
    return fig, alt


@plots.styled
def single_query_model():
    """Part I's network: twelve steps become keys and values; one learned query weighs them."""
    fig, ax = _canvas(3.4)
    xs = 0.95 + np.arange(12) * 0.41
    marker = 7
    weights = np.full(12, 0.03)
    weights[marker] = 0.67
    for t, x in enumerate(xs):
        colour = plots.MARKER if t == marker else plots.NEUTRAL
        _box(ax, x, 0.3, 0.34, 0.34, str(t), colour, fill=0.35, size=SMALL)
        ax.add_patch(Rectangle((x + 0.01, 0.88), 0.15, 0.3, facecolor=_tint(KEY, 0.6)))
        ax.add_patch(Rectangle((x + 0.18, 0.88), 0.15, 0.3, facecolor=_tint(VALUE, 0.6)))
        ax.add_patch(
            Rectangle((x + 0.03, 1.45), 0.28, 0.9 * weights[t] / weights.max(), facecolor=WEIGHT)
        )
        _arrow(ax, (x + 0.17, 0.66), (x + 0.17, 0.86), plots.NEUTRAL, width=0.8)
    _text(ax, 0.85, 0.47, "step t", ha="right", va="center")
    _text(ax, 0.85, 1.03, "key, value", ha="right", va="center")
    _text(ax, 0.85, 1.7, "weight a_t", ha="right", va="center", colour=WEIGHT)
    _text(
        ax, xs[marker] + 0.17, 0.18, "the marked step", ha="center", va="top", colour=plots.MARKER
    )
    _text(ax, 0.05, 3.1, "one learned query q, the same for every sequence", colour=QUERY)
    _vector(ax, 0.05, 2.65, [0.6, -0.3, 0.9], QUERY)
    _arrow(ax, (0.75, 2.76), (xs[marker] + 0.05, 2.4), QUERY, curve=-0.15)
    _box(ax, 5.95, 2.55, 0.6, 0.45, "p", plots.INK, fill=0.05, weight="bold")
    _arrow(ax, (xs[-1] + 0.36, 1.7), (6.25, 2.53), VALUE, curve=0.3)
    _text(ax, 5.85, 2.2, "Σ a_t v_t,\nread out", ha="right", va="center", colour=VALUE)
    alt = (
        "Twelve steps drawn as boxes numbered 0 to 11, step 7 marked; each becomes a key and a "
        "value; one learned query scores every key, and the softmax gives the marked step most "
        "of the weight; the weighted sum of the values is read out as p, the probability of "
        "label 1."
    )
    return fig, alt


def _words(words, name: str, most: int = 12) -> tuple[str, ...]:
    """The words a diagram writes in its boxes: a list of 2 to ``most`` strings."""
    if isinstance(words, str) or not isinstance(words, (list, tuple)):
        raise TypeError(f"{name} must be a list of words, got {words!r}")
    if not all(isinstance(w, str) for w in words):
        raise TypeError(f"{name} must hold words (strings), got {words!r}")
    if not 2 <= len(words) <= most:
        raise ValueError(f"{name} must hold 2 to {most} words to draw, got {len(words)}")
    return tuple(words)


@plots.styled
def self_attention_head(tokens=("all", "human", "beings", "are", "born", "free")):
    """Part IV's head: every position asks (rows), every other position answers; none answers
    itself.
    """
    tokens = _words(tokens, "tokens")
    n = len(tokens)
    fig, ax = plots.figure(height=3.6)
    rng = np.random.RandomState(1)
    grid = np.zeros((n, n))
    for i in range(n):
        grid[i, [j for j in range(n) if j != i]] = rng.dirichlet(np.full(n - 1, 0.6))
    ax.imshow(grid, cmap="Blues", vmin=0, vmax=1)
    plots.readable_cells(ax, grid, tokens, tokens, row_axis="query", col_axis="key")
    for i in range(n):
        ax.plot([i - 0.5, i + 0.5], [i - 0.5, i + 0.5], color=plots.MARKER, lw=1.5)
        ax.plot([i - 0.5, i + 0.5], [i + 0.5, i - 0.5], color=plots.MARKER, lw=1.5)
    ax.set_xticks(range(n), tokens, rotation=45, ha="right")
    ax.set_yticks(range(n), [f"{t} → ?" for t in tokens])
    ax.set_xlabel("keys and values: the other tokens")
    ax.set_ylabel("query: recall this token")
    ax.grid(False)
    ax.set_title("each row sums to 1; the diagonal is masked")
    alt = (
        "A six-by-six attention matrix for 'all human beings are born free': row i is the query "
        "of position i, which must name its own token from the other five; the diagonal is "
        "crossed out because a token may not attend to itself, and each row's weights sum to one."
    )
    return fig, alt


@plots.styled
def encoder_decoder():
    """A translator: the encoder's states h_j, and the decoder's state s_i asking which to read."""
    fig, ax = _canvas(3.3)
    for j, word in enumerate(["the", "cat", "sat"]):
        x = 0.2 + j * 1.15
        _box(ax, x, 0.2, 0.85, 0.4, word, plots.NEUTRAL)
        _box(ax, x, 0.95, 0.85, 0.45, f"h{j + 1}", KEY, fill=0.3)
        _arrow(ax, (x + 0.42, 0.62), (x + 0.42, 0.93))
        if j:
            _arrow(ax, (x - 0.28, 1.17), (x - 0.02, 1.17), KEY)
    # beside the states, below the arrows of attention, which would cross it on a phone
    _text(ax, 3.6, 1.17, "encoder: a state h_j\nfor each source word", colour=KEY, va="center")
    for i, word in enumerate(["le", "chat"]):
        x = 4.3 + i * 1.25
        _box(ax, x, 2.2, 0.95, 0.45, f"s{i + 1}", QUERY, fill=0.3)
        _box(ax, x, 2.8, 0.95, 0.4, word, plots.NEUTRAL)
        _arrow(ax, (x + 0.47, 2.67), (x + 0.47, 2.78))
        if i:
            _arrow(ax, (x - 0.28, 2.42), (x - 0.02, 2.42), QUERY)
    _text(ax, 4.3, 1.95, "decoder: its state s_i\nbefore each word", colour=QUERY, va="top")
    for j, weight in enumerate((0.15, 0.8, 0.05)):
        _arrow(
            ax, (5.95, 2.18), (0.62 + j * 1.15, 1.42), WEIGHT, width=0.6 + 3 * weight, curve=0.12
        )
    _text(
        ax,
        0.2,
        2.65,
        "attention: how much of each h_j\nthe next word needs (line width)",
        colour=WEIGHT,
        va="center",
    )
    alt = (
        "An encoder turns the source words 'the cat sat' into states h1, h2, h3; a decoder writes "
        "'le chat' one word at a time, and before each word its state s_i scores every h_j; the "
        "arrows' widths are the attention weights, heaviest on 'cat' while writing 'chat'."
    )
    return fig, alt


@plots.styled
def additive_and_multiplicative():
    """Two ways to score: a small network on (s, h), or the product s · W h."""
    fig, ax = _canvas(2.8)
    for left, title in ((0.0, "additive (Bahdanau)"), (3.45, "multiplicative (Luong)")):
        _text(ax, left + 1.6, 2.62, title, ha="center", va="center", size=FONT, fontweight="bold")
        _box(ax, left + 0.1, 0.15, 0.75, 0.42, "s_i", QUERY, fill=0.3)
        _box(ax, left + 2.4, 0.15, 0.75, 0.42, "h_j", KEY, fill=0.3)
        _box(ax, left + 1.25, 1.85, 0.7, 0.42, "e_ij", WEIGHT, fill=0.3)
    # no-break spaces: on a phone the formula is never split across lines
    formula = "tanh(W\u00a0s\u00a0+\u00a0U\u00a0h)"
    _box(ax, 0.8, 0.95, 1.6, 0.45, formula, plots.NEUTRAL, fill=0.1, size=SMALL)
    _arrow(ax, (0.5, 0.59), (1.1, 0.93))
    _arrow(ax, (2.75, 0.59), (2.15, 0.93))
    _arrow(ax, (1.6, 1.42), (1.6, 1.83))
    _text(ax, 1.7, 1.6, "v ·", va="center")
    _box(ax, 5.55, 0.95, 0.95, 0.45, "W h_j", plots.NEUTRAL, fill=0.1, size=SMALL)
    _arrow(ax, (6.22, 0.59), (6.02, 0.93))
    _arrow(ax, (3.95, 0.59), (4.78, 1.83))
    _arrow(ax, (5.8, 1.42), (5.3, 1.83))
    _text(ax, 5.05, 1.1, "dot\nproduct", ha="center", va="center")
    alt = (
        "Two diagrams side by side. Additive: the query s_i and the key h_j are each multiplied by "
        "a matrix, added, passed through tanh and dotted with a vector v to give the score e_ij. "
        "Multiplicative: the key is multiplied by a matrix W and the score is its dot product "
        "with the query."
    )
    return fig, alt


@plots.styled
def several_heads(heads: int = 2):
    """The columns of W_Q, W_K and W_V split into heads; each head attends on its own; W_O mixes."""
    heads = checks.integer(heads, "heads", 1, 4)
    fig, ax = _canvas(0.3 + 1.1 * heads)
    colours = [plots.RUNS[0], plots.RUNS[1], plots.AFTER, plots.MARKER]
    middle = (0.3 + 1.1 * heads) / 2
    _box(ax, 0.05, middle - 0.25, 0.85, 0.5, "input x", plots.NEUTRAL)
    for h in range(heads):
        y = 0.2 + (heads - 1 - h) * 1.1
        colour = colours[h % len(colours)]
        _box(
            ax,
            1.35,
            y,
            2.0,
            0.55,
            f"head {h}: its own columns\nof W_Q, W_K and W_V",  # 0-based, as in the code
            colour,
            size=SMALL,
        )
        _box(ax, 3.75, y, 1.45, 0.55, "its own weights,\nits own sum", colour, fill=0.1, size=SMALL)
        _arrow(ax, (0.92, middle), (1.33, y + 0.27))
        _arrow(ax, (3.37, y + 0.27), (3.73, y + 0.27))
        _arrow(ax, (5.22, y + 0.27), (5.58, middle))
    _box(
        ax, 5.6, middle - 0.3, 1.05, 0.6, "join, then\nmix by W_O", plots.INK, fill=0.05, size=SMALL
    )
    alt = (
        f"The input x is projected into {heads} heads, each with its own block of columns of W_Q, "
        "W_K and W_V; each head computes its own attention weights and weighted sum; the heads' "
        "outputs are joined side by side and mixed by W_O."
    )
    return fig, alt


@plots.styled
def positional_encodings(steps: int = 16, size: int = 8):
    """Without positions a set of tokens has no order; a position vector PE_t gives it one."""
    fig, axes = plots.figure(1, 2, height=2.6, gridspec_kw={"width_ratios": [1.2, 1]})
    ax = axes[0]
    table = sinusoidal_positions(steps, size).T
    image = ax.imshow(table, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", origin="lower")
    fig.colorbar(image, ax=ax, fraction=0.08, pad=0.03, ticks=[-1, 0, 1])
    # drawn from the bottom up, so the top row of cells is the last dimension
    dimensions = [str(d) for d in range(size)][::-1]
    plots.readable_cells(
        ax, table[::-1], dimensions, range(steps), "dimension", "position", between=", "
    )
    ax.set_xlabel("position t")
    ax.set_ylabel("dimension")
    ax.set_title("sinusoidal PE_t")
    ax.grid(False)
    ax = axes[1]
    ax.axis("off")
    ax.set_xlim(0, 3.0)
    ax.set_ylim(0, 2.4)
    _box(ax, 0.0, 1.5, 1.15, 0.5, "token x_t", plots.NEUTRAL, size=SMALL)
    _box(ax, 0.0, 0.4, 1.15, 0.5, "position PE_t", plots.MARKER, size=SMALL)
    _box(ax, 1.5, 0.95, 0.45, 0.5, "+", plots.INK, fill=0.05)
    _box(ax, 2.3, 0.95, 0.65, 0.5, "h_t", KEY, fill=0.3)
    _arrow(ax, (1.17, 1.75), (1.48, 1.35))
    _arrow(ax, (1.17, 0.65), (1.48, 1.05))
    _arrow(ax, (1.97, 1.2), (2.28, 1.2))
    alt = (
        "Left: the sinusoidal positional encodings as a heat map, one column per position and one "
        "row per dimension, fast waves in the lowest rows and slow ones above. Right: each step's "
        "input is its token's embedding plus the encoding of its position."
    )
    return fig, alt


@plots.styled
def memory_hops():
    """A question vector reads the memory, adds what it read, and reads again."""
    fig, ax = _canvas(3.2)
    sentences = ["mary went to the garden", "john picked up the apple", "john went to the office"]
    for i, s in enumerate(sentences):
        _box(ax, 0.05, 2.35 - i * 0.62, 2.55, 0.46, s, KEY, fill=0.2, size=SMALL)
    _text(ax, 0.05, 2.98, "memory: one slot per sentence", colour=KEY)
    xs = (3.05, 4.35, 5.65)
    for k, x in enumerate(xs):
        _box(ax, x, 0.3, 0.7, 0.45, f"u{k}", QUERY, fill=0.3)
        if k < 2:
            _arrow(ax, (x + 0.72, 0.52), (xs[k + 1] - 0.02, 0.52), QUERY)
            focus = 1 + k  # hop 1 reads the pick-up, hop 2 the move
            _arrow(ax, (x + 0.35, 0.77), (2.62, 2.58 - focus * 0.62), WEIGHT, width=2.0, curve=0.2)
    # each label beside its own arc: hop 1 right of its upper part, hop 2 above its lower part
    _text(ax, 3.12, 1.68, "hop 1", colour=WEIGHT, va="center")
    _text(ax, 4.2, 1.22, "hop 2", colour=WEIGHT, va="bottom")
    _text(ax, 3.05, 0.12, "question: where is the apple?  answer: office", va="top")
    alt = (
        "Three story sentences in memory slots; the question 'where is the apple?' becomes a "
        "vector u0; hop 1 attends to 'john picked up the apple' and adds what it read, giving "
        "u1; hop 2 attends to 'john went to the office', giving u2, from which the answer "
        "'office' is read."
    )
    return fig, alt


@plots.styled
def recurrent_encoder(words=("the", "red", "fox", "sees")):
    """A bidirectional recurrent encoder: one network reads the words left to right, another
    right to left, each carrying a state from word to word; each word's two states, joined,
    are its annotation h_j, which has seen the whole sentence.  ``words``: 2 to 5, as text."""
    words = _words(words, "words", most=5)
    fig, ax = _canvas(3.0)
    step, w = 1.15, 0.8
    for j, word in enumerate(words):
        x = 0.25 + j * step
        # the annotation h_j: the column of word j's two states, drawn behind them
        ax.add_patch(
            FancyBboxPatch(
                (x - 0.08, 0.2),
                w + 0.16,
                2.3,
                boxstyle="round,pad=0,rounding_size=0.08",
                facecolor="none",
                edgecolor=WEIGHT,
                linestyle="--",
                linewidth=1.0,
            )
        )
        _text(ax, x + w / 2, 2.58, f"h{j + 1}", colour=WEIGHT, ha="center", size=FONT)
        _box(ax, x, 1.9, w, 0.38, f"→h{j + 1}", KEY, fill=0.3, size=SMALL)
        _box(ax, x, 1.16, w, 0.36, word, plots.NEUTRAL, size=SMALL)
        _box(ax, x, 0.4, w, 0.38, f"←h{j + 1}", VALUE, fill=0.3, size=SMALL)
        _arrow(ax, (x + w / 2, 1.54), (x + w / 2, 1.88))
        _arrow(ax, (x + w / 2, 1.14), (x + w / 2, 0.8))
        if j:
            _arrow(ax, (x - step + w + 0.1, 2.09), (x - 0.1, 2.09), KEY)
            _arrow(ax, (x - 0.1, 0.59), (x - step + w + 0.1, 0.59), VALUE)
    right = 0.25 + len(words) * step
    _text(ax, right, 2.09, "reads left to right", colour=KEY, va="center")
    _text(ax, right, 0.59, "reads right to left", colour=VALUE, va="center")
    _text(ax, right, 1.34, "each h: its →h\nand ←h, joined", colour=WEIGHT, va="center")
    alt = (
        f"A bidirectional recurrent encoder over the words '{' '.join(words)}'. Above each "
        "word, a forward state: one network reads the words left to right, each state made from "
        "its word and the state before it. Below each word, a backward state, made the same way "
        "from right to left. A dashed frame around each word's two states marks its annotation "
        "h, the two joined, which has seen the words on both sides."
    )
    return fig, alt


@plots.styled
def fixed_context(words=("the", "red", "fox", "sees", "a", "dog")):
    """The encoder-decoder without attention: the whole sentence squeezed into one vector c."""
    words = _words(words, "words", most=8)
    fig, ax = _canvas(2.5)
    for j, word in enumerate(words):
        x = 0.15 + j * 0.62
        _box(ax, x, 0.15, 0.55, 0.38, word, plots.NEUTRAL, size=SMALL)
        _box(ax, x, 0.85, 0.55, 0.4, f"h{j + 1}", KEY, fill=0.3, size=SMALL)
        _arrow(ax, (x + 0.27, 0.55), (x + 0.27, 0.83))
        if j:
            _arrow(ax, (x - 0.08, 1.05), (x + 0.0, 1.05), KEY)
    last = 0.15 + (len(words) - 1) * 0.62 + 0.55
    _box(ax, last + 0.35, 0.85, 0.55, 0.4, "c", WEIGHT, fill=0.35, size=FONT, weight="bold")
    _arrow(ax, (last + 0.02, 1.05), (last + 0.33, 1.05), WEIGHT)
    # two lines: on a phone one line would run into the arrows from c
    _text(ax, 0.15, 1.4, "encoder: reads every word;\nonly its last state is kept", colour=KEY)
    for i, word in enumerate(("lo", "fuxo", "ruda")):
        x = 5.0 + i * 0.58
        _box(ax, x, 1.45, 0.5, 0.4, f"s{i + 1}", QUERY, fill=0.3, size=SMALL)
        _box(ax, x, 2.0, 0.5, 0.35, word, plots.NEUTRAL, size=SMALL)
        _arrow(ax, (x + 0.25, 1.87), (x + 0.25, 1.98))
        _arrow(ax, (last + 0.62, 1.27), (x + 0.25, 1.43), WEIGHT, width=0.9)
        if i:
            _arrow(ax, (x - 0.08, 1.65), (x + 0.0, 1.65), QUERY)
    _text(ax, 4.45, 0.45, "decoder: every step reads\nthe same vector c", colour=QUERY)
    alt = (
        "The encoder reads the words 'the red fox sees a dog' into states h1 to h6 and keeps only "
        "the last, c; every step of the decoder, writing 'lo fuxo ruda', reads that one vector c."
    )
    return fig, alt


@plots.styled
def transformer_layers():
    """The whole Transformer: embeddings and positions, a stack of encoder layers and of
    decoder layers whose sublayers each add their input back and normalise, and the output
    layer and softmax."""
    fig, ax = _canvas(6.6)
    w = 2.55

    def residual(x, y_from, y_to):
        """The input of a sublayer carried around it to its add & norm."""
        ax.plot([x + 0.2, x - 0.14, x - 0.14], [y_from, y_from, y_to], color=plots.INK, lw=1.1)
        _arrow(ax, (x - 0.14, y_to), (x - 0.01, y_to))

    def column(x, bottom, sublayers, top_text):
        _box(ax, x, 0.1, w, 0.34, bottom, plots.NEUTRAL, fill=0.1, size=SMALL)
        _arrow(ax, (x + w / 2, 0.46), (x + w / 2, 0.6))
        _box(ax, x, 0.62, w, 0.36, "embedding, then + positions", plots.NEUTRAL, size=SMALL)
        y = 1.5
        for name, colour in sublayers:
            _arrow(ax, (x + w / 2, y - 0.22), (x + w / 2, y - 0.02))
            residual(x, y - 0.12, y + 0.69)
            _box(ax, x, y, w, 0.42, name, colour, size=SMALL)
            _arrow(ax, (x + w / 2, y + 0.44), (x + w / 2, y + 0.53))
            _box(ax, x, y + 0.55, w, 0.28, "add & norm", plots.INK, fill=0.05, size=SMALL)
            y += 1.08
        frame = Rectangle(
            (x - 0.3, 1.16),
            w + 0.4,
            y - 1.26,
            fill=False,
            linestyle="--",
            edgecolor=plots.NEUTRAL,
            linewidth=1,
        )
        ax.add_patch(frame)
        _text(ax, x + w + 0.14, y - 0.22, "N×", size=FONT, weight="bold", ha="left")
        _arrow(ax, (x + w / 2, y - 0.24), (x + w / 2, y - 0.02))
        _box(ax, x, y, w, 0.3, top_text, plots.INK, fill=0.05, size=SMALL)
        return y + 0.3

    encoder = column(
        0.4,
        "source words",
        [("self-attention, all to all", KEY), ("feed-forward, per position", plots.NEUTRAL)],
        "final norm: the memory",
    )
    decoder = column(
        3.75,
        "target words so far (<s>\u00a0first)",  # the brackets kept on one line
        [
            ("causal self-attention", QUERY),
            ("cross-attention to the memory", WEIGHT),
            ("feed-forward, per position", plots.NEUTRAL),
        ],
        "final norm",
    )
    _arrow(ax, (0.4 + w + 0.02, encoder - 0.15), (3.73, 2.78), WEIGHT, curve=-0.25)
    # beside the arrow's start, clear of the decoder's dashed frame
    memory = "memory:\nkeys and values"
    _text(ax, 0.4 + w, encoder + 0.12, memory, colour=WEIGHT, ha="right", va="bottom")
    y = decoder
    for name in ("linear: one score per target word", "softmax: next-word probabilities"):
        _arrow(ax, (3.75 + w / 2, y + 0.02), (3.75 + w / 2, y + 0.14))
        _box(ax, 3.75, y + 0.16, w, 0.3, name, plots.INK, fill=0.05, size=SMALL)
        y += 0.46
    _text(ax, 0.4, encoder + 0.12, "encoder", colour=KEY, weight="bold")
    _text(ax, 3.55, decoder + 0.5, "decoder", colour=QUERY, weight="bold", ha="right")
    _text(
        ax,
        0.1,
        6.4,
        "lines on the left: each sublayer's input\nadded back (the residual)",
        va="top",
    )
    alt = (
        "The whole Transformer, bottom to top. Left, the encoder: the source words are embedded "
        "and their sinusoidal positions added; then a stack of N identical layers, each a "
        "self-attention sublayer and a position-wise feed-forward sublayer, each followed by "
        "add & norm, where a line carries the sublayer's input around it and adds it back (the "
        "residual); a final norm gives the memory. Right, the decoder: the target words so far, "
        "starting with <s>, embedded with positions; N layers of causal self-attention, "
        "cross-attention whose keys and values come from the memory (an arrow from the "
        "encoder), and the feed-forward sublayer, each with its residual and add & norm; a "
        "final norm, a linear layer giving one score per target word, and a softmax giving the "
        "next word's probabilities."
    )
    return fig, alt


@plots.styled
def tiled_scores(steps: int = 8, block: int = 2):
    """Plain attention holds every score of an n × n matrix; tiled attention one block of keys
    at a time, with a running maximum, sum and output per query."""
    steps = checks.integer(steps, "steps", 1, 16)
    block = checks.integer(block, "block", 1, steps)
    fig, ax = _canvas(2.85)
    cell = 0.26
    for panel, left in enumerate((0.25, 2.9)):
        for i in range(steps):
            for j in range(steps):
                if panel == 0:
                    colour, fill = KEY, 0.45
                else:
                    colour, fill = (QUERY, 0.6) if j // block == 1 else (plots.NEUTRAL, 0.08)
                y = 0.2 + (steps - 1 - i) * cell
                _square(ax, left + j * cell, y, cell, _tint(colour, fill))
    top = 0.2 + steps * cell + 0.08
    # each title on two lines: on a phone, on one, they would run into each other
    _text(ax, 0.25, top, "plain: all n × n\nscores at once", colour=KEY, va="bottom")
    tiled = f"tiled: one block of\n{block} keys at a time"
    _text(ax, 2.9, top, tiled, colour=QUERY, va="bottom")
    x = 2.9 + steps * cell + 0.2
    _text(
        ax, x, 1.55, "per query, kept:\nrunning max m\nrunning sum ℓ\nrunning output o", size=SMALL
    )
    _text(ax, 0.25 + steps * cell / 2, 0.02, "keys →", ha="center", size=SMALL)
    _text(ax, 2.9 + steps * cell / 2, 0.02, "keys →", ha="center", size=SMALL)
    alt = (
        f"Left, an {steps} by {steps} grid of scores, all filled: plain attention computes and "
        "stores every query-key score. Right, the same grid with only one column block "
        "highlighted: tiled attention visits the keys one block at a time and keeps, for each "
        "query, a running maximum, a running sum and a running output."
    )
    return fig, alt


@plots.styled
def dropping_a_step():
    """Part I's intervention: step t leaves the softmax, the others share its weight, the output
    moves by the removal effect."""
    fig, ax = _canvas(3.0)
    weights = np.array([0.06, 0.05, 0.5, 0.07, 0.12, 0.08, 0.06, 0.06])
    dropped = 2
    without = np.where(np.arange(8) == dropped, 0.0, weights / (1 - weights[dropped]))
    for row, (w, label, colour) in enumerate(
        ((weights, "weights a_t", WEIGHT), (without, "without step 2", plots.AFTER))
    ):
        base = 1.75 - row * 1.45
        _text(ax, 0.05, base + 0.35, label, colour=colour, va="center")
        for t, value in enumerate(w):
            x = 1.75 + t * 0.42
            if row == 1 and t == dropped:
                _text(ax, x + 0.15, base + 0.05, "×", size=FONT, colour=plots.MARKER, ha="center")
            else:
                ax.add_patch(Rectangle((x, base), 0.3, 0.95 * value / 0.5, facecolor=colour))
            if row == 1:
                _text(ax, x + 0.15, base - 0.08, str(t), ha="center", va="top")
    _arrow(
        ax, (1.75 + dropped * 0.42 + 0.15, 1.7), (1.75 + dropped * 0.42 + 0.15, 1.1), plots.MARKER
    )
    _text(ax, 5.25, 2.25, "p = 0.91", va="center", size=FONT)
    _text(ax, 5.25, 0.8, "p⁽⁻²⁾ = 0.62", va="center", size=FONT)
    _text(ax, 5.25, 1.52, "removal effect\n|p⁽⁻²⁾ − p| = 0.29", va="center", colour=plots.MARKER)
    _text(ax, 0.05, 0.05, "step t", va="bottom")
    alt = (
        "Top: eight attention weights drawn as bars, step 2 the heaviest at 0.5, and the output "
        "p = 0.91. Bottom: step 2 is removed and the other seven bars grow in proportion to "
        "share its weight; the output becomes 0.62, and the removal effect of step 2 is the "
        "distance between the two outputs, 0.29."
    )
    return fig, alt


@plots.styled
def adam_iteration():
    """One iteration of Part IV's training: every sentence forward, the loss, the gradients
    back, and Adam's step from its running means."""
    fig, ax = _canvas(2.7)
    boxes = [
        (0.05, "16 sentences\nforward", plots.NEUTRAL),
        (1.7, "loss L\n(summed)", plots.MARKER),
        (3.35, "backward:\ngradient g", KEY),
        (5.0, "Adam: move\u00a0θ\nby\u00a0m\u00a0/\u00a0√v", plots.AFTER),
    ]
    for x, text, colour in boxes:
        _box(ax, x, 1.35, 1.4, 0.75, text, colour, size=SMALL)
    for (x, _, _), (nxt, _, _) in zip(boxes, boxes[1:]):
        _arrow(ax, (x + 1.42, 1.72), (nxt - 0.02, 1.72))
    _arrow(ax, (5.7, 1.33), (0.75, 1.33), plots.NEUTRAL, curve=-0.25)
    _text(ax, 3.35, 0.38, "4000 times, with the new weights θ", ha="center", colour=plots.NEUTRAL)
    _text(ax, 5.0, 2.17, "keeps m: mean of g\nand v: mean of g²", colour=plots.AFTER, va="bottom")
    alt = (
        "One iteration drawn as four boxes in a row: the sixteen sentences go forward through "
        "the head, the summed loss is computed, the backward pass gives the gradient g of every "
        "parameter, and Adam, which keeps a running mean m of the gradients and v of their "
        "squares, moves each parameter by m over the root of v; an arrow loops back to the "
        "start, 4000 times."
    )
    return fig, alt


@plots.styled
def feed_forward_layer():
    """The six-line layer: one neuron scores each step on its own, with no query; the tanh
    keeps every score in (-1, 1); a softmax turns them into weights that pool the steps."""
    fig, ax = _canvas(3.5)
    rng = np.random.RandomState(4)
    scores = np.array([-0.55, 0.2, -0.85, 0.95, -0.3, 0.1, -0.7, 0.45])
    weights = softmax(scores)
    xs = 1.55 + np.arange(8) * 0.45
    states = rng.uniform(-1, 1, (8, 3))
    zero = 1.45
    for t, x in enumerate(xs):
        _vector(ax, x, 0.3, states[t], KEY, cell=0.13)
        _text(ax, x + 0.19, 0.22, str(t), ha="center", va="top")
        _arrow(ax, (x + 0.19, 0.46), (x + 0.19, zero - 0.42), plots.NEUTRAL, width=0.8)
        ax.add_patch(Rectangle((x + 0.05, zero), 0.28, 0.38 * scores[t], facecolor=KEY))
        ax.add_patch(
            Rectangle((x + 0.05, 2.3), 0.28, 0.75 * weights[t] / weights.max(), facecolor=WEIGHT)
        )
    for level in (-1, 1):
        ax.plot(
            [xs[0], xs[-1] + 0.4], [zero + 0.38 * level] * 2, color=plots.NEUTRAL, lw=0.8, ls="--"
        )
    ax.plot([xs[0], xs[-1] + 0.4], [zero, zero], color=plots.INK, lw=0.8)
    _text(ax, 1.45, 0.37, "step h_t", ha="right", va="center", colour=KEY)
    _text(ax, 1.45, zero, "score e_t\n= tanh(w·h_t + b)", ha="right", va="center", colour=KEY)
    _text(ax, 1.45, 2.6, "weight a_t\n= softmax(e)", ha="right", va="center", colour=WEIGHT)
    _text(ax, xs[-1] + 0.45, zero + 0.38, "+1", va="center")
    _text(ax, xs[-1] + 0.45, zero - 0.38, "−1", va="center")
    context = weights @ states
    _vector(ax, 5.5, 2.45, context / np.abs(context).max(), VALUE, cell=0.22)
    _arrow(ax, (xs[-1] + 0.38, 2.6), (5.47, 2.56), VALUE)
    _text(ax, 5.83, 2.35, "context\nc = Σ a_t h_t", va="top", ha="center", colour=VALUE)
    alt = (
        "Eight steps, each a small vector h_t; the same single neuron scores each step on its "
        "own, with no query, and the tanh keeps every score between the dashed lines at -1 and "
        "+1; a softmax turns the eight scores into weights, drawn as bars, and the weighted sum "
        "of the steps is the context vector c."
    )
    return fig, alt


@plots.styled
def two_level_attention():
    """Yang's hierarchy: a word-level attention pools each sentence's words into a sentence
    vector; a sentence-level attention pools those into the document vector."""
    fig, ax = _canvas(3.4)
    rng = np.random.RandomState(5)
    for j in range(3):
        left = 0.1 + j * 1.75
        weights = rng.dirichlet(np.full(4, 0.7))
        for t in range(4):
            x = left + t * 0.36
            _box(ax, x, 0.2, 0.3, 0.3, "", KEY, fill=0.3)
            ax.add_patch(
                Rectangle(
                    (x + 0.04, 0.62), 0.22, 0.55 * weights[t] / weights.max(), facecolor=WEIGHT
                )
            )
        _box(ax, left + 0.25, 1.55, 0.95, 0.38, f"s{j}", QUERY, fill=0.3, size=SMALL)
        _arrow(ax, (left + 0.7, 1.22), (left + 0.7, 1.53))
        height = (0.25, 0.6, 0.15)[j]
        ax.add_patch(Rectangle((left + 0.6, 2.05), 0.22, height, facecolor=WEIGHT))
        _arrow(ax, (left + 0.71, 2.07 + height), (2.55, 2.93), VALUE, width=0.6 + 2 * height)
    _text(ax, 0.1, 0.02, "words of 3 sentences, each h_jt = E[word]", colour=KEY)
    _box(ax, 2.2, 2.93, 1.25, 0.4, "v_doc → label", VALUE, fill=0.3, size=SMALL)
    _text(ax, 5.2, 0.9, "word attention:\nits own vector u_w", colour=WEIGHT, va="center")
    _text(ax, 3.6, 3.1, "sentence attention:\nits own vector u_s", colour=WEIGHT, va="center")
    alt = (
        "Three sentences of four words each. Inside each sentence a word-level attention, with "
        "its own learned context vector, weighs the words (bars) and pools them into a sentence "
        "vector s_j; a sentence-level attention, with a second context vector, weighs the three "
        "sentence vectors and pools them into the document vector v_doc, which the readout "
        "classifies."
    )
    return fig, alt


@plots.styled
def self_attention_matrices(steps: int = 4):
    """Self-attention as matrices: Q Kᵀ gives one score per pair of steps, a softmax on each row
    gives the weights, and the weights times V give one output row per step."""
    steps = checks.integer(steps, "steps", 2, 6)
    fig, ax = _canvas(2.9)
    rng = np.random.RandomState(6)
    cell = 0.26
    top = 2.35
    scores = rng.normal(size=(steps, steps))
    weights = softmax(scores)

    def grid(left, values, colour, rows, cols, label):
        for i in range(rows):
            for j in range(cols):
                colour_ij = _tint(colour, 0.15 + 0.8 * values[i, j])
                _square(ax, left + j * cell, top - (i + 1) * cell, cell, colour_ij)
        _text(ax, left + cols * cell / 2, top + 0.08, label, ha="center", colour=colour)
        return left + cols * cell

    width = 3
    right = grid(0.1, np.abs(rng.uniform(-1, 1, (steps, width))), QUERY, steps, width, "Q")
    _text(ax, right + 0.08, top - steps * cell / 2, "×", size=FONT, va="center")
    right = grid(right + 0.35, np.abs(rng.uniform(-1, 1, (width, steps))), KEY, width, steps, "Kᵀ")
    _arrow(ax, (right + 0.08, top - steps * cell / 2), (right + 0.5, top - steps * cell / 2))
    right = grid(right + 0.6, weights / weights.max(), WEIGHT, steps, steps, "softmax(QKᵀ/√d)")
    _text(ax, right + 0.08, top - steps * cell / 2, "×", size=FONT, va="center")
    right = grid(right + 0.35, np.abs(rng.uniform(-1, 1, (steps, width))), VALUE, steps, width, "V")
    _text(ax, right + 0.1, top - steps * cell / 2, "=", size=FONT, va="center")
    grid(right + 0.4, np.abs(rng.uniform(-1, 1, (steps, width))), plots.INK, steps, width, "output")
    _text(
        ax,
        0.1,
        0.62,
        f"row i of the middle matrix: how much step i reads each of the {steps} steps;",
        va="center",
    )
    _text(
        ax,
        0.1,
        0.3,
        "each row sums to 1, and row i of the output is its weighted sum of V.",
        va="center",
    )
    alt = (
        f"Five matrices in a row for a sequence of {steps} steps: Q ({steps} rows) times K "
        f"transposed gives a {steps} by {steps} matrix of scores, one per pair of steps; a "
        "softmax on each row, after dividing by the square root of d, turns it into weights "
        "whose rows sum to one; the weights times V give the output, one row per step."
    )
    return fig, alt


@plots.styled
def bahdanau_step(source=("the", "red", "fox"), target=("lo", "fuxo")):
    """Bahdanau's decoder: the previous state s_{i−1} scores every annotation h_j, and their
    weighted sum c_i enters the step that writes word i.  ``source`` and ``target``: a few
    words each, as text."""
    source, target = _words(source, "source", 5), _words(target, "target", 3)
    fig, ax = _canvas(3.5)
    for j, word in enumerate(source):
        x = 0.2 + j * 1.1
        _box(ax, x, 0.2, 0.85, 0.4, word, plots.NEUTRAL)
        _box(ax, x, 0.95, 0.85, 0.45, f"h{j + 1}", KEY, fill=0.3)
        _arrow(ax, (x + 0.42, 0.62), (x + 0.42, 0.93))
    # above the arrows of attention, which would cross it beside the boxes
    _text(ax, 0.2, 2.2, "annotations h_j (below),\nread both ways", colour=KEY, va="center")
    for i, (x, word) in enumerate(zip((3.95, 5.55), target)):
        _box(ax, x, 2.05, 0.95, 0.45, f"s{i + 1}", QUERY, fill=0.3)
        _box(ax, x, 2.85, 0.95, 0.4, word, plots.NEUTRAL)
        _arrow(ax, (x + 0.47, 2.52), (x + 0.47, 2.83))
    _arrow(ax, (4.92, 2.27), (5.53, 2.27), QUERY)
    _box(ax, 5.6, 1.05, 0.85, 0.45, "c2", WEIGHT, fill=0.3)
    _arrow(ax, (6.02, 1.52), (6.02, 2.03), WEIGHT)
    for j, weight in enumerate((0.1, 0.15, 0.75)):
        _arrow(ax, (4.2, 2.03), (0.62 + j * 1.1, 1.42), WEIGHT, width=0.6 + 3 * weight, curve=0.1)
    for j in range(len(source)):
        _arrow(ax, (0.2 + j * 1.1 + 0.85, 1.05), (5.58, 1.22), KEY, width=0.7, curve=0.12)
    _text(ax, 3.75, 0.55, "s1 asks; the weighted\nsum of the h_j is c2", colour=WEIGHT, va="center")
    _text(
        ax,
        0.2,
        2.95,
        f"to write its second word ('{target[1]}'),\nthe state before it, s1, scores every h_j",
        colour=QUERY,
        va="center",
    )
    alt = (
        f"Bahdanau's decoder. The source words '{' '.join(source)}' have annotations h1 to h3. "
        f"To write its second word, '{target[1]}', the decoder's previous state s1 (the state "
        f"after writing '{target[0]}') scores every annotation; the arrows' widths are the "
        f"weights, heaviest on '{source[-1]}'. Their weighted sum, the context c2, enters the "
        "step that makes the new state s2 and writes the word."
    )
    return fig, alt


@plots.styled
def teacher_forcing(truth=("lo", "fuxo", "ruda"), own=("lo", "kani", "ruda")):
    """Teacher forcing, where every step reads the true previous word, beside free-running
    decoding, where every step reads the decoder's own last word, mistakes included.  ``truth``
    and ``own``: the same number of words, as text."""
    truth, own = _words(truth, "truth", 4), _words(own, "own", 4)
    if len(own) != len(truth):
        raise ValueError(f"own must have as many words as truth, {len(truth)}; got {len(own)}")
    fig, ax = _canvas(3.9)
    rows = (
        (2.15, "training: teacher forcing", ("<s>",) + truth[:-1], truth, False),
        (0.25, "translating: free-running", ("<s>",) + own[:-1], own, True),
    )
    for y, title, inputs, outputs, fed_back in rows:
        _text(ax, 0.1, y + 1.5, title, weight="bold")
        for i, (word_in, word_out) in enumerate(zip(inputs, outputs)):
            x = 0.4 + i * 2.05
            wrong = fed_back and word_out != truth[i]
            _box(ax, x, y + 0.55, 1.1, 0.42, "decoder", QUERY, fill=0.2, size=SMALL)
            _box(
                ax,
                x,
                y + 1.1,
                1.1,
                0.32,
                word_out + (" (wrong)" if wrong else ""),
                WEIGHT if wrong else plots.NEUTRAL,
                fill=0.35 if wrong else 0.12,
                size=SMALL,
            )
            _box(
                ax,
                x,
                y,
                1.1,
                0.32,
                word_in,
                KEY if not fed_back or not i else WEIGHT,
                fill=0.12,
                size=SMALL,
            )
            _arrow(ax, (x + 0.55, y + 0.34), (x + 0.55, y + 0.53))
            _arrow(ax, (x + 0.55, y + 0.99), (x + 0.55, y + 1.08))
            if i:
                _arrow(ax, (x - 0.93, y + 0.76), (x - 0.02, y + 0.76), QUERY)
            if fed_back and i + 1 < len(outputs):
                _arrow(ax, (x + 1.12, y + 1.26), (x + 2.05, y + 0.2), WEIGHT, curve=-0.25)
        note = "inputs: its own last words, mistakes too" if fed_back else "inputs: the true words"
        _text(ax, 6.6, y + 1.5, note, ha="right", colour=WEIGHT if fed_back else KEY)
    alt = (
        "Two rows of the same decoder unrolled over three steps. Top, training with teacher "
        f"forcing: the inputs are the true previous words <s>, {', '.join(truth[:-1])}, whatever "
        "the decoder predicted. Bottom, translating: each output is fed back as the next "
        f"input, so when the decoder writes '{own[1]}' (wrong) at step 2, step 3 reads "
        f"'{own[1]}', a situation training never showed it."
    )
    return fig, alt


@plots.styled
def attention_masks(steps: int = 5, length: int = 3):
    """The decoder's causal mask as a matrix (query i may read key j ≤ i), and a key padding
    mask for a sentence of ``length`` words padded to ``steps``."""
    steps = checks.integer(steps, "steps", 2, 8)
    length = checks.integer(length, "length", 1, steps - 1)
    fig, ax = _canvas(3.05)
    cell = 0.34
    top = 2.55
    panels = (
        (0.75, "causal: query i reads keys j ≤ i", lambda i, j: j <= i, QUERY),
        (4.15, f"padding: {length} words, then <pad>", lambda i, j: j < length, KEY),
    )
    for left, title, allowed, colour in panels:
        _text(ax, left - 0.6, top + 0.2, title, colour=colour)
        for i in range(steps):
            _text(ax, left - 0.08, top - (i + 0.5) * cell, f"q{i}", ha="right", va="center")
            for j in range(steps):
                ok = allowed(i, j)
                fill = _tint(colour, 0.55) if ok else _tint(plots.NEUTRAL, 0.15)
                x, y = left + j * cell, top - (i + 1) * cell
                _square(ax, x, y, cell, fill, hatch=None if ok else "///")
        below = top - steps * cell - 0.08
        for j in range(steps):
            _text(ax, left + (j + 0.5) * cell, below, f"k{j}", ha="center", va="top")
        padded = [j for j in range(steps) if not allowed(steps - 1, j)]
        if padded:  # one mark under the padded keys: a word per key would not fit on a phone
            start, end = left + padded[0] * cell + 0.03, left + (padded[-1] + 1) * cell - 0.03
            ax.plot([start, end], [below - 0.22] * 2, color=colour, linewidth=1.2)
            _text(ax, (start + end) / 2, below - 0.3, "<pad>", ha="center", va="top", colour=colour)
    _text(ax, 0.15, 0.05, "shaded: may attend;  hatched: blocked (weight exactly 0)")
    alt = (
        f"Two {steps} by {steps} grids of queries (rows) against keys (columns). Left, the "
        "decoder's causal mask: the cells on and below the diagonal are shaded, so query i may "
        "read keys 0 to i, and the cells above are hatched, blocked. Right, a key padding mask "
        f"for a sentence of {length} words padded to {steps}: the last {steps - length} "
        "columns, the padding, are hatched for every query, so no query reads a padded "
        "position."
    )
    return fig, alt


_ORDINALS = {
    2: "second",
    3: "third",
    4: "fourth",
    5: "fifth",
    6: "sixth",
    7: "seventh",
    8: "eighth",
}


@plots.styled
def kv_cache(steps: int = 4):
    """One decoding step with the key-value cache: the newest word's query reads every key
    and value, the earlier ones kept from earlier steps and one appended now."""
    steps = checks.integer(steps, "steps", 2, 8)
    fig, ax = _canvas(3.15)
    cell = 0.3
    _text(ax, 0.1, 2.85, f"the {_ORDINALS[steps]} word: only the newest is computed", weight="bold")
    _box(ax, 0.1, 1.35, 1.25, 0.45, "newest word", plots.NEUTRAL, size=SMALL)
    _arrow(ax, (1.37, 1.57), (1.75, 1.57))
    _vector(ax, 1.8, 1.45, [0.7, -0.4, 0.9], QUERY, cell=cell)
    _text(ax, 1.8 + 1.5 * cell, 1.85, "its q", ha="center", colour=QUERY)
    for name, colour, y in (("K", KEY, 1.9), ("V", VALUE, 0.85)):
        left = 3.2
        right = left + steps * (cell + 0.06)
        _text(ax, right + 0.1, y + 0.35, f"cached {name}", va="center", colour=colour)
        for j in range(steps):
            new = j == steps - 1
            ax.add_patch(
                Rectangle(
                    (left + j * (cell + 0.06), y),
                    cell,
                    0.7,
                    edgecolor=plots.INK if new else "white",
                    linewidth=1.6 if new else 1,
                    facecolor=_tint(colour, 0.75 if new else 0.35),
                )
            )
    right = 3.2 + steps * (cell + 0.06)
    _arrow(ax, (2.8, 1.62), (3.18, 2.2), QUERY, curve=-0.1)
    _text(ax, 2.05, 2.35, "q meets every key", colour=QUERY, ha="center")
    _arrow(ax, (3.2 + steps * (cell + 0.06) / 2, 1.88), (3.2 + steps * (cell + 0.06) / 2, 1.57))
    _text(ax, right + 0.1, 1.72, "the weights\nread the values", va="center", size=SMALL)
    _text(ax, 0.1, 0.45, f"each row: {steps - 1} kept from the earlier words, 1 new (outlined)")
    memory = "the memory's keys and values are projected once, before the first step"
    _text(ax, 0.1, 0.15, memory, colour=WEIGHT)
    alt = (
        f"Decoding the {_ORDINALS[steps]} word with a key-value cache. Only the newest word is "
        f"pushed through the decoder: its query meets a row of {steps} cached keys and {steps} "
        f"cached values, of which {steps - 1} were kept from the earlier words and one, "
        "outlined, was appended at this step. The cross-attention's keys and values of the "
        "memory are projected once, before the first step."
    )
    return fig, alt


_LOOKUP = (29, 14, 21, 2, 8, 19, 20, 21, 2, 8, 19, 20)  # repeats(1, 12, 32, 19)


def induction_lookup(tokens=_LOOKUP, repeat: int = 5, at: int = 9):
    """Part VII's copying task: ``tokens`` whose last ``repeat`` copy the ``repeat`` before
    them; at position ``at`` inside the copy, the next token is found by looking up the earlier
    copy of the current token and reading the token after it (an induction head's move)."""
    tokens = [checks.integer(t, "tokens", 0) for t in tokens]
    n = len(tokens)
    repeat = checks.integer(repeat, "repeat", 1, n // 2)
    at = checks.integer(at, "at", n - repeat, n - 2)
    fig, ax = _canvas(2.75)
    cell, gap, left, y = 0.46, 0.06, 0.2, 1.0
    earlier, source = at - repeat, at - repeat + 1

    def x_of(i):
        return left + i * (cell + gap)

    for i, token in enumerate(tokens):
        colour = plots.NEUTRAL
        if i >= n - 2 * repeat:
            colour = KEY if i < n - repeat else QUERY
        ax.add_patch(
            FancyBboxPatch(
                (x_of(i), y),
                cell,
                cell,
                boxstyle="round,pad=0,rounding_size=0.04",
                linewidth=2.2 if i in (at, earlier, source) else 0.8,
                edgecolor=VALUE if i == source else colour,
                facecolor=_tint(colour, 0.18),
            )
        )
        _text(ax, x_of(i) + cell / 2, y + cell / 2, str(token), ha="center", va="center", size=12)
        _text(
            ax,
            x_of(i) + cell / 2,
            y - 0.2,
            str(i),
            ha="center",
            va="center",
            size=10,
            colour=plots.NEUTRAL,
        )
    _text(ax, left, y - 0.48, "position", size=10, colour=plots.NEUTRAL)
    middle = (x_of(n - 2 * repeat) + x_of(n - repeat - 1) + cell) / 2
    _text(ax, middle, y - 0.55, "a stretch…", ha="center", colour=KEY, size=11)
    _text(
        ax,
        (x_of(n - repeat) + x_of(n - 1) + cell) / 2,
        y - 0.55,
        "…and its copy",
        ha="center",
        colour=QUERY,
        size=11,
    )
    top = y + cell + 0.05
    _arrow(ax, (x_of(at) + cell / 2, top), (x_of(earlier) + cell / 2, top), QUERY, curve=0.45)
    _text(
        ax,
        (x_of(at) + x_of(earlier)) / 2 + cell / 2,
        top + 0.62,
        f"1. find the earlier {tokens[at]}",
        ha="center",
        colour=QUERY,
        size=11,
    )
    _arrow(
        ax,
        (x_of(earlier) + cell * 0.7, y + cell + 0.04),
        (x_of(source) + cell * 0.3, y + cell + 0.04),
        VALUE,
        curve=-0.9,
    )
    _text(
        ax,
        x_of(earlier) - 0.05,
        y + cell + 0.3,
        f"2. read the token after it:\n{tokens[source]} comes next",
        colour=VALUE,
        ha="right",
        size=11,
    )
    _text(ax, left, 2.45, f"Which token comes after position {at}?", weight="bold", size=11)
    alt = (
        f"A row of {n} random tokens, numbered from 0, whose last {repeat} tokens copy the "
        f"{repeat} before them. At position {at}, inside the copy, the token is {tokens[at]}; an "
        f"arrow goes back to its earlier occurrence at position {earlier}, and a second arrow "
        f"to the token after that, {tokens[source]} at position {source}: the token that comes "
        f"next at position {at + 1}."
    )
    return fig, alt


ALL = (
    attention_in_one_picture,
    single_query_model,
    dropping_a_step,
    adam_iteration,
    feed_forward_layer,
    two_level_attention,
    self_attention_matrices,
    self_attention_head,
    encoder_decoder,
    additive_and_multiplicative,
    several_heads,
    positional_encodings,
    memory_hops,
    recurrent_encoder,
    fixed_context,
    transformer_layers,
    attention_masks,
    tiled_scores,
    kv_cache,
    induction_lookup,
    bahdanau_step,
    teacher_forcing,
)
