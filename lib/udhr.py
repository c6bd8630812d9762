"""Part II: a single self-attention head, trained by hand as an associative memory.

Section 1, "The corpus and its tokens": :data:`CORPUS`, :func:`tokenize`,
:data:`SENTENCES`, :data:`VOCAB`, :data:`DISPLAY` and :func:`encode`.
Section 2, "One head, by hand": :class:`Params`, :func:`init_params`,
:func:`make_batch`, :func:`forward` and :func:`backward`, every backward line
paired with the forward line it undoes.
Section 3, "Training and the heat map": :class:`Adam`, :func:`train`,
:func:`attention_weights`, :func:`loss_csv_rows` and :func:`write_csvs`.
Section 4, "What the memory remembers": :func:`predict` and
:func:`top1_accuracy`, on the training sentences or on held-out ones.

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
from .attention import softmax, softmax_backward

# --------------------------------------------------------------- section 1
# Thirteen articles of the Universal Declaration of Human Rights (UN General
# Assembly resolution 217 A, 1948; public domain), one sentence or clause a line.
CORPUS = """
All human beings are born free and equal in dignity and rights.
They are endowed with reason and conscience and should act towards one another in a spirit of brotherhood.
Everyone has the right to life, liberty and security of person.
No one shall be held in slavery or servitude.
Slavery and the slave trade shall be prohibited in all their forms.
No one shall be subjected to torture or to cruel, inhuman or degrading treatment or punishment.
Everyone has the right to recognition everywhere as a person before the law.
All are equal before the law and are entitled without any discrimination to equal protection of the law.
No one shall be subjected to arbitrary arrest, detention or exile.
Everyone has the right to freedom of movement and residence within the borders of each state.
Everyone has the right to own property alone as well as in association with others.
No one shall be arbitrarily deprived of his property.
Everyone has the right to freedom of thought, conscience and religion.
Everyone has the right to freedom of opinion and expression.
Everyone has the right to rest and leisure, including reasonable limitation of working hours and periodic holidays with pay.
Everyone has the right to education.
"""

WIDTH = 24                  # d: embedding, query, key and value size
INIT_SCALE = 0.1            # every initial weight is 0.1 * a standard normal draw
LEARNING_RATE = 0.02
BETA1, BETA2, EPSILON = 0.9, 0.999, 1e-8
EPOCHS = 4000
LOG_FLOOR = 1e-12           # added to a probability before its log
CSV_EVERY = 20              # the loss CSV keeps iteration 1 and every 20th
QUERIES = ("token", "mask", "position")


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
MAX_LEN = max(len(tokens) for tokens in SENTENCES)   # rows of the "position" query table


def _tokens(sentence_or_tokens) -> list[str]:
    if isinstance(sentence_or_tokens, str):
        return tokenize(sentence_or_tokens)
    if isinstance(sentence_or_tokens, np.ndarray) or not hasattr(sentence_or_tokens, "__iter__"):
        raise ValueError(f"expected a sentence (str) or a list of tokens, got {sentence_or_tokens!r}")
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
        raise ValueError(f"not in the vocabulary: {words}. The head only knows the {len(VOCAB)} tokens "
                         f"of the corpus; see lib.udhr.VOCAB for the list")
    if len(tokens) < 2:
        raise ValueError(f"a sentence needs at least two tokens, got {tokens!r}: a token may not attend "
                         f"to itself, so a single token would have nothing to attend to")
    return [TOKEN_ID[t] for t in tokens]


def decode(ids) -> list[str]:
    """The tokens of a sequence of ids (section 1)."""
    return [VOCAB[int(i)] for i in ids]


# --------------------------------------------------------------- checking
def check_query(query) -> str:
    """``query`` if it is one of :data:`QUERIES`, else ValueError listing them."""
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


def _check_sentences(sentences) -> list[list[str]]:
    if isinstance(sentences, str) or not hasattr(sentences, "__iter__"):
        raise ValueError(f"sentences must be a list of token lists, got {sentences!r}")
    token_lists = [_tokens(s) for s in sentences]
    if not token_lists:
        raise ValueError("sentences must hold at least one sentence")
    for tokens in token_lists:
        encode(tokens)                       # vocabulary and length checks
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

    def copy(self) -> "Params":
        return Params(**{name: a.copy() for name, a in self.arrays().items()})


def init_params(seed: int = 0, query: str = "token") -> Params:
    """Initial weights, 0.1 times standard normal draws from RandomState(seed) (section 2).

    Drawn in the demo's order E, W_Q, W_K, W_V, W_O, so query="token" at seed 0
    starts exactly where the demo starts; a variant's extra array is drawn
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
    """Sentences padded to a common length L (section 2).

    ids: (B, L) token ids, 0 in padding;  valid: (B, L) True on real tokens;
    allowed: (B, L, L), True where query i may attend to key j: both are real
    tokens and j != i.  Padding rows are all False, so they get zero weights.
    """
    ids: np.ndarray
    valid: np.ndarray
    allowed: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_predicted(self) -> int:
        """The number of positions with a target: every real token."""
        return int(self.valid.sum())


def make_batch(sentences) -> Batch:
    """A :class:`Batch` of B sentences (strings or token lists), each checked by :func:`encode`."""
    id_lists = [encode(s) for s in sentences]
    if not id_lists:
        raise ValueError("a batch needs at least one sentence")
    lengths = np.array([len(ids) for ids in id_lists])
    longest = int(lengths.max())
    valid = np.arange(longest) < lengths[:, None]
    ids = np.zeros(valid.shape, dtype=np.intp)
    ids[valid] = np.concatenate(id_lists)
    allowed = valid[:, :, None] & valid[:, None, :] & ~np.eye(longest, dtype=bool)
    return Batch(ids, valid, allowed)


@dataclass
class Forward:
    """What a forward pass keeps for the backward pass (section 2); shapes for a batch."""
    embedded: np.ndarray   # (B, L, d)  X = E[ids]
    queries: np.ndarray    # (B, L, d)
    keys: np.ndarray       # (B, L, d)
    values: np.ndarray     # (B, L, d)
    weights: np.ndarray    # (B, L, L)  the attention matrix, rows sum to 1 on real tokens
    read: np.ndarray       # (B, L, d)  Z = weights @ values
    probs: np.ndarray      # (B, L, V)  softmax of the read-out scores
    loss: float            # -log(prob of the true token + 1e-12), summed over real tokens


def _query_inputs(params: Params, batch: Batch) -> np.ndarray:
    """What W_Q multiplies, (B, L, d) or broadcastable to it: X, m or P[:L]."""
    length = batch.ids.shape[1]
    if params.mask_embedding is not None:
        return params.mask_embedding[None, None, :]
    if params.positions is not None:
        if length > len(params.positions):
            raise ValueError(f"the position query knows {len(params.positions)} positions, "
                             f"got a sentence of {length} tokens")
        return params.positions[None, :length, :]
    return params.E[batch.ids]


def forward(params: Params, batch: Batch) -> Forward:
    """The head on every sentence of ``batch`` at once (section 2).

    Q = (X, m or P) W_Q, K = X W_K, Vv = X W_V, A = softmax(Q Kᵀ / sqrt(d))
    over the allowed keys, Z = A Vv, probabilities = softmax(Z W_O).
    """
    shape = batch.ids.shape + (WIDTH,)
    x = params.E[batch.ids]                                            # (B, L, d)
    q = np.broadcast_to(_query_inputs(params, batch) @ params.W_Q, shape)
    k = x @ params.W_K
    v = x @ params.W_V
    a = softmax(q @ k.swapaxes(1, 2) / np.sqrt(WIDTH), batch.allowed)  # (B, L, L)
    z = a @ v
    probs = softmax(z @ params.W_O)                                    # (B, L, V)
    p_true = np.take_along_axis(probs, batch.ids[..., None], axis=-1)[..., 0]
    loss = float(-np.log(p_true[batch.valid] + LOG_FLOOR).sum())
    return Forward(x, q, k, v, a, z, probs, loss)


def backward(params: Params, batch: Batch, fwd: Forward) -> Params:
    """Gradient of ``fwd.loss`` (the summed loss of the batch) for every array (section 2).

    Returns a Params of gradients shaped like ``params``.  Read from the
    bottom of :func:`forward` upwards: each line undoes one forward line.
    Padding positions receive exactly zero gradient.
    """
    B, L = batch.ids.shape
    flat = lambda t: t.reshape(B * L, -1)  # noqa: E731  (stack the sentences for one matrix product)
    # probs = softmax(scores), loss = -sum log probs[true]: d loss / d scores = probs - onehot
    g_scores = fwd.probs * batch.valid[..., None]                     # padding predicts nothing
    g_scores[batch.valid, batch.ids[batch.valid]] -= 1.0
    # scores = Z W_O
    g_W_O = flat(fwd.read).T @ flat(g_scores)
    g_read = g_scores @ params.W_O.T
    # Z = A Vv
    g_weights = g_read @ fwd.values.swapaxes(1, 2)
    g_values = fwd.weights.swapaxes(1, 2) @ g_read
    # A = softmax(S) over the allowed keys (masked entries have A = 0, hence no gradient)
    g_s = softmax_backward(fwd.weights, g_weights)
    # S = Q Kᵀ / sqrt(d)
    g_queries = g_s @ fwd.keys / np.sqrt(WIDTH)
    g_keys = g_s.swapaxes(1, 2) @ fwd.queries / np.sqrt(WIDTH)
    # K = X W_K and Vv = X W_V
    g_W_K = flat(fwd.embedded).T @ flat(g_keys)
    g_W_V = flat(fwd.embedded).T @ flat(g_values)
    g_x = g_keys @ params.W_K.T + g_values @ params.W_V.T
    grads = Params(E=np.zeros_like(params.E), W_Q=None, W_K=g_W_K, W_V=g_W_V, W_O=g_W_O)
    # Q = (X, m or P) W_Q
    if params.mask_embedding is not None:               # the same m at every position
        g_q_total = g_queries.sum(axis=(0, 1))
        grads.W_Q = np.outer(params.mask_embedding, g_q_total)
        grads.mask_embedding = params.W_Q @ g_q_total
    elif params.positions is not None:                  # position i of every sentence shares P[i]
        g_q_per_position = g_queries.sum(axis=0)
        grads.W_Q = params.positions[:L].T @ g_q_per_position
        grads.positions = np.zeros_like(params.positions)
        grads.positions[:L] = g_q_per_position @ params.W_Q.T
    else:                                               # the token's own embedding
        grads.W_Q = flat(fwd.embedded).T @ flat(g_queries)
        g_x = g_x + g_queries @ params.W_Q.T
    # X = E[ids]: a repeated token adds the gradients of all its positions into one row
    np.add.at(grads.E, batch.ids[batch.valid], g_x[batch.valid])
    return grads


def loss_and_gradients(params: Params, batch: Batch) -> tuple[float, Params]:
    """(summed loss, its gradients) for ``batch`` (section 2)."""
    fwd = forward(params, batch)
    return fwd.loss, backward(params, batch, fwd)


# --------------------------------------------------------------- section 3
class Adam:
    """The demo's optimiser: lr 0.02, betas 0.9 and 0.999, eps 1e-8 (section 3).

    Keeps a first and second moment per array; :meth:`step` updates
    ``params`` in place with bias correction for the 1-based iteration count.
    """

    def __init__(self, params: Params, learning_rate: float = LEARNING_RATE,
                 beta1: float = BETA1, beta2: float = BETA2, epsilon: float = EPSILON):
        self.learning_rate, self.beta1, self.beta2, self.epsilon = learning_rate, beta1, beta2, epsilon
        self.first = {name: np.zeros_like(a) for name, a in params.arrays().items()}
        self.second = {name: np.zeros_like(a) for name, a in params.arrays().items()}
        self.iteration = 0

    def step(self, params: Params, grads: Params, n_sentences: int = 1) -> None:
        """One update with gradient grads / n_sentences (the demo averages over sentences)."""
        self.iteration += 1
        b1, b2 = self.beta1, self.beta2
        for name, array in params.arrays().items():
            g = getattr(grads, name) / n_sentences
            self.first[name] = b1 * self.first[name] + (1 - b1) * g
            self.second[name] = b2 * self.second[name] + (1 - b2) * (g * g)
            first_hat = self.first[name] / (1 - b1 ** self.iteration)
            second_hat = self.second[name] / (1 - b2 ** self.iteration)
            array -= self.learning_rate * first_hat / (np.sqrt(second_hat) + self.epsilon)


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


def train(seed: int = 0, epochs: int = EPOCHS, query: str = "token", sentences=None,
          progress: bool = False) -> TrainingResult:
    """Full-batch Adam on the cloze loss, every sentence in every iteration (section 3).

    ``sentences=None`` trains on all 16 :data:`SENTENCES`; otherwise a list of
    token lists (or strings) from the vocabulary, e.g. a training fold.  Each
    iteration sums the gradients of all sentences' summed losses and divides
    by the number of sentences before the Adam step, as the demo does.
    ``progress=True`` shows a tqdm bar.
    """
    seed, epochs, query = _check_seed(seed), _check_epochs(epochs), check_query(query)
    token_lists = [list(s) for s in SENTENCES] if sentences is None else _check_sentences(sentences)
    batch = make_batch(token_lists)
    params = init_params(seed, query)
    if params.positions is not None and batch.ids.shape[1] > MAX_LEN:
        raise ValueError(f"the position query knows {MAX_LEN} positions, got a sentence of {batch.ids.shape[1]} tokens")
    adam = Adam(params)
    curve = np.empty(epochs)
    iterations = range(epochs)
    if progress:
        from tqdm.auto import tqdm
        iterations = tqdm(iterations, desc=f"training ({query} query)", unit="it")
    for t in iterations:
        loss, grads = loss_and_gradients(params, batch)
        curve[t] = loss / batch.n_predicted
        adam.step(params, grads, len(batch))
    return TrainingResult(curve, params, query, seed, token_lists)


def _params(model) -> Params:
    if isinstance(model, TrainingResult):
        return model.params
    if isinstance(model, Params):
        return model
    raise ValueError(f"expected a TrainingResult (from train) or Params, got {type(model).__name__}")


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
    return [(i, float(curve[i - 1])) for i in range(1, len(curve) + 1) if i == 1 or i % CSV_EVERY == 0]


def write_csvs(result: TrainingResult, directory=".") -> tuple[Path, Path]:
    """Write attention_loss.csv (iter,loss) and attention_weights.csv (q,k,w) (section 3).

    The weights are the :data:`DISPLAY` sentence's matrix in long form, one
    row per (query, key) cell.  Every number is written as %.6f, headers
    without a comment sign, as the demo writes them.  Returns the two paths.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    weights = attention_weights(result, DISPLAY)
    cells = [(q, k, weights[q, k]) for q in range(weights.shape[0]) for k in range(weights.shape[1])]
    paths = folder / "attention_loss.csv", folder / "attention_weights.csv"
    for path, header, rows in zip(paths, ("iter,loss", "q,k,w"), (loss_csv_rows(result.loss_curve), cells)):
        np.savetxt(path, np.array(rows, dtype=float), delimiter=",", header=header, comments="", fmt="%.6f")
    return paths


# --------------------------------------------------------------- section 4
def predict(model, tokens) -> np.ndarray:
    """(n, V) probabilities of every vocabulary token at each position of one sentence (section 4)."""
    batch = make_batch([tokens])
    return forward(_params(model), batch).probs[0]


def top1_accuracy(model, sentences=None) -> float:
    """Share of positions whose most probable token is the true one (section 4).

    ``sentences``: token lists or strings from the vocabulary, held-out ones
    included; None means the sentences a TrainingResult was trained on.
    """
    if sentences is None:
        if not isinstance(model, TrainingResult):
            raise ValueError("give the sentences to score, or a TrainingResult that remembers its own")
        sentences = model.sentences
    batch = make_batch(_check_sentences(sentences))
    guesses = forward(_params(model), batch).probs.argmax(axis=-1)
    return float(np.mean(guesses[batch.valid] == batch.ids[batch.valid]))
