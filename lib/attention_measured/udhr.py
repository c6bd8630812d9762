"""Part II, sections 1 to 3: a single self-attention head, trained by hand as an associative
memory.

Section 1, "The corpus and its tokens": :data:`ARTICLES`, :data:`CORPUS`, :func:`tokenize`,
:data:`SENTENCES`, :data:`VOCAB`, :data:`DISPLAY`, :func:`encode` and :func:`decode`.
Section 2, "One head, by hand": :func:`init_params`, :func:`make_batch`,
:func:`forward` and :func:`backward`, every backward line paired with the
forward line it undoes. Section 3, "Training and the heat map": :func:`train` (Adam,
remembered),
:func:`attention_weights`, :func:`loss_csv_rows` and :func:`write_csvs`.
Section 4, what the trained head recalls, is :mod:`attention_measured.recall`.

The task is cloze-style recall.  Position i of a sentence is hidden from its own row of the
attention matrix (a token may not attend to itself), and the head must name the token at i from
a weighted mix of the other tokens' values. Three kinds of query are offered (:data:`QUERIES`):

- ``"token"``: the demo's head, Q_i = E[x_i] W_Q, so the query is built from
  the very token it has to predict;
- ``"mask"``: Q_i = m W_Q for one learned vector m shared by every position,
  so the query cannot see the token it must predict;
- ``"position"``: Q_i = P_i W_Q, with P a learned table of MAX_LEN positions.

Shapes: V = 98 tokens in the vocabulary, d = 24 for embeddings, queries, keys and values, B
sentences in a batch, L the longest of them (shorter ones are padded and masked out), n the
length of a single sentence.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from . import checks
from .attention import scaled_dot_product_attention, softmax_backward
from .cache import remembered
from .losses import softmax_and_summed_cross_entropy
from .params import Params, initialiser
from .training import Trained, fit

# --------------------------------------------------------------- section 1
# Sixteen sentences and clauses from thirteen articles of the UDHR (adopted by
# the UN in 1948 as resolution 217 A; public domain), each with its article number.
ARTICLES: list[tuple[int, str]] = [
    (1, "All human beings are born free and equal in dignity and rights."),
    (
        1,
        "They are endowed with reason and conscience and should act towards one another in a "
        "spirit of brotherhood.",
    ),
    (3, "Everyone has the right to life, liberty and security of person."),
    (4, "No one shall be held in slavery or servitude."),
    (4, "Slavery and the slave trade shall be prohibited in all their forms."),
    (
        5,
        "No one shall be subjected to torture or to cruel, inhuman or degrading treatment or "
        "punishment.",
    ),
    (6, "Everyone has the right to recognition everywhere as a person before the law."),
    (
        7,
        "All are equal before the law and are entitled without any discrimination to equal "
        "protection of the law.",
    ),
    (9, "No one shall be subjected to arbitrary arrest, detention or exile."),
    (
        13,
        "Everyone has the right to freedom of movement and residence within the borders of each "
        "state.",
    ),
    (17, "Everyone has the right to own property alone as well as in association with others."),
    (17, "No one shall be arbitrarily deprived of his property."),
    (18, "Everyone has the right to freedom of thought, conscience and religion."),
    (19, "Everyone has the right to freedom of opinion and expression."),
    (
        24,
        "Everyone has the right to rest and leisure, including reasonable limitation of working "
        "hours and periodic holidays with pay.",
    ),
    (26, "Everyone has the right to education."),
]
CORPUS = "\n".join(sentence for _, sentence in ARTICLES)  # one sentence to a line

WIDTH = 24  # d: embedding, query, key and value size
INIT_SCALE = 0.1  # every initial weight is 0.1 * a standard normal draw
LEARNING_RATE = 0.02
EPOCHS = 4000
CSV_EVERY = 20  # the loss CSV keeps iteration 1 and every 20th
QUERIES = ("token", "mask", "position")


def tokenize(sentence: str) -> list[str]:
    """The runs of letters in ``sentence``, lowercased (section 1); punctuation and case vanish."""
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a string, got {type(sentence).__name__}")
    return re.findall(r"[a-z]+", sentence.lower())


# Lines of fewer than two tokens would leave a lone token with no other token to
# attend to; the demo drops them (the corpus has none).
SENTENCES: list[list[str]] = [t for t in map(tokenize, CORPUS.strip().splitlines()) if len(t) >= 2]
VOCAB: list[str] = sorted({word for tokens in SENTENCES for word in tokens})
TOKEN_ID: dict[str, int] = {word: i for i, word in enumerate(VOCAB)}
# The first sentence of Article 1, the sentence whose attention matrix is drawn.
DISPLAY: list[str] = tokenize("All human beings are born free and equal in dignity and rights.")
MAX_LEN = max(len(tokens) for tokens in SENTENCES)  # rows of the "position" query table


def _tokens(sentence_or_tokens) -> list[str]:
    if isinstance(sentence_or_tokens, str):
        return tokenize(sentence_or_tokens)
    if isinstance(sentence_or_tokens, np.ndarray) or not hasattr(sentence_or_tokens, "__iter__"):
        raise TypeError(
            f"sentence_or_tokens must be a sentence (str) or a list of tokens, got "
            f"{sentence_or_tokens!r}"
        )
    tokens = list(sentence_or_tokens)
    if not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"sentence_or_tokens must hold tokens, strings; got {tokens!r}")
    return tokens


def encode(sentence_or_tokens) -> list[int]:
    """Token ids (rows of E, columns of the read-out) of a sentence or a token list (section 1).

    A string is tokenized first.  Raises ValueError for words outside the vocabulary (naming
    them) and for sentences of fewer than two tokens. Returns a list of n ints in 0..V-1.
    """
    tokens = _tokens(sentence_or_tokens)
    unknown = list(dict.fromkeys(t for t in tokens if t not in TOKEN_ID))
    if unknown:
        words = ", ".join(repr(w) for w in unknown)
        raise ValueError(
            f"not in the vocabulary: {words}. The head only knows the {len(VOCAB)} tokens "
            f"of the corpus; see attention_measured.udhr.VOCAB for the list"
        )
    if len(tokens) < 2:
        raise ValueError(
            f"a sentence needs at least two tokens, got {tokens!r}: a token may not attend "
            f"to itself, so a single token would have nothing to attend to"
        )
    return [TOKEN_ID[t] for t in tokens]


def decode(ids) -> list[str]:
    """The tokens of a sequence of ids, each in 0..V-1 (section 1)."""
    ids = checks.integers(ids, "ids", 0, len(VOCAB) - 1)
    if ids.ndim != 1:
        raise ValueError(f"ids must be one-dimensional, got shape {ids.shape}")
    return [VOCAB[int(i)] for i in ids]


# --------------------------------------------------------------- checking
def check_query(query) -> str:
    """``query`` if it is one of :data:`QUERIES` (section 4 compares them), else an error
    listing them.
    """
    return checks.choice(query, "query", QUERIES)


def check_sentences(sentences) -> list[list[str]]:
    """``sentences`` as token lists, each checked by :func:`encode`, or an error saying why not."""
    if isinstance(sentences, str) or not hasattr(sentences, "__iter__"):
        raise TypeError(f"sentences must be a list of token lists or strings, got {sentences!r}")
    token_lists = [_tokens(s) for s in sentences]
    if not token_lists:
        raise ValueError("sentences must hold at least one sentence")
    for tokens in token_lists:
        encode(tokens)  # vocabulary and length checks
    return token_lists


# --------------------------------------------------------------- section 2
NAMES = ("E", "W_Q", "W_K", "W_V", "W_O")  # every head's arrays; a query kind may add one


def query_kind(params: Params) -> str:
    """Which kind of query a head's parameters belong to: "mask", "position" or "token" (section
    4)."""
    checks.params(params, "params", NAMES)
    if "mask_embedding" in params:
        return "mask"
    return "position" if "positions" in params else "token"


@initialiser
def init_params(seed: int = 0, query: str = "token") -> Params:
    """Initial weights, 0.1 times standard normal draws from RandomState(seed) (section 2).

    Returns a Params: E (V, d) token embeddings; W_Q, W_K, W_V (d, d) query, key and value
    projections; W_O (d, V) read-out to one score per token; and for the "mask" query
    mask_embedding (d,), the one vector every query is made from, for the "position" query
    positions (MAX_LEN, d).  Drawn in the demo's order E, W_Q, W_K, W_V, W_O, so query="token"
    at seed 0 starts exactly where the demo starts; a variant's extra array is drawn last.
    """
    seed, query = checks.seed(seed), check_query(query)
    state = np.random.RandomState(seed)

    def draw(*shape):
        return INIT_SCALE * state.randn(*shape)

    V, d = len(VOCAB), WIDTH
    params = Params(E=draw(V, d), W_Q=draw(d, d), W_K=draw(d, d), W_V=draw(d, d), W_O=draw(d, V))
    if query == "mask":
        params["mask_embedding"] = draw(d)
    elif query == "position":
        params["positions"] = draw(MAX_LEN, d)
    return params


@dataclass(frozen=True)
class Batch:
    """B sentences padded to a common length L (section 2).

    ids: (B, L) token ids, 0 in padding;  valid: (B, L), True on the N real tokens;  allowed:
    (B, L, L), True where query i may attend to key j (both real tokens and j != i; padding rows
    are all False and get zero weights); real: (N,) flat indices of the real tokens in a (B * L)
    stack; targets: (N,) their token ids, the tokens to be predicted.
    """

    ids: np.ndarray
    valid: np.ndarray
    allowed: np.ndarray
    real: np.ndarray
    targets: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_predicted(self) -> int:
        """N, the number of positions with a target: every real token."""
        return len(self.targets)

    @cached_property
    def target_slots(self) -> np.ndarray:
        """(N,) the flat index, in a table of scores (N, V) over the vocabulary, of each row's
        target: where backward subtracts the one-hot."""
        return np.arange(len(self.targets)) * len(VOCAB) + self.targets

    @cached_property
    def embedding_slots(self) -> np.ndarray:
        """(N d,) the flat indices, in an embedding table (V, d) of width d = WIDTH, of the d
        numbers of each target's row: where backward adds each real token's gradient."""
        return (self.targets[:, None] * WIDTH + np.arange(WIDTH)).ravel()


def make_batch(sentences) -> Batch:
    """A :class:`Batch` of B sentences (strings or token lists), each checked by :func:`encode`
    (section 2).
    """
    id_lists = [encode(s) for s in check_sentences(sentences)]
    if not id_lists:
        raise ValueError("a batch needs at least one sentence")
    lengths = np.array([len(ids) for ids in id_lists])
    longest = int(lengths.max())
    valid = np.arange(longest) < lengths[:, None]
    ids = np.zeros(valid.shape, dtype=np.intp)
    ids[valid] = np.concatenate(id_lists)
    allowed = valid[:, :, None] & valid[:, None, :] & ~np.eye(longest, dtype=bool)
    return Batch(ids, valid, allowed, np.flatnonzero(valid), ids[valid])


@dataclass
class Forward:
    """What a forward pass keeps for the backward pass (section 2)."""

    embedded: np.ndarray  # (B, L, d)  X = E[ids]
    queries: np.ndarray  # (B, L, d)
    keys: np.ndarray  # (B, L, d)
    values: np.ndarray  # (B, L, d)
    weights: np.ndarray  # (B, L, L)  the attention matrix; rows of real tokens sum to 1
    read: np.ndarray  # (N, d)     Z = weights @ values, at the real tokens only
    probs: np.ndarray  # (N, V)     softmax of the read-out scores
    loss: float  # -log(prob of the true token), summed over the N tokens


def _query_inputs(params: Params, x: np.ndarray) -> np.ndarray:
    """What W_Q multiplies: the embeddings X (B, L, d) themselves, m (d,), or P[:L] (L, d)."""
    if "mask_embedding" in params:
        return params.mask_embedding
    if "positions" in params:
        length = x.shape[1]
        if length > len(params.positions):
            raise ValueError(
                f"the position query knows {len(params.positions)} positions, "
                f"got a sentence of {length} tokens"
            )
        return params.positions[:length]
    return x


def _projections(params: Params) -> tuple[list[str], np.ndarray]:
    """The projections that multiply X, side by side: (names, (d, 3d) or (d, 2d)).

    K = X W_K and Vv = X W_V (and, for the "token" query, Q = X W_Q) share their input, so one
    matrix product with [W_Q | W_K | W_V] makes all of them.
    """
    names = ["W_Q", "W_K", "W_V"] if query_kind(params) == "token" else ["W_K", "W_V"]
    return names, np.concatenate([params[name] for name in names], axis=1)


def _pieces(joined: np.ndarray) -> list[np.ndarray]:
    """Undo the side-by-side joining: (..., k d) -> k views of shape (..., d)."""
    return [joined[..., i : i + WIDTH] for i in range(0, joined.shape[-1], WIDTH)]


def _check_query_ids(params: Params, batch: Batch, query_ids) -> np.ndarray:
    if query_kind(params) != "token":
        raise ValueError(
            f"only the 'token' query is built from a token; the {query_kind(params)!r} query "
            f"has no token to swap"
        )
    ids = checks.integers(query_ids, "query_ids", 0, len(VOCAB) - 1)
    if ids.shape != batch.ids.shape:
        raise ValueError(
            f"query_ids must be token ids shaped like the batch {batch.ids.shape}, got {ids.shape}"
        )
    return ids


def forward(
    params: Params,
    batch: Batch,
    query_ids: np.ndarray | None = None,
    keep=None,
) -> Forward:
    """The head on every sentence of ``batch`` at once (section 2).

    Q = (X, m or P) W_Q, K = X W_K, Vv = X W_V; A = softmax(Q Kᵀ / sqrt(d)) over the allowed
    keys; Z = A Vv; probabilities = softmax(Z W_O).  Returns a :class:`Forward`: (B, L, ...)
    arrays up to the attention matrix A, then (N, ...) arrays for the N real tokens, because
    padding rows are dropped before the read-out, the costly step (V = 98 scores per token).

    ``query_ids``: (B, L) token ids, "token" query only.  When given, the queries are built from
    E[query_ids] instead of E[batch.ids], while keys, values and targets stay those of the
    batch; section 4's query swap (:func:`attention_measured.recall.swapped_top1`) uses this.
    Training never does.

    ``keep``: boolean (B, L, L), True where query i may attend to key j, on top of the batch's
    own rule (Part I's removal test, section 4).
    """
    checks.params(params, "params", NAMES)
    if not isinstance(batch, Batch):
        raise TypeError(f"batch must be a Batch (from make_batch), got {type(batch).__name__}")
    x = params.E[batch.ids]  # (B, L, d)
    names, joined = _projections(params)
    projected = _pieces(x @ joined)  # X W_Q, X W_K, X W_V
    k, v = projected[-2:]
    if query_ids is not None:
        q = params.E[_check_query_ids(params, batch, query_ids)] @ params.W_Q
    elif query_kind(params) == "token":
        q = projected[0]
    else:  # the same m, or P_i, in every sentence
        q = np.broadcast_to(_query_inputs(params, x) @ params.W_Q, x.shape)
    allowed = batch.allowed
    if keep is not None:
        allowed = allowed & checks.mask(keep, "keep", batch.allowed.shape)
    z, a = scaled_dot_product_attention(q, k, v, allowed)  # A = softmax(Q Kᵀ / sqrt(d)), A Vv
    z = z.reshape(-1, WIDTH)[batch.real]  # (N, d)
    scores = z @ params.W_O  # (N, V)
    # probs = softmax(scores); the loss from the log-softmax, exact where the probability
    # underflows: -log p, what backward differentiates
    probs, loss = softmax_and_summed_cross_entropy(scores, batch.targets)
    return Forward(x, q, k, v, a, z, probs, loss)


def read(params: Params, queries, inputs, keep=None, weights=None) -> tuple[np.ndarray, np.ndarray]:
    """The head of section 2 from its queries on: (scores (N, n, V), weights (N, n, m)).

    queries (N, n, d): query vectors, rows of Q; inputs (N, m, d): the embedded tokens read,
    whose keys and values are x W_K and x W_V.  A = softmax(Q Kᵀ / sqrt(d)) over the steps where
    ``keep`` (boolean (N, n, m)) is True, or ``weights`` (N, n, m) in its place; scores = A Vv W_O.
    :func:`forward` computes the same for a whole batch, its three projections joined into one
    product for speed; a test holds the two equal.  Part V explains the head through this.
    """
    checks.params(params, "params", NAMES)
    queries = checks.array(queries, "queries", ndim=3)
    inputs = checks.array(inputs, "inputs", ndim=3)
    if queries.shape[-1] != WIDTH or inputs.shape[-1] != WIDTH or len(queries) != len(inputs):
        raise ValueError(
            f"queries (N, n, {WIDTH}) and inputs (N, m, {WIDTH}) must share N, got "
            f"{queries.shape} and {inputs.shape}"
        )
    shape = queries.shape[:2] + inputs.shape[1:2]
    k, v = inputs @ params.W_K, inputs @ params.W_V
    if weights is None:
        keep = None if keep is None else checks.mask(keep, "keep", shape)
        z, a = scaled_dot_product_attention(queries, k, v, keep)
    else:
        a = checks.array(weights, "weights", shape=shape)
        z = a @ v
    return z @ params.W_O, a


def backward(params: Params, batch: Batch, fwd: Forward) -> Params:
    """Gradient of ``fwd.loss`` (the summed loss of the batch) for every array (section 2).

    Returns a Params of gradients shaped like ``params``.  Read from the bottom of
    :func:`forward` upwards: each line undoes one forward line. Padding positions receive
    exactly zero gradient.
    """
    query_kind(params)  # checks the parameters
    if not isinstance(batch, Batch):
        raise TypeError(f"batch must be a Batch (from make_batch), got {type(batch).__name__}")
    if not isinstance(fwd, Forward):
        raise TypeError(f"fwd must be the Forward of udhr.forward, got {type(fwd).__name__}")
    B, L = batch.ids.shape
    # probs = softmax(scores), loss = -sum log probs[target]  ->  d loss / d scores = probs - onehot
    g_scores = fwd.probs.copy()
    g_scores.reshape(-1)[batch.target_slots] -= 1.0  # [i, targets[i]] for every row i
    # scores = Z W_O
    g_W_O = fwd.read.T @ g_scores
    g_read = np.zeros((B * L, WIDTH))
    g_read[batch.real] = g_scores @ params.W_O.T  # padding rows stay 0
    g_read = g_read.reshape(B, L, WIDTH)
    # Z = A Vv
    g_weights = g_read @ fwd.values.swapaxes(1, 2)
    g_values = fwd.weights.swapaxes(1, 2) @ g_read
    # A = softmax(S) over the allowed keys (masked entries have A = 0, hence no gradient)
    g_s = softmax_backward(fwd.weights, g_weights)
    # S = Q Kᵀ / sqrt(d)
    g_queries = g_s @ fwd.keys
    g_queries /= np.sqrt(WIDTH)
    g_keys = g_s.swapaxes(1, 2) @ fwd.queries
    g_keys /= np.sqrt(WIDTH)
    grads = Params({name: None for name in params})  # the same names, in the same order
    grads.W_O = g_W_O
    # Q = m W_Q or P W_Q: every sentence's query at position i comes from the same vector
    kind = query_kind(params)
    if kind == "mask":
        g_q_total = g_queries.sum(axis=(0, 1))
        grads.W_Q = np.outer(params.mask_embedding, g_q_total)
        grads.mask_embedding = params.W_Q @ g_q_total
    elif kind == "position":
        g_q_per_position = g_queries.sum(axis=0)
        grads.W_Q = params.positions[:L].T @ g_q_per_position
        grads.positions = np.zeros_like(params.positions)
        grads.positions[:L] = g_q_per_position @ params.W_Q.T
    # X @ [W_Q | W_K | W_V] (W_Q only for the "token" query): the gradients of the joined
    # product give all the weight gradients side by side, and X's from all paths at once
    names, joined = _projections(params)
    pieces = ([g_queries] if kind == "token" else []) + [g_keys, g_values]
    # (N, 3d or 2d), real tokens only
    g_projected = np.concatenate(pieces, axis=-1).reshape(B * L, -1)[batch.real]
    x_real = fwd.embedded.reshape(B * L, WIDTH)[batch.real]  # (N, d)
    for name, g_w in zip(names, _pieces(x_real.T @ g_projected)):
        grads[name] = g_w
    g_x = g_projected @ joined.T  # (N, d)
    # X = E[ids]: a token that occurs twice adds both positions' gradients into its one row.
    # np.bincount does this scatter-add on the flattened table, one slot per number, adding in
    # order from zero as np.add.at into zeros would, to the same bits
    grads.E = np.bincount(
        batch.embedding_slots, weights=g_x.ravel(), minlength=params.E.size
    ).reshape(params.E.shape)
    return grads


def loss_and_gradients(params: Params, batch: Batch) -> tuple[float, Params]:
    """(summed loss over the N predicted tokens, its gradients shaped like ``params``) (section
    2)."""
    fwd = forward(params, batch)
    return fwd.loss, backward(params, batch, fwd)


# --------------------------------------------------------------- section 3
@remembered(ignore=("progress",))
def train(
    seed: int = 0,
    epochs: int = EPOCHS,
    query: str = "token",
    sentences=None,
    progress: bool = False,
    nudge: float = 0.0,
) -> Trained:
    """Full-batch Adam on the cloze loss, every sentence in every iteration (section 3).

    Returns a :class:`~attention_measured.training.Trained`: the :class:`Head` (which knows its
    query and the sentences it was trained on), the trained Params, and the loss curve (epochs,),
    the mean loss per predicted token at each iteration before its update.

    ``sentences=None`` trains on all 16 :data:`SENTENCES`; otherwise a list of token lists (or
    strings) from the vocabulary, e.g. a training fold.  Each iteration sums the gradients of
    all sentences' summed losses and divides by the number of sentences before the Adam step, as
    the demo does. ``progress=True`` shows a tqdm bar.  ``nudge``: a finite number added to the
    single initial weight E[0, 0] before the first step; section 4 "What the memory remembers"
    sets it to +-1e-12 to show that the end of a long run is chaotic.  The default 0.0 leaves
    every weight exactly as drawn.
    """
    seed, query = checks.seed(seed), check_query(query)
    nudge = checks.real(nudge, "nudge")
    token_lists = [list(s) for s in SENTENCES] if sentences is None else check_sentences(sentences)
    batch = make_batch(token_lists)
    params = init_params(seed, query)
    if nudge:
        params.E[0, 0] += nudge
    head = Head(query, token_lists)
    curve = fit(head, params, batch, None, epochs, LEARNING_RATE, progress=progress)
    return Trained(head, params, curve)


class Head:
    """Section 2's head as :func:`attention_measured.training.fit` trains it (section 3): its
    ``query`` kind and the ``sentences`` (token lists) it is trained on.

    The loss it reports is the mean per predicted token; its gradients are those of the
    sentences' summed losses divided by the number of sentences, the demo's step.
    """

    def __init__(self, query: str = "token", sentences=None):
        self.query = check_query(query)
        self.sentences = (
            [list(s) for s in SENTENCES] if sentences is None else check_sentences(sentences)
        )

    def __repr__(self) -> str:
        return f"Head(query={self.query!r}, {len(self.sentences)} sentences)"

    def loss_and_grads(self, params: Params, batch: Batch) -> tuple[float, Params]:
        query_kind(params)  # checks the parameters
        loss, grads = loss_and_gradients(params, batch)
        for g in grads.values():  # fresh arrays: divided where they are
            g /= len(batch)
        return loss / batch.n_predicted, grads


def head_params(model) -> Params:
    """The Params of a head: ``model`` is what :func:`train` returns, or Params."""
    if isinstance(model, Trained) and isinstance(model.model, Head):
        return model.params
    if isinstance(model, Params):
        return model
    raise TypeError(
        f"model must be a trained head (from train) or its Params, got {type(model).__name__}"
    )


def attention_weights(model, tokens=DISPLAY) -> np.ndarray:
    """The (n, n) attention matrix of one sentence: row i = query i, column j = key j (section
    3).

    ``model`` is a trained head (from :func:`train`) or Params; the diagonal is exactly 0.
    """
    batch = make_batch([tokens])
    return forward(head_params(model), batch).weights[0]


def loss_csv_rows(loss_curve) -> list[tuple[int, float]]:
    """(iteration, loss) for iteration 1 and every 20th iteration, counted from 1 (section 3)."""
    curve = checks.array(loss_curve, "loss_curve", ndim=1)
    return [
        (i, float(curve[i - 1])) for i in range(1, len(curve) + 1) if i == 1 or i % CSV_EVERY == 0
    ]


def write_csvs(result: Trained, directory=".") -> tuple[Path, Path]:
    """Write attention_loss.csv (iter,loss) and attention_weights.csv (q,k,w) (section 3).

    The weights are the :data:`DISPLAY` sentence's matrix in long form, one row per (query, key)
    cell.  Every number is written as %.6f, headers without a comment sign, as the demo writes
    them.  Returns the two paths.
    """
    if not (isinstance(result, Trained) and isinstance(result.model, Head)):
        raise TypeError(f"result must be a trained head (from train), got {type(result).__name__}")
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"directory must be a folder's path, got {directory!r}")
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    weights = attention_weights(result, DISPLAY)
    cells = [
        (q, k, weights[q, k]) for q in range(weights.shape[0]) for k in range(weights.shape[1])
    ]
    paths = folder / "attention_loss.csv", folder / "attention_weights.csv"
    for path, header, rows in zip(
        paths, ("iter,loss", "q,k,w"), (loss_csv_rows(result.curve), cells)
    ):
        np.savetxt(
            path, np.array(rows, dtype=float), delimiter=",", header=header, comments="", fmt="%.6f"
        )
    return paths
