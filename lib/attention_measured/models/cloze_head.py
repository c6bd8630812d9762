"""One self-attention head trained as an associative memory on the cloze task (Part II, sections
2 and 4).

Q = (E[x], m or P) W_Q, K = E[x] W_K, V = E[x] W_V; A = softmax(Q Kᵀ / sqrt(d)) over the other
real tokens of the sentence; the scores of the vocabulary are A V W_O.  Three kinds of query
(:data:`QUERIES`): ``"token"``, built from the very token to be named (the demo's head);
``"mask"``, one learned vector for every position, which cannot see the token; ``"position"``,
a learned vector per position.  :func:`forward` and :func:`backward` pair each line with the line
it undoes; :class:`Head` is the model :func:`~attention_measured.core.training.fit` trains.

Shapes: V = 98 tokens, d = 24, B sentences padded to L tokens, N real tokens in all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import checks
from ..core.attention import drop_each_step, scaled_dot_product_attention, softmax, softmax_backward
from ..core.losses import softmax_and_summed_cross_entropy
from ..core.params import Params, initialiser
from ..core.training import Trained
from ..tasks.cloze import DISPLAY, MAX_LEN, SENTENCES, VOCAB, Batch, check_sentences, make_batch

WIDTH = 24  # d: embedding, query, key and value size


INIT_SCALE = 0.1  # every initial weight is 0.1 * a standard normal draw


QUERIES = ("token", "mask", "position")


def check_query(query) -> str:
    """``query`` if it is one of :data:`QUERIES` (section 4 compares them), else an error
    listing them.
    """
    return checks.choice(query, "query", QUERIES)


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
    batch; section 4's query swap (:func:`~.cloze_recall.swapped_top1`) uses this.  Training
    never does.

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


def _embedding_slots(targets: np.ndarray) -> np.ndarray:
    """(N d,) the flat indices, in an embedding table (V, d) of width d = WIDTH, of the d
    numbers of each target's row: where backward adds each real token's gradient."""
    return (targets[:, None] * WIDTH + np.arange(WIDTH)).ravel()


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
    # [i, targets[i]] for every row i, in the flat table
    g_scores.reshape(-1)[np.arange(batch.n_predicted) * len(VOCAB) + batch.targets] -= 1.0
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
        _embedding_slots(batch.targets), weights=g_x.ravel(), minlength=params.E.size
    ).reshape(params.E.shape)
    return grads


def loss_and_gradients(params: Params, batch: Batch) -> tuple[float, Params]:
    """(summed loss over the N predicted tokens, its gradients shaped like ``params``) (section
    2)."""
    fwd = forward(params, batch)
    return fwd.loss, backward(params, batch, fwd)


class Head:
    """Section 2's head as :func:`attention_measured.core.training.fit` trains it (section 3): its
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


def predict(model, tokens) -> np.ndarray:
    """(n, V) probabilities of every vocabulary token at each position of one sentence (section
    4)."""
    batch = make_batch([tokens])
    return forward(head_params(model), batch).probs


def removal_effects(model, tokens=DISPLAY) -> tuple[np.ndarray, np.ndarray]:
    """What dropping each key does to each position's prediction, Part I's test (section 4).

    Returns ``(p, p_without)``: p (n,) the probability the head gives to the true token at each
    position of ``tokens``; p_without (n, n), entry [i, j] that probability when query i's
    weight on key j is dropped and the weights on its other allowed keys are renormalised to sum
    to one (:func:`attention_measured.core.attention.drop_each_step` with the sentence's allowed
    mask).  Queries, keys and values are those of the full sentence. A position never attends to
    itself, so p_without[i, i] = p[i].  If j was a position's only allowed key (a 2-token
    sentence), the read is zero and the prediction becomes uniform, 1/V per token.
    :func:`attention_measured.measures.removal.effects` turns the pair into removal effects, which
    section 4 sets next to the weights: the heaviest key is not always the one the prediction
    depends on.
    """
    params = head_params(model)
    batch = make_batch([tokens])
    fwd = forward(params, batch)
    q, k, v = fwd.queries[0], fwd.keys[0], fwd.values[0]  # (n, d) each
    n = len(q)
    scores = q @ k.T / np.sqrt(WIDTH)  # (n, n)
    kept = drop_each_step(scores, batch.allowed[0])  # (n, n, n): [i, j] without key j
    probs = softmax((kept @ v) @ params.W_O)  # (n, n, V)
    rows = np.arange(n)
    p = fwd.probs[rows, batch.targets]  # (n,)
    p_without = probs[rows[:, None], rows[None, :], batch.targets[:, None]]  # (n, n)
    p_without[rows, rows] = p
    return p, p_without
