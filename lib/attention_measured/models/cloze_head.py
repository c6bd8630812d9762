"""One self-attention head trained as an associative memory on the cloze task (Part IV, sections
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

import numpy as np

from ..core import checks
from ..core.attention import (
    drop_each_step,
    scaled_dot_product_attention,
    softmax,
    softmax_backward,
    step_contributions,
)
from ..core.losses import softmax_and_summed_cross_entropy
from ..core.params import Params, initialiser
from ..core.training import Trained
from ..tasks.cloze import DISPLAY, MAX_LEN, SENTENCES, VOCAB, Batch, check_sentences, make_batch
from .protocol import Output, changes

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


def _embedding_slots(targets: np.ndarray) -> np.ndarray:
    """(N d,) the flat indices, in an embedding table (V, d) of width d = WIDTH, of the d
    numbers of each target's row: where backward adds each real token's gradient."""
    return (targets[:, None] * WIDTH + np.arange(WIDTH)).ravel()


class Head:
    """Section 2's head under the book's model protocol (:mod:`.protocol`), as
    :func:`~attention_measured.core.training.fit` trains it (section 3).

    ``query`` is the kind of query it is built with (:data:`QUERIES`), ``sentences`` the token
    lists it is trained on (all sixteen by default).  ``loss_and_grads`` reports the mean loss
    per predicted token, and the gradients of the sentences' summed losses divided by the
    number of sentences, the demo's step.  Its output is a score for every token of the
    vocabulary at every position.
    """

    output_kind = "tokens"
    cannot: dict = {
        "delete": "a sentence's tokens are the head's queries as well as its keys, so deleting "
        "one would move the very position being explained"
    }

    def __init__(self, query: str = "token", sentences=None):
        self.query = check_query(query)
        self.sentences = (
            [list(s) for s in SENTENCES] if sentences is None else check_sentences(sentences)
        )

    def __repr__(self) -> str:
        return f"Head(query={self.query!r}, {len(self.sentences)} sentences)"

    @initialiser
    def init(self, seed: int = 0) -> Params:
        """Initial weights, 0.1 times standard normal draws from RandomState(seed) (section 2).

        Returns a Params: E (V, d) token embeddings; W_Q, W_K, W_V (d, d) query, key and value
        projections; W_O (d, V) read-out to one score per token; and for the "mask" query
        mask_embedding (d,), the one vector every query is made from, for the "position" query
        positions (MAX_LEN, d).  Drawn in the demo's order E, W_Q, W_K, W_V, W_O, so the
        "token" head at seed 0 starts exactly where the demo starts; a variant's extra array is
        drawn last.
        """
        state = np.random.RandomState(checks.seed(seed))

        def draw(*shape):
            return INIT_SCALE * state.randn(*shape)

        V, d = len(VOCAB), WIDTH
        params = Params(
            E=draw(V, d), W_Q=draw(d, d), W_K=draw(d, d), W_V=draw(d, d), W_O=draw(d, V)
        )
        if self.query == "mask":
            params["mask_embedding"] = draw(d)
        elif self.query == "position":
            params["positions"] = draw(MAX_LEN, d)
        return params

    def forward(
        self, params, inputs, *, keep=None, weights=None, scale=None, query_ids=None
    ) -> Output:
        """The head on every sentence of ``inputs`` at once (section 2): a :class:`~.cloze.Batch`
        or a list of sentences (strings or token lists), made into one.

        Q = (X, m or P) W_Q, K = X W_K, Vv = X W_V; A = softmax(Q Kᵀ / sqrt(d)) over the
        allowed keys; Z = A Vv; scores = Z W_O.  The read-out, the costly step (V = 98 scores
        per token), runs on the N real tokens only.  The parameters say which kind of query
        they belong to (:func:`query_kind`).

        Returns an :class:`Output`: the scores (B, L, V), zero in padding rows; the weights A
        (B, L, L); the batch's ``allowed`` as the mask; and as parts the batch, the
        ``embedded`` tokens X, ``queries``, ``keys`` and ``values`` (B, L, d), the ``read`` Z
        (N, d) and the ``probs`` (N, V) of the real tokens, and their summed cross-entropy
        ``loss``, what the backward pass differentiates.

        The changes: ``keep`` (B, L, L) on top of the batch's own rule; ``weights`` (B, L, L)
        in place of A; ``scale`` (B, L), each token's embedding multiplied by it (its query too,
        for the "token" query).  ``query_ids`` (B, L), "token" query only: the queries built
        from E[query_ids] instead, keys, values and targets staying the batch's (section 4's
        query swap, :func:`~.cloze_recall.swapped_top1`).
        """
        return self._pass(params, inputs, keep, weights, scale, query_ids, full=True)

    def _pass(self, params, inputs, keep, weights, scale, query_ids, full: bool) -> Output:
        """:meth:`forward`; with ``full`` False (training) the output is the scores of the N real
        tokens only, (N, V), which the backward pass does not read."""
        checks.params(params, "params", NAMES)
        if not isinstance(inputs, (Batch, list, tuple)):
            raise TypeError(
                f"inputs must be a Batch or a list of sentences (strings or token lists), got "
                f"{inputs!r}"
            )
        batch = inputs if isinstance(inputs, Batch) else make_batch(inputs)
        B, L = batch.ids.shape
        if keep is not None or weights is not None or scale is not None:
            keep, weights, scale = changes(keep, weights, scale, (B, L, L), (B, L))
        x = params.E[batch.ids]  # (B, L, d)
        if scale is not None:
            x = x * scale[..., None]
        names, joined = _projections(params)
        projected = _pieces(x @ joined)  # X W_Q, X W_K, X W_V
        k, v = projected[-2:]
        if query_ids is not None:
            q = params.E[_check_query_ids(params, batch, query_ids)] @ params.W_Q
        elif query_kind(params) == "token":
            q = projected[0]
        else:  # the same m, or P_i, in every sentence
            q = np.broadcast_to(_query_inputs(params, x) @ params.W_Q, x.shape)
        allowed = batch.allowed if keep is None else batch.allowed & keep
        # A = softmax(Q Kᵀ / sqrt(d)), Z = A Vv
        z, a = scaled_dot_product_attention(q, k, v, allowed)
        if weights is not None:
            a = np.array(weights, dtype=float)
            z = a @ v
        z = z.reshape(-1, WIDTH)[batch.real]  # (N, d)
        scores = z @ params.W_O  # (N, V)
        # probs = softmax(scores); the loss from the log-softmax, exact where the probability
        # underflows: -log p, what backward differentiates
        probs, loss = softmax_and_summed_cross_entropy(scores, batch.targets)
        parts = dict(
            batch=batch, embedded=x, queries=q, keys=k, values=v, read=z, probs=probs, loss=loss
        )
        if not full:  # training's pass: the backward pass reads the parts, not every row
            return Output(scores, a, mask=batch.allowed, parts=parts)
        every = np.zeros((B * L, len(VOCAB)))
        every[batch.real] = scores
        return Output(every.reshape(B, L, -1), a, mask=batch.allowed, parts=parts)

    def contributions(self, params, inputs) -> np.ndarray:
        """What each token adds to each position's read, A_it v_t (Part VI, Kobayashi et al.'s
        α f(x)): (B, L, L, d), for the same inputs as :meth:`forward`."""
        out = self.forward(params, inputs)
        return step_contributions(out.weights, out.parts["values"])

    def summed_loss_and_grads(self, params, batch) -> tuple[float, Params]:
        """(the summed cross-entropy over the N predicted tokens of ``batch``, its gradients
        shaped like ``params``) (section 2): what the page checks by finite differences."""
        if not isinstance(batch, Batch):
            raise TypeError(f"batch must be a Batch (from make_batch), got {type(batch).__name__}")
        out = self._pass(params, batch, None, None, None, None, full=False)
        return out.parts["loss"], self._backward(params, out)

    def loss_and_grads(self, params, batch) -> tuple[float, Params]:
        """(the mean loss per predicted token, the gradients of the summed losses divided by the
        number of sentences): one step of the demo's training."""
        loss, grads = self.summed_loss_and_grads(params, batch)
        for g in grads.values():  # fresh arrays: divided where they are
            g /= len(batch)
        return loss / batch.n_predicted, grads

    def _backward(self, params, out: Output) -> Params:
        """Gradient of the summed loss of a batch for every array (section 2).  Read from the
        bottom of :meth:`forward` upwards: each line undoes one forward line.  Padding positions
        receive exactly zero gradient."""
        batch = out.parts["batch"]
        x, read, probs = out.parts["embedded"], out.parts["read"], out.parts["probs"]
        queries, keys, values = (out.parts[name] for name in ("queries", "keys", "values"))
        B, L = batch.ids.shape
        # probs = softmax(scores), loss = -sum log probs[target]: d loss / d scores = probs - 1
        g_scores = probs.copy()
        # [i, targets[i]] for every row i, in the flat table
        g_scores.reshape(-1)[np.arange(batch.n_predicted) * len(VOCAB) + batch.targets] -= 1.0
        # scores = Z W_O
        g_W_O = read.T @ g_scores
        g_read = np.zeros((B * L, WIDTH))
        g_read[batch.real] = g_scores @ params.W_O.T  # padding rows stay 0
        g_read = g_read.reshape(B, L, WIDTH)
        # Z = A Vv
        g_weights = g_read @ values.swapaxes(1, 2)
        g_values = out.weights.swapaxes(1, 2) @ g_read
        # A = softmax(S) over the allowed keys (masked entries have A = 0, hence no gradient)
        g_s = softmax_backward(out.weights, g_weights)
        # S = Q Kᵀ / sqrt(d)
        g_queries = g_s @ keys
        g_queries /= np.sqrt(WIDTH)
        g_keys = g_s.swapaxes(1, 2) @ queries
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
        x_real = x.reshape(B * L, WIDTH)[batch.real]  # (N, d)
        for name, g_w in zip(names, _pieces(x_real.T @ g_projected)):
            grads[name] = g_w
        g_x = g_projected @ joined.T  # (N, d)
        # X = E[ids]: a token that occurs twice adds both positions' gradients into its one row.
        # np.bincount does this scatter-add on the flattened table, one slot per number, adding
        # in order from zero as np.add.at into zeros would, to the same bits
        grads.E = np.bincount(
            _embedding_slots(batch.targets), weights=g_x.ravel(), minlength=params.E.size
        ).reshape(params.E.shape)
        return grads

    def removal_effects(self, params, tokens=DISPLAY) -> tuple[np.ndarray, np.ndarray]:
        """What dropping each key does to each position's prediction, Part I's test (section 4).

        Returns ``(p, p_without)``: p (n,) the probability the head gives to the true token at
        each position of ``tokens`` (one sentence); p_without (n, n), entry [i, j] that
        probability when query i's weight on key j is dropped and the weights on its other
        allowed keys are renormalised to sum to one (:func:`~.attention.drop_each_step` with the
        sentence's allowed mask).  Queries, keys and values are those of the full sentence.  A
        position never attends to itself, so p_without[i, i] = p[i].  If j was a position's only
        allowed key (a 2-token sentence), the read is zero and the prediction becomes uniform,
        1/V per token.  The heaviest key is not always the one the prediction depends on.
        """
        batch = make_batch([tokens])
        out = self.forward(params, batch)
        q, k, v = (out.parts[name][0] for name in ("queries", "keys", "values"))  # (n, d) each
        n = len(q)
        scores = q @ k.T / np.sqrt(WIDTH)  # (n, n)
        kept = drop_each_step(scores, batch.allowed[0])  # (n, n, n): [i, j] without key j
        probs = softmax((kept @ v) @ params.W_O)  # (n, n, V)
        rows = np.arange(n)
        p = out.parts["probs"][rows, batch.targets]  # (n,)
        p_without = probs[rows[:, None], rows[None, :], batch.targets[:, None]]  # (n, n)
        p_without[rows, rows] = p
        return p, p_without


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
    return Head().forward(head_params(model), [tokens]).weights[0]


def predict(model, tokens) -> np.ndarray:
    """(n, V) probabilities of every vocabulary token at each position of one sentence (section
    4)."""
    return Head().forward(head_params(model), [tokens]).parts["probs"]
