"""Part II: a single self-attention head, trained by hand as an associative memory.

Section 1, "The corpus and its tokens": :data:`ARTICLES`, :data:`CORPUS`, :func:`tokenize`,
:data:`SENTENCES`, :data:`VOCAB`, :data:`DISPLAY` and :func:`encode`.
Section 2, "One head, by hand": :class:`Params`, :func:`init_params`,
:func:`make_batch`, :func:`forward` and :func:`backward`, every backward line
paired with the forward line it undoes.
Section 3, "Training and the heat map": :func:`train` (with :class:`attention_measured.optim.Adam`),
:func:`attention_weights`, :func:`loss_csv_rows` and :func:`write_csvs`.
Section 4, "What the memory remembers": :func:`predict` and
:func:`top1_accuracy`, on the training sentences or on held-out ones;
:func:`loss_spikes` (where the loss jumps up, and ``train(nudge=...)`` for the
chaos of long runs); :data:`FOLDS` and :func:`heldout_experiment` with its two
baselines, :func:`most_frequent_token` and :func:`cooccurrence_guesses`;
:func:`swapped_top1`, the token query fed the wrong token; and
:func:`removal_effects`, what dropping one key does to each prediction.

The task is cloze-style recall.  Position i of a sentence is hidden from its
own row of the attention matrix (a token may not attend to itself), and the
head must name the token at i from a weighted mix of the other tokens' values.
Three kinds of query are offered (:data:`QUERIES`):

- ``"token"``: the demo's head, Q_i = E[x_i] W_Q, so the query is built from
  the very token it has to predict;
- ``"mask"``: Q_i = m W_Q for one learned vector m shared by every position,
  so the query cannot see the token it must predict;
- ``"position"``: Q_i = P_i W_Q, with P a learned table of MAX_LEN positions.

Shapes: V = 98 tokens in the vocabulary, d = 24 for embeddings, queries, keys
and values, B sentences in a batch, L the longest of them (shorter ones are
padded and masked out), n the length of a single sentence.
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from . import rng
from .attention import drop_each_step, softmax, softmax_backward
from .blas import one_thread
from .cache import remembered
from .optim import Adam

# --------------------------------------------------------------- section 1
# Sixteen sentences and clauses from thirteen articles of the UDHR (adopted by
# the UN in 1948 as resolution 217 A; public domain), each with its article number.
ARTICLES: list[tuple[int, str]] = [
    (1, "All human beings are born free and equal in dignity and rights."),
    (
        1,
        "They are endowed with reason and conscience and should act towards one another in a spirit of brotherhood.",
    ),
    (3, "Everyone has the right to life, liberty and security of person."),
    (4, "No one shall be held in slavery or servitude."),
    (4, "Slavery and the slave trade shall be prohibited in all their forms."),
    (
        5,
        "No one shall be subjected to torture or to cruel, inhuman or degrading treatment or punishment.",
    ),
    (6, "Everyone has the right to recognition everywhere as a person before the law."),
    (
        7,
        "All are equal before the law and are entitled without any discrimination to equal protection of the law.",
    ),
    (9, "No one shall be subjected to arbitrary arrest, detention or exile."),
    (
        13,
        "Everyone has the right to freedom of movement and residence within the borders of each state.",
    ),
    (17, "Everyone has the right to own property alone as well as in association with others."),
    (17, "No one shall be arbitrarily deprived of his property."),
    (18, "Everyone has the right to freedom of thought, conscience and religion."),
    (19, "Everyone has the right to freedom of opinion and expression."),
    (
        24,
        "Everyone has the right to rest and leisure, including reasonable limitation of working hours and periodic holidays with pay.",
    ),
    (26, "Everyone has the right to education."),
]
CORPUS = "\n".join(sentence for _, sentence in ARTICLES)  # one sentence to a line

WIDTH = 24  # d: embedding, query, key and value size
INIT_SCALE = 0.1  # every initial weight is 0.1 * a standard normal draw
LEARNING_RATE = 0.02
BETA1, BETA2, EPSILON = 0.9, 0.999, 1e-8
EPOCHS = 4000
LOG_FLOOR = 1e-12  # added to a probability before its log
CSV_EVERY = 20  # the loss CSV keeps iteration 1 and every 20th
QUERIES = ("token", "mask", "position")
# Bounds for the end of a chaotic run (section 4, "What the memory remembers").  Over 100 runs of
# the token and position queries from seed 0, each nudged by 0 to 12e-12 (train(nudge=...)), on two
# kinds of processor arithmetic (OpenBLAS's Haswell and Nehalem kernels), the lowest share of
# training tokens recalled was 0.61 and the highest final loss per token 0.79.
RECALL_FLOOR = 0.5  # every such run recalls more than half of the training tokens ...
LOSS_CEILING = 1.0  # ... and ends with a loss per token below 1 (it starts at 4.58)


def tokenize(sentence: str) -> list[str]:
    """The runs of letters in ``sentence``, lowercased (section 1); punctuation and case vanish."""
    if not isinstance(sentence, str):
        raise ValueError(f"tokenize expects a string, got {type(sentence).__name__}")
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
        raise ValueError(
            f"expected a sentence (str) or a list of tokens, got {sentence_or_tokens!r}"
        )
    tokens = list(sentence_or_tokens)
    if not all(isinstance(t, str) for t in tokens):
        raise ValueError(f"tokens must be strings, got {tokens!r}")
    return tokens


def encode(sentence_or_tokens) -> list[int]:
    """Token ids (rows of E, columns of the read-out) of a sentence or a token list (section 1).

    A string is tokenized first.  Raises ValueError for words outside the
    vocabulary (naming them) and for sentences of fewer than two tokens.
    Returns a list of n ints in 0..V-1.
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
    """The tokens of a sequence of ids (section 1)."""
    return [VOCAB[int(i)] for i in ids]


# --------------------------------------------------------------- checking
def check_query(query) -> str:
    """``query`` if it is one of :data:`QUERIES` (section 4 compares them), else ValueError listing them."""
    if not isinstance(query, str) or query not in QUERIES:
        raise ValueError(f"unknown query {query!r}; choose one of {', '.join(map(repr, QUERIES))}")
    return query


def _check_seed(seed) -> int:
    seed = rng.check_seed(seed)
    if seed >= 2**32:
        raise ValueError(f"seed must be below 2**32 (numpy.random.RandomState's range), got {seed}")
    return seed


def _check_epochs(epochs) -> int:
    if isinstance(epochs, bool) or not isinstance(epochs, numbers.Integral) or epochs <= 0:
        raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
    return int(epochs)


def _check_nudge(nudge) -> float:
    if isinstance(nudge, bool) or not isinstance(nudge, numbers.Real) or not np.isfinite(nudge):
        raise ValueError(f"nudge must be a finite real number, got {nudge!r}")
    return float(nudge)


def _check_flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _check_sentences(sentences) -> list[list[str]]:
    if isinstance(sentences, str) or not hasattr(sentences, "__iter__"):
        raise ValueError(f"sentences must be a list of token lists, got {sentences!r}")
    token_lists = [_tokens(s) for s in sentences]
    if not token_lists:
        raise ValueError("sentences must hold at least one sentence")
    for tokens in token_lists:
        encode(tokens)  # vocabulary and length checks
    return token_lists


# --------------------------------------------------------------- section 2
@dataclass
class Params:
    """The head's learned arrays (section 2).

    E: (V, d) token embeddings;  W_Q, W_K, W_V: (d, d) query, key and value
    projections;  W_O: (d, V) read-out to one score per token.  Only the
    "mask" query has ``mask_embedding``: (d,), the one vector every query is
    made from; only the "position" query has ``positions``: (MAX_LEN, d).
    """

    E: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    mask_embedding: np.ndarray | None = None
    positions: np.ndarray | None = None

    @property
    def query(self) -> str:
        """Which kind of query these parameters belong to."""
        if self.mask_embedding is not None:
            return "mask"
        return "position" if self.positions is not None else "token"

    def names(self) -> list[str]:
        """The names of the arrays present, in drawing order."""
        return [f.name for f in fields(self) if getattr(self, f.name) is not None]

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.names()}

    def copy(self) -> Params:
        return Params(**{name: a.copy() for name, a in self.arrays().items()})


def init_params(seed: int = 0, query: str = "token") -> Params:
    """Initial weights, 0.1 times standard normal draws from RandomState(seed) (section 2).

    Drawn in the demo's order E (V, d), W_Q, W_K, W_V (d, d), W_O (d, V), so
    query="token" at seed 0 starts exactly where the demo starts; a variant's
    extra array, mask_embedding (d,) or positions (MAX_LEN, d), is drawn
    after those five.
    """
    seed, query = _check_seed(seed), check_query(query)
    state = np.random.RandomState(seed)

    def draw(*shape):
        return INIT_SCALE * state.randn(*shape)

    V, d = len(VOCAB), WIDTH
    params = Params(E=draw(V, d), W_Q=draw(d, d), W_K=draw(d, d), W_V=draw(d, d), W_O=draw(d, V))
    if query == "mask":
        params.mask_embedding = draw(d)
    elif query == "position":
        params.positions = draw(MAX_LEN, d)
    return params


@dataclass(frozen=True)
class Batch:
    """B sentences padded to a common length L (section 2).

    ids: (B, L) token ids, 0 in padding;  valid: (B, L), True on the N real
    tokens;  allowed: (B, L, L), True where query i may attend to key j (both
    real tokens and j != i; padding rows are all False and get zero weights);
    real: (N,) flat indices of the real tokens in a (B * L) stack;
    targets: (N,) their token ids, the tokens to be predicted.
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


def make_batch(sentences) -> Batch:
    """A :class:`Batch` of B sentences (strings or token lists), each checked by :func:`encode` (section 2)."""
    id_lists = [encode(s) for s in sentences]
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
    loss: float  # -log(prob of the true token + 1e-12), summed over the N tokens


def _query_inputs(params: Params, x: np.ndarray) -> np.ndarray:
    """What W_Q multiplies: the embeddings X (B, L, d) themselves, m (d,), or P[:L] (L, d)."""
    if params.mask_embedding is not None:
        return params.mask_embedding
    if params.positions is not None:
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

    K = X W_K and Vv = X W_V (and, for the "token" query, Q = X W_Q) share
    their input, so one matrix product with [W_Q | W_K | W_V] makes all of them.
    """
    names = ["W_Q", "W_K", "W_V"] if params.query == "token" else ["W_K", "W_V"]
    return names, np.concatenate([getattr(params, name) for name in names], axis=1)


def _pieces(joined: np.ndarray) -> list[np.ndarray]:
    """Undo the side-by-side joining: (..., k d) -> k views of shape (..., d)."""
    return [joined[..., i : i + WIDTH] for i in range(0, joined.shape[-1], WIDTH)]


def _check_query_ids(params: Params, batch: Batch, query_ids) -> np.ndarray:
    if params.query != "token":
        raise ValueError(
            f"only the 'token' query is built from a token; the {params.query!r} query "
            f"has no token to swap"
        )
    ids = np.asarray(query_ids)
    if ids.shape != batch.ids.shape or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(
            f"query_ids must be integer token ids shaped like the batch {batch.ids.shape}, "
            f"got {ids.dtype} of shape {ids.shape}"
        )
    if ids.size and (ids.min() < 0 or ids.max() >= len(VOCAB)):
        raise ValueError(f"query_ids must lie in 0..{len(VOCAB) - 1}")
    return ids


def forward(params: Params, batch: Batch, query_ids: np.ndarray | None = None) -> Forward:
    """The head on every sentence of ``batch`` at once (section 2).

    Q = (X, m or P) W_Q, K = X W_K, Vv = X W_V; A = softmax(Q Kᵀ / sqrt(d))
    over the allowed keys; Z = A Vv; probabilities = softmax(Z W_O).  Returns
    a :class:`Forward`: (B, L, ...) arrays up to the attention matrix A, then
    (N, ...) arrays for the N real tokens, because padding rows are dropped
    before the read-out, the costly step (V = 98 scores per token).

    ``query_ids``: (B, L) token ids, "token" query only.  When given, the
    queries are built from E[query_ids] instead of E[batch.ids], while keys,
    values and targets stay those of the batch; section 4's query swap
    (:func:`swapped_top1`) uses this.  Training never does.
    """
    x = params.E[batch.ids]  # (B, L, d)
    names, joined = _projections(params)
    projected = _pieces(x @ joined)  # X W_Q, X W_K, X W_V
    k, v = projected[-2:]
    if query_ids is not None:
        q = params.E[_check_query_ids(params, batch, query_ids)] @ params.W_Q
    elif params.query == "token":
        q = projected[0]
    else:  # the same m, or P_i, in every sentence
        q = np.broadcast_to(_query_inputs(params, x) @ params.W_Q, x.shape)
    a = softmax(q @ k.swapaxes(1, 2) / np.sqrt(WIDTH), batch.allowed)  # (B, L, L)
    z = (a @ v).reshape(-1, WIDTH)[batch.real]  # (N, d)
    probs = softmax(z @ params.W_O)  # (N, V)
    p_true = probs[np.arange(len(probs)), batch.targets]
    loss = float(-np.log(p_true + LOG_FLOOR).sum())
    return Forward(x, q, k, v, a, z, probs, loss)


def backward(params: Params, batch: Batch, fwd: Forward) -> Params:
    """Gradient of ``fwd.loss`` (the summed loss of the batch) for every array (section 2).

    Returns a Params of gradients shaped like ``params``.  Read from the
    bottom of :func:`forward` upwards: each line undoes one forward line.
    Padding positions receive exactly zero gradient.
    """
    B, L = batch.ids.shape
    # probs = softmax(scores), loss = -sum log probs[target]  ->  d loss / d scores = probs - onehot
    g_scores = fwd.probs.copy()  # (N, V)
    g_scores[np.arange(len(g_scores)), batch.targets] -= 1.0
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
    g_queries = g_s @ fwd.keys / np.sqrt(WIDTH)
    g_keys = g_s.swapaxes(1, 2) @ fwd.queries / np.sqrt(WIDTH)
    grads = Params(E=np.zeros_like(params.E), W_Q=None, W_K=None, W_V=None, W_O=g_W_O)
    # Q = m W_Q or P W_Q: every sentence's query at position i comes from the same vector
    if params.mask_embedding is not None:
        g_q_total = g_queries.sum(axis=(0, 1))
        grads.W_Q = np.outer(params.mask_embedding, g_q_total)
        grads.mask_embedding = params.W_Q @ g_q_total
    elif params.positions is not None:
        g_q_per_position = g_queries.sum(axis=0)
        grads.W_Q = params.positions[:L].T @ g_q_per_position
        grads.positions = np.zeros_like(params.positions)
        grads.positions[:L] = g_q_per_position @ params.W_Q.T
    # X @ [W_Q | W_K | W_V] (W_Q only for the "token" query): the gradients of the joined
    # product give all the weight gradients side by side, and X's from all paths at once
    names, joined = _projections(params)
    g_projected = np.concatenate(
        ([g_queries] if params.query == "token" else []) + [g_keys, g_values], axis=-1
    )
    g_projected = g_projected.reshape(B * L, -1)[batch.real]  # (N, 3d or 2d), real tokens only
    x_real = fwd.embedded.reshape(B * L, WIDTH)[batch.real]  # (N, d)
    for name, g_w in zip(names, _pieces(x_real.T @ g_projected)):
        setattr(grads, name, g_w)
    g_x = g_projected @ joined.T  # (N, d)
    # X = E[ids]: a token that occurs twice adds both positions' gradients into its one row
    # (np.add.at on the flattened table, one slot per number, is the fast form of this scatter-add)
    slots = (batch.targets[:, None] * WIDTH + np.arange(WIDTH)).ravel()
    np.add.at(grads.E.reshape(-1), slots, g_x.ravel())
    return grads


def loss_and_gradients(params: Params, batch: Batch) -> tuple[float, Params]:
    """(summed loss over the N predicted tokens, its gradients shaped like ``params``) (section 2)."""
    fwd = forward(params, batch)
    return fwd.loss, backward(params, batch, fwd)


# --------------------------------------------------------------- section 3
@dataclass
class TrainingResult:
    """What :func:`train` returns (section 3).

    loss_curve: (epochs,) mean loss per predicted token, measured at each
    iteration before its update; params: the trained :class:`Params`;
    sentences: the token lists trained on.
    """

    loss_curve: np.ndarray
    params: Params
    query: str
    seed: int
    sentences: list[list[str]]

    @property
    def epochs(self) -> int:
        return len(self.loss_curve)


@remembered(ignore=("progress",))
@one_thread
def train(
    seed: int = 0,
    epochs: int = EPOCHS,
    query: str = "token",
    sentences=None,
    progress: bool = False,
    nudge: float = 0.0,
) -> TrainingResult:
    """Full-batch Adam on the cloze loss, every sentence in every iteration (section 3).

    ``sentences=None`` trains on all 16 :data:`SENTENCES`; otherwise a list of
    token lists (or strings) from the vocabulary, e.g. a training fold.  Each
    iteration sums the gradients of all sentences' summed losses and divides
    by the number of sentences before the Adam step, as the demo does.
    ``progress=True`` shows a tqdm bar.  ``nudge``: a finite number added to
    the single initial weight E[0, 0] before the first step; section 4 "What
    the memory remembers" sets it to +-1e-12 to show that the end of a long
    run is chaotic.  The default 0.0 leaves every weight exactly as drawn.
    """
    seed, epochs, query = _check_seed(seed), _check_epochs(epochs), check_query(query)
    nudge = _check_nudge(nudge)
    token_lists = [list(s) for s in SENTENCES] if sentences is None else _check_sentences(sentences)
    batch = make_batch(token_lists)
    # Allocate and free 8 MB once: glibc then raises its threshold for handing freed memory back
    # to the kernel, and the ~160 KB arrays each iteration makes are reused instead of being
    # mapped and unmapped every time (about a third faster in a fresh process; see bench/).
    np.empty(1 << 20)
    params = init_params(seed, query)
    if nudge:
        params.E[0, 0] += nudge
    adam = Adam(params, LEARNING_RATE, BETA1, BETA2, EPSILON)
    curve = np.empty(epochs)
    iterations = range(epochs)
    if progress:
        from tqdm.auto import tqdm

        iterations = tqdm(iterations, desc=f"training ({query} query)", unit="it")
    for t in iterations:
        loss, grads = loss_and_gradients(params, batch)
        curve[t] = loss / batch.n_predicted
        adam.step(grads, len(batch))
    return TrainingResult(curve, params, query, seed, token_lists)


def _params(model) -> Params:
    if isinstance(model, TrainingResult):
        return model.params
    if isinstance(model, Params):
        return model
    raise ValueError(
        f"expected a TrainingResult (from train) or Params, got {type(model).__name__}"
    )


def attention_weights(model, tokens=DISPLAY) -> np.ndarray:
    """The (n, n) attention matrix of one sentence: row i = query i, column j = key j (section 3).

    ``model`` is a TrainingResult or Params; the diagonal is exactly 0.
    """
    batch = make_batch([tokens])
    return forward(_params(model), batch).weights[0]


def loss_csv_rows(loss_curve) -> list[tuple[int, float]]:
    """(iteration, loss) for iteration 1 and every 20th iteration, counted from 1 (section 3)."""
    curve = np.asarray(loss_curve, dtype=float)
    if curve.ndim != 1:
        raise ValueError(f"loss_curve must be one-dimensional, got shape {curve.shape}")
    return [
        (i, float(curve[i - 1])) for i in range(1, len(curve) + 1) if i == 1 or i % CSV_EVERY == 0
    ]


def write_csvs(result: TrainingResult, directory=".") -> tuple[Path, Path]:
    """Write attention_loss.csv (iter,loss) and attention_weights.csv (q,k,w) (section 3).

    The weights are the :data:`DISPLAY` sentence's matrix in long form, one
    row per (query, key) cell.  Every number is written as %.6f, headers
    without a comment sign, as the demo writes them.  Returns the two paths.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    weights = attention_weights(result, DISPLAY)
    cells = [
        (q, k, weights[q, k]) for q in range(weights.shape[0]) for k in range(weights.shape[1])
    ]
    paths = folder / "attention_loss.csv", folder / "attention_weights.csv"
    for path, header, rows in zip(
        paths, ("iter,loss", "q,k,w"), (loss_csv_rows(result.loss_curve), cells)
    ):
        np.savetxt(
            path, np.array(rows, dtype=float), delimiter=",", header=header, comments="", fmt="%.6f"
        )
    return paths


# --------------------------------------------------------------- section 4
# Section 4, "What the memory remembers": how well the trained head names the
# hidden token, on the sentences it learned and on sentences it never saw;
# where that skill comes from; and how the loss curve behaves on the way.

SPIKE_FACTOR = 10.0  # a spike climbs above 10 times the lowest loss so far ...
SPIKE_RECOVERY = 2.0  # ... and is over once the loss is back below 2 times that lowest loss
ALWAYS_TRAINED = 0  # the DISPLAY sentence is in every training fold
# Held-out folds: sentence i (1..15) goes to fold (i - 1) % 5, so each fold
# holds three sentences from the start, middle and end of the corpus.
FOLDS: tuple[tuple[int, ...], ...] = tuple(tuple(range(1 + f, len(SENTENCES), 5)) for f in range(5))
SWAPS = ("next", "previous")
METHODS = (
    "token",
    "position",
    "mask",
    "token_swapped",
    "most_frequent",
    "positional",
    "cooccurrence",
)


def predict(model, tokens) -> np.ndarray:
    """(n, V) probabilities of every vocabulary token at each position of one sentence (section 4)."""
    batch = make_batch([tokens])
    return forward(_params(model), batch).probs


def _scored_batch(model, sentences) -> Batch:
    if sentences is None:
        if not isinstance(model, TrainingResult):
            raise ValueError(
                "give the sentences to score, or a TrainingResult that remembers its own"
            )
        sentences = model.sentences
    return make_batch(_check_sentences(sentences))


def top1_accuracy(model, sentences=None) -> float:
    """Share of positions whose most probable token is the true one (section 4).

    ``sentences``: token lists or strings from the vocabulary, held-out ones
    included; None means the sentences a TrainingResult was trained on.
    """
    batch = _scored_batch(model, sentences)
    guesses = forward(_params(model), batch).probs.argmax(axis=-1)
    return float(np.mean(guesses == batch.targets))


def swapped_query_ids(batch: Batch, swap: str = "next") -> np.ndarray:
    """(B, L) ids from which the swapped queries are built (section 4, "What the memory remembers").

    ``swap="next"``: position i of a sentence of n tokens takes the token at
    position (i + 1) mod n of the same sentence, so the last position takes
    the first token; ``"previous"`` takes (i - 1) mod n.  Padding positions
    keep id 0; their rows are masked anyway.  Raises ValueError for any other
    ``swap``.  Where a sentence repeats a token next to itself, the query is
    unchanged by the swap.
    """
    if not isinstance(swap, str) or swap not in SWAPS:
        raise ValueError(f"unknown swap {swap!r}; choose one of {', '.join(map(repr, SWAPS))}")
    if not isinstance(batch, Batch):
        raise ValueError(f"expected a Batch (from make_batch), got {type(batch).__name__}")
    lengths = batch.valid.sum(axis=1)[:, None]  # (B, 1)
    offset = 1 if swap == "next" else -1
    source = (np.arange(batch.ids.shape[1])[None, :] + offset) % lengths  # (B, L)
    return np.where(batch.valid, np.take_along_axis(batch.ids, source, axis=1), 0)


def _swapped_correct(params: Params, batch: Batch, swap: str) -> np.ndarray:
    """(N,) True where the head, with swapped queries, still names the true token."""
    query_ids = swapped_query_ids(batch, swap)
    return forward(params, batch, query_ids).probs.argmax(axis=-1) == batch.targets


def swapped_top1(model, sentences=None, swap: str = "next") -> float:
    """Top-1 accuracy of a "token" head whose queries come from the wrong token (section 4).

    Section 4, "What the memory remembers", asks how much of the token
    query's score (on held-out sentences above all) comes from the query
    looking at the very token it must name.  Here every position's query is
    E[x_s] W_Q for the token x_s chosen by :func:`swapped_query_ids`
    (default: the next token, cyclically), while the keys, the values, the
    mask and the target stay those of the true sentence.  ``sentences`` as in
    :func:`top1_accuracy`.  The "mask" and "position" queries never read a
    token, so there is nothing to swap: they raise ValueError.
    """
    params = _params(model)
    if params.query != "token":
        raise ValueError(
            f"the query swap needs the 'token' query; the {params.query!r} query "
            f"never reads the token at its position"
        )
    batch = _scored_batch(model, sentences)
    return float(np.mean(_swapped_correct(params, batch, swap)))


def loss_spikes(
    loss_curve, factor: float = SPIKE_FACTOR, recovery: float = SPIKE_RECOVERY
) -> np.ndarray:
    """Iterations (1-based) at which the training loss starts a spike (section 4).

    The rule, with m_t the lowest loss at the iterations before t: a spike
    starts at iteration t when loss_t > ``factor`` * m_t and no spike is
    under way; it lasts until the loss drops below ``recovery`` * m_t (m_t
    cannot move during a spike, as the loss stays above it).  Each spike is
    counted once, at its first iteration, however often it wobbles across
    the upper line, and a spike that never recovers is counted once too.
    The first iteration has nothing before it and never starts a spike.
    Section 4, "What the memory remembers", uses the defaults: a loss ten
    times its best so far, over once it is back within twice that best.

    loss_curve: (T,) positive finite losses.  factor > recovery >= 1.
    Returns an int array of the start iterations, in 1..T, ascending.
    """
    curve = np.asarray(loss_curve, dtype=float) if not isinstance(loss_curve, str) else None
    if curve is None or curve.ndim != 1:
        raise ValueError(
            f"loss_curve must be a one-dimensional array of losses, got {loss_curve!r}"
        )
    if not np.all(np.isfinite(curve)) or np.any(curve <= 0):
        raise ValueError(
            "loss_curve must hold positive finite numbers (the rule compares ratios of losses)"
        )
    for name, value in (("factor", factor), ("recovery", recovery)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite real number, got {value!r}")
    if not factor > recovery >= 1:
        raise ValueError(
            f"need factor > recovery >= 1, got factor={factor!r}, recovery={recovery!r}"
        )
    best_before = np.minimum.accumulate(np.concatenate(([np.inf], curve[:-1])))  # m_t, inf at t = 0
    rises = curve > factor * best_before  # enter (or stay in) a spike
    settles = curve < recovery * best_before  # leave it
    # The state at t is set by the last rise or settle at or before t; between them it holds.
    steps = np.arange(len(curve))
    last_event = np.maximum.accumulate(np.where(rises | settles, steps, -1))
    in_spike = (last_event >= 0) & rises[np.maximum(last_event, 0)]
    starts = in_spike & ~np.concatenate(([False], in_spike[:-1]))
    return np.flatnonzero(starts) + 1


def most_frequent_token(sentences) -> str:
    """The token that occurs most often in ``sentences`` (section 4's first baseline).

    Every occurrence counts (a sentence with "and" twice adds two); ties go
    to the token that comes first in the alphabet.  ``sentences``: a list of
    token lists or strings from the vocabulary.
    """
    counts = np.bincount(
        np.concatenate([encode(s) for s in _check_sentences(sentences)]), minlength=len(VOCAB)
    )
    return VOCAB[int(counts.argmax())]


def positional_guesses(sentences, length: int) -> list[str]:
    """Section 4's positional baseline: for each position i < ``length``, the training token most often at i.

    Counts every training sentence long enough to have a position i; ties go
    to the token that occurs more often in ``sentences`` overall, then to the
    alphabetically first.  Where no training sentence is that long, the guess
    is :func:`most_frequent_token`.  Returns ``length`` tokens.
    """
    training = [encode(s) for s in _check_sentences(sentences)]
    if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 1:
        raise ValueError(f"length must be a positive integer, got {length!r}")
    V = len(VOCAB)
    overall = np.bincount(np.concatenate(training), minlength=V)
    at = np.zeros((int(length), V), dtype=np.int64)  # (length, V) counts per position
    for ids in training:
        reach = min(len(ids), int(length))
        at[np.arange(reach), ids[:reach]] += 1
    tie_rank = np.empty(V, dtype=np.int64)
    tie_rank[np.lexsort((np.arange(V), -overall))] = np.arange(V)  # best tie-break first
    key = at * V + (V - 1 - tie_rank)
    key[at.sum(axis=1) == 0] = V - 1 - tie_rank  # nobody that long: overall favourite
    return decode(key.argmax(axis=1))


def cooccurrence_guesses(sentences, tokens) -> list[str]:
    """Section 4's second baseline: one guess per position of ``tokens``, from co-occurrence counts.

    ``sentences`` are the training sentences (token lists or strings), and
    ``tokens`` one sentence of n tokens to fill in.  For position i, a
    candidate w (any token that occurs in ``sentences``) scores

        score_i(w) = number of pairs (s, j), s a training sentence and j != i
                     a position of ``tokens``, such that s contains both w
                     and tokens[j].

    Containment is set membership: repeats inside s do not count twice, but
    a token repeated at two positions j of ``tokens`` counts once per
    position, and w = tokens[j] counts for every training sentence that
    contains w.  The guess is the w of highest score; ties go to the token
    that occurs more often in ``sentences`` (every occurrence counted), then
    to the alphabetically first.  Returns n tokens.
    """
    training = [encode(s) for s in _check_sentences(sentences)]
    ids = np.array(encode(tokens))
    V = len(VOCAB)
    present = np.zeros((len(training), V), dtype=np.int64)  # (S, V) 1 if s contains w
    for row, sentence_ids in zip(present, training):
        row[sentence_ids] = 1
    together = present.T @ present  # (V, V) sentences holding both
    counts = np.bincount(np.concatenate(training), minlength=V)
    bag = np.bincount(ids, minlength=V)  # how often each token is in `tokens`
    scores = (together @ bag)[None, :] - together[:, ids].T  # (n, V): sum over j != i
    order = np.lexsort((np.arange(V), -counts))  # best tie-break first
    tie_rank = np.empty(V, dtype=np.int64)
    tie_rank[order] = np.arange(V)
    key = np.where(counts > 0, scores * V + (V - 1 - tie_rank), -1)
    return decode(key.argmax(axis=1))


def _check_queries(queries) -> tuple[str, ...]:
    if isinstance(queries, str) or not hasattr(queries, "__iter__"):
        raise ValueError(f"queries must be a tuple of query names, got {queries!r}")
    chosen = tuple(check_query(q) for q in queries)
    if not chosen or len(set(chosen)) != len(chosen):
        raise ValueError(f"queries must name at least one query, each once, got {queries!r}")
    return chosen


def heldout_experiment(
    seed: int = 0,
    epochs: int = EPOCHS,
    queries=("token", "position", "mask"),
    progress: bool = False,
    nudge: float = 0.0,
) -> dict:
    """Top-1 accuracy on sentences the head never saw, fold by fold (section 4).

    Section 4, "What the memory remembers", asks whether the head learned
    associations or a lookup table.  For each fold of :data:`FOLDS` (5 folds
    of 3 sentence indices; sentence :data:`ALWAYS_TRAINED` = 0, the DISPLAY
    sentence, is never held out) and each of ``queries``, a head is trained
    with :func:`train` (this ``seed`` and ``epochs``) on the other 13
    sentences and scored at every position of the fold's 3 sentences.  The
    same positions are scored for:

    - "token_swapped" (only when "token" is among ``queries``): the trained
      token head with each query built from the next token of the sentence
      (:func:`swapped_top1`, swap="next");
    - "most_frequent": always guess :func:`most_frequent_token` of the 13
      training sentences;
    - "positional": :func:`positional_guesses`, the training token most often
      found at each position;
    - "cooccurrence": :func:`cooccurrence_guesses` from the 13 sentences.

    Returns a dict with
    "folds" (5 tuples of 3 indices), "positions" (5,) int: held-out positions per fold;
    "per_fold": {method: (5,) accuracy}, methods from :data:`METHODS`;
    "mean": {method: float}, the accuracy over all held-out positions pooled
    (each of the 15 held-out sentences is held out once, so this is the score
    on the whole corpus seen as unseen text);
    "unseen_share" (5,) and "unseen_share_mean": the share of held-out positions
    whose true token occurs nowhere in that fold's training sentences.  Such a
    token's embedding was never trained and its read-out column was only ever
    pushed down, so nothing learned can name it, though the token query
    still reads its (untrained) embedding.
    Also "seed", "epochs", "queries".  ``progress=True`` shows one tqdm bar
    over the len(FOLDS) * len(queries) trainings (15 by default, about 30 s).
    ``nudge`` is passed to every :func:`train`, to see how much of a result
    survives a perturbation of the size of a rounding difference.
    """
    seed, epochs = _check_seed(seed), _check_epochs(epochs)
    queries, progress = _check_queries(queries), _check_flag(progress, "progress")
    methods = [
        m
        for m in METHODS
        if m in queries
        or m in ("most_frequent", "positional", "cooccurrence")
        or (m == "token_swapped" and "token" in queries)
    ]
    hits = {m: np.zeros(len(FOLDS), dtype=np.int64) for m in methods}
    positions = np.zeros(len(FOLDS), dtype=np.int64)
    unseen = np.zeros(len(FOLDS), dtype=np.int64)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(FOLDS) * len(queries), desc="held-out folds", unit="training")
    for f, fold in enumerate(FOLDS):
        training = [SENTENCES[i] for i in range(len(SENTENCES)) if i not in fold]
        heldout = [SENTENCES[i] for i in fold]
        batch = make_batch(heldout)
        positions[f] = batch.n_predicted
        seen = np.unique(np.concatenate([encode(s) for s in training]))
        unseen[f] = np.count_nonzero(~np.isin(batch.targets, seen))
        frequent = TOKEN_ID[most_frequent_token(training)]
        hits["most_frequent"][f] = np.count_nonzero(batch.targets == frequent)
        guesses = np.concatenate([encode(cooccurrence_guesses(training, s)) for s in heldout])
        hits["cooccurrence"][f] = np.count_nonzero(guesses == batch.targets)
        by_position = np.concatenate(
            [encode(positional_guesses(training, len(s))) for s in heldout]
        )
        hits["positional"][f] = np.count_nonzero(by_position == batch.targets)
        for query in queries:
            params = train(seed, epochs, query, sentences=training, nudge=nudge).params
            hits[query][f] = np.count_nonzero(
                forward(params, batch).probs.argmax(axis=-1) == batch.targets
            )
            if query == "token":
                hits["token_swapped"][f] = np.count_nonzero(_swapped_correct(params, batch, "next"))
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return {
        "seed": seed,
        "epochs": epochs,
        "queries": queries,
        "folds": FOLDS,
        "positions": positions,
        "per_fold": {m: hits[m] / positions for m in methods},
        "mean": {m: float(hits[m].sum() / positions.sum()) for m in methods},
        "unseen_share": unseen / positions,
        "unseen_share_mean": float(unseen.sum() / positions.sum()),
    }


def removal_effects(model, tokens=DISPLAY) -> np.ndarray:
    """(n, n) effect of removing each key on each position's prediction (section 4).

    Entry [i, j] = |p_i(without key j) - p_i|, where p_i is the probability
    the head gives to the true token at position i of ``tokens`` and
    "without key j" means that query i's weight on key j is dropped and the
    weights on its other allowed keys are renormalised to sum to one
    (:func:`attention_measured.attention.drop_each_step` with the sentence's allowed mask).
    Queries, keys and values are those of the full sentence.  The diagonal is
    0: a position never attends to itself, so dropping it changes nothing.
    If j was a position's only allowed key (a 2-token sentence), the read is
    zero and the prediction becomes uniform, 1/V per token.  Section 4,
    "What the memory remembers", sets this next to :func:`attention_weights`:
    the heaviest key is not always the one the prediction depends on.
    """
    params = _params(model)
    batch = make_batch([tokens])
    fwd = forward(params, batch)
    q, k, v = fwd.queries[0], fwd.keys[0], fwd.values[0]  # (n, d) each
    n = len(q)
    scores = q @ k.T / np.sqrt(WIDTH)  # (n, n)
    kept = drop_each_step(scores, batch.allowed[0])  # (n, n, n): [i, j] without key j
    probs = softmax((kept @ v) @ params.W_O)  # (n, n, V)
    rows = np.arange(n)
    without = probs[rows[:, None], rows[None, :], batch.targets[:, None]]  # (n, n)
    full = fwd.probs[rows, batch.targets]  # (n,)
    effects = np.abs(without - full[:, None])
    effects[rows, rows] = 0.0
    return effects
