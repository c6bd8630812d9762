"""Part V: the flavours of attention, each implemented once behind one interface.

Every flavour turns hidden states into weights in the same three stages:

    scores  e = score(h, s)        (N, n, m)   one score per query and step
    weights a = weigh(e)           (N, n, m)   softmax, or a local window
    context c = a h                (N, n, D)   a weighted sum of the steps

h: (N, m, D) hidden states ("keys", which are also the values here); s: (N, n, S) queries, or
None for the flavours that need none;  N examples, m steps, n queries per example (1 for a
classifier, one per output position for the alignment task).  :func:`attend` runs the three
stages and
:func:`attend_backward` undoes them; every flavour has ``scores`` and
``scores_backward``, and a finite-difference test proves each.

Flavours (section of Part V that explains each):

- :class:`MeanPooling`    constant scores, the baseline (section 1)
- :class:`FeedForward`    Raffel & Ellis 2015, e = tanh(w·h + b) (section 1)
- :class:`ContextVector`  Yang et al. 2016, e = u_w·tanh(W h + b) (section 2)
- :class:`Additive`       Bahdanau et al. 2015, e = v·tanh(W s + U h) (section 3)
- :class:`Dot`, :class:`General`, :class:`Concat`, :class:`Location`
                          Luong et al. 2015 (section 3)
- :class:`LocalM`, :class:`LocalP`  Luong's local windows (section 3)
- hard attention trained by REINFORCE: :func:`sample_steps`,
  :func:`reinforce_scores_gradient` (section 3)

Models built from them (:class:`Reader`, :class:`Hierarchical`,
:class:`Aligner`), their tasks, training (:func:`fit`) and measures live in
:mod:`attention_measured.models.reader`.
"""

from __future__ import annotations

import re
import weakref

import numpy as np

from ..core import checks
from ..core.attention import softmax, softmax_backward
from ..core.losses import sigmoid
from ..core.params import Params, fan_in_normal, initialiser


def _check_states(h, s, needs_query: bool, name: str, flavour=None, p=None):
    h = checks.array(h, "h", copy=False)
    if h.ndim != 3:
        raise ValueError(f"hidden states must have shape (N, m, D), got {h.shape}")
    if needs_query:
        if s is None:
            raise ValueError(f"the {name} flavour needs queries s of shape (N, n, S)")
        s = checks.array(s, "s", copy=False)
        if s.ndim != 3 or s.shape[0] != h.shape[0]:
            raise ValueError(
                f"queries must have shape (N, n, S) with N = {h.shape[0]}, got {s.shape}"
            )
    elif s is not None:  # read by no score of this flavour, but still an array
        s = checks.array(s, "s", copy=False)
    if flavour is not None:
        checks.params(p, "p", flavour.names)
    return h, s


def _prefix(prefix) -> str:
    """A flavour's prefix for the names of its arrays: letters, digits and underscores."""
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be text, such as 'add_', got {prefix!r}")
    if not re.fullmatch(r"\w*", prefix):
        raise ValueError(f"prefix must hold letters, digits and underscores only, got {prefix!r}")
    return prefix


def _sizes(rng, key_size, query_size, steps) -> tuple[int, int, int]:
    """The checked arguments of every flavour's ``init``: a RandomState and three sizes."""
    checks.random_state(rng)
    return (
        checks.integer(key_size, "key_size", 1),
        checks.integer(query_size, "query_size", 0),
        checks.integer(steps, "steps", 0),
    )


_NAMES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class Flavour:
    """A score function: ``scores(p, h, s) -> (e, cache)``.

    ``init(rng, key_size, query_size, steps)`` draws the flavour's own parameters, named with
    ``prefix`` so that two flavours can share one :class:`Params`.  :func:`attend` runs it; the
    private ``_weigh`` turns scores into weights (softmax unless the flavour is local), and
    ``_scores_backward`` and ``_weigh_backward`` are the backward passes :func:`attend_backward`
    and :func:`scores_backward` take.
    """

    name = "flavour"
    needs_query = False
    prefix = ""
    windowed = False  # True for the local flavours, whose weights are not a plain softmax

    def key(self, name: str) -> str:
        """``name`` with this flavour's prefix: the key of one of its arrays in a Params."""
        if not isinstance(name, str):
            raise TypeError(f"name must be text, got {name!r}")
        return self.prefix + name

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the arrays this flavour draws (its scores read them from ``p``)."""
        # kept beside the flavour, not on it: a flavour's pickle keys the cache of its trainings
        if self not in _NAMES:
            _NAMES[self] = tuple(self.init(np.random.RandomState(0), 1, 1, 1))
        return _NAMES[self]

    sized_by_steps = False  # True where a parameter is sized by the number of steps

    @initialiser
    def init(self, rng, key_size: int, query_size: int = 0, steps: int = 0) -> Params:
        _sizes(rng, key_size, query_size, steps)
        return Params({})

    def scores(self, p, h, s):
        """(Scores e (N, n, m), what the backward pass needs) for hidden states h (N, m, D) and
        queries s (N, n, S) or None: the flavour's score function, its arguments checked."""
        checks.params(p, "p", self.names)
        h, s = _check_states(h, s, self.needs_query, self.name)
        return self._scores(p, h, s)

    def _scores(self, p, h, s):
        raise NotImplementedError

    def _scores_backward(self, p, h, s, cache, grad_scores):
        """Returns (gradients of this flavour's parameters, grad_h (N, m, D), grad_s (N, n, S)
        or None) from grad_scores (N, n, m)."""
        raise NotImplementedError

    def _weigh(self, p, scores, s, mask):
        """Weights (N, n, m) and what the backward pass needs."""
        return softmax(scores, mask), None

    def _weigh_backward(self, p, scores, s, weights, cache, grad_weights):
        """Returns (gradients of parameters, grad_scores, grad_s or None)."""
        return {}, softmax_backward(weights, grad_weights), None

    def __repr__(self) -> str:
        return f"<flavour {self.name}>"


class MeanPooling(Flavour):
    """Every score 0, so every weight 1/m: the average of the steps, a baseline (section 1)."""

    name = "mean pooling"

    def _scores(self, p, h, s):
        h, _ = _check_states(h, s, False, self.name, self, p)
        return np.zeros((h.shape[0], 1, h.shape[1])), None

    def _scores_backward(self, p, h, s, cache, grad_scores):
        return {}, np.zeros(np.shape(h)), None


class FeedForward(Flavour):
    """Raffel & Ellis (2015): e_t = tanh(w · h_t + b), with no query (section 1).

    Parameters w: (D,) and b: () -- or b: (m,), one bias per position, when ``per_position``
    (the bias shape of the article's six-line layer, whose pitfall section 1 measures).  Scores
    lie in (-1, 1).
    """

    def __init__(self, per_position: bool = False, prefix: str = "ff_"):
        self.per_position, self.prefix = checks.flag(per_position, "per_position"), _prefix(prefix)
        self.name = "feed-forward, bias per position" if per_position else "feed-forward"

    @property
    def sized_by_steps(self) -> bool:  # a property: the pickle that keys the cache stays
        return self.per_position

    @initialiser
    def init(self, rng, key_size, query_size=0, steps=0):
        key_size, query_size, steps = _sizes(rng, key_size, query_size, steps)
        if self.per_position and steps < 1:
            raise ValueError("a per-position bias needs the number of steps")
        return Params(
            {
                self.key("w"): fan_in_normal(rng, key_size),
                self.key("b"): np.zeros(steps if self.per_position else ()),
            }
        )

    def _scores(self, p, h, s):
        h, _ = _check_states(h, s, False, self.name, self, p)
        b = p[self.key("b")]
        if self.per_position and np.shape(b) != (h.shape[1],):
            raise ValueError(
                f"this layer was built for {np.size(b)} steps; the input has {h.shape[1]}"
            )
        e = np.tanh(h @ p[self.key("w")] + b)  # (N, m)
        return e[:, None, :], e

    def _scores_backward(self, p, h, s, e, grad_scores):
        grad_pre = grad_scores.sum(axis=1) * (1 - e * e)  # (N, m)
        grads = {
            self.key("w"): np.einsum("nm,nmd->d", grad_pre, h),
            self.key("b"): grad_pre.sum(axis=0) if self.per_position else grad_pre.sum(),
        }
        w = p[self.key("w")]
        return grads, grad_pre[..., None] * w, None


class ContextVector(Flavour):
    """Yang et al. (2016): u_t = tanh(W h_t + b), e_t = u_w · u_t (section 2).

    Parameters W: (A, D), b: (A,), u_w: (A,), the learned context vector.
    """

    name = "context vector"

    def __init__(self, units: int = 8, prefix: str = "ctx_"):
        self.units, self.prefix = checks.integer(units, "units", 1), _prefix(prefix)

    @initialiser
    def init(self, rng, key_size, query_size=0, steps=0):
        key_size, query_size, steps = _sizes(rng, key_size, query_size, steps)
        return Params(
            {
                self.key("W"): fan_in_normal(rng, self.units, key_size),
                self.key("b"): np.zeros(self.units),
                self.key("u"): fan_in_normal(rng, self.units),
            }
        )

    def _scores(self, p, h, s):
        h, _ = _check_states(h, s, False, self.name, self, p)
        u = np.tanh(h @ p[self.key("W")].T + p[self.key("b")])  # (N, m, A)
        return (u @ p[self.key("u")])[:, None, :], u

    def _scores_backward(self, p, h, s, u, grad_scores):
        g = grad_scores.sum(axis=1)  # (N, m)
        grad_u_w = np.einsum("nm,nma->a", g, u)
        grad_pre = g[..., None] * p[self.key("u")] * (1 - u * u)  # (N, m, A)
        grads = {
            self.key("W"): np.einsum("nma,nmd->ad", grad_pre, h),
            self.key("b"): grad_pre.sum(axis=(0, 1)),
            self.key("u"): grad_u_w,
        }
        return grads, grad_pre @ p[self.key("W")], None


class Additive(Flavour):
    """Bahdanau et al. (2015): e_ij = v · tanh(W s_i + U h_j) (section 3).

    Parameters W: (A, S), U: (A, D), v: (A,).
    """

    name = "additive"
    needs_query = True

    def __init__(self, units: int = 8, prefix: str = "add_"):
        self.units, self.prefix = checks.integer(units, "units", 1), _prefix(prefix)

    @initialiser
    def init(self, rng, key_size, query_size=0, steps=0):
        key_size, query_size, steps = _sizes(rng, key_size, query_size, steps)
        return Params(
            {
                self.key("W"): fan_in_normal(rng, self.units, query_size),
                self.key("U"): fan_in_normal(rng, self.units, key_size),
                self.key("v"): fan_in_normal(rng, self.units),
            }
        )

    def _scores(self, p, h, s):
        h, s = _check_states(h, s, True, self.name, self, p)
        from_query = s @ p[self.key("W")].T  # (N, n, A)
        from_keys = h @ p[self.key("U")].T  # (N, m, A)
        hidden = np.tanh(from_query[:, :, None, :] + from_keys[:, None, :, :])  # (N, n, m, A)
        return hidden @ p[self.key("v")], hidden  # (N, n, m), (N, n, m, A)

    def _scores_backward(self, p, h, s, hidden, grad_scores):
        grad_v = np.einsum("nij,nija->a", grad_scores, hidden)
        grad_pre = (1 - hidden * hidden) * (grad_scores[..., None] * p[self.key("v")])
        from_query = grad_pre.sum(axis=2)  # (N, n, A)
        from_keys = grad_pre.sum(axis=1)  # (N, m, A)
        grads = {
            self.key("W"): np.einsum("nia,nis->as", from_query, s),
            self.key("U"): np.einsum("nja,njd->ad", from_keys, h),
            self.key("v"): grad_v,
        }
        return grads, from_keys @ p[self.key("U")], from_query @ p[self.key("W")]


class Dot(Flavour):
    """Luong et al. (2015), "dot": e_ij = s_i · h_j; queries and keys of one size (section 3)."""

    name = "dot"
    needs_query = True

    @initialiser
    def init(self, rng, key_size, query_size=0, steps=0):
        key_size, query_size, steps = _sizes(rng, key_size, query_size, steps)
        if query_size != key_size:
            raise ValueError(
                f"dot scores need queries and keys of one size, got {query_size} and {key_size}"
            )
        return Params({})

    def _scores(self, p, h, s):
        h, s = _check_states(h, s, True, self.name, self, p)
        if s.shape[-1] != h.shape[-1]:
            raise ValueError(
                f"dot scores need queries and keys of one size, got {s.shape[-1]} and {h.shape[-1]}"
            )
        return s @ np.swapaxes(h, 1, 2), None

    def _scores_backward(self, p, h, s, cache, grad_scores):
        return {}, np.swapaxes(grad_scores, 1, 2) @ s, grad_scores @ h


class General(Flavour):
    """Luong et al. (2015), "general": e_ij = s_i · W h_j with W: (S, D) (section 3)."""

    name = "general"
    needs_query = True

    def __init__(self, prefix: str = "gen_"):
        self.prefix = _prefix(prefix)

    @initialiser
    def init(self, rng, key_size, query_size=0, steps=0):
        key_size, query_size, steps = _sizes(rng, key_size, query_size, steps)
        return Params({self.key("W"): fan_in_normal(rng, query_size, key_size)})

    def _scores(self, p, h, s):
        h, s = _check_states(h, s, True, self.name, self, p)
        projected = h @ p[self.key("W")].T  # (N, m, S)
        return s @ np.swapaxes(projected, 1, 2), projected  # (N, n, m)

    def _scores_backward(self, p, h, s, projected, grad_scores):
        grad_projected = np.swapaxes(grad_scores, 1, 2) @ s  # (N, m, S)
        grads = {self.key("W"): np.einsum("nms,nmd->sd", grad_projected, h)}
        return grads, grad_projected @ p[self.key("W")], grad_scores @ projected


class Concat(Flavour):
    """Luong et al. (2015), "concat": e_ij = v · tanh(W_a [s_i; h_j]) (section 3).

    W_a: (A, S + D), v: (A,).  Splitting W_a = [W U] shows that this is Bahdanau's additive
    score, so it is computed by :class:`Additive`.
    """

    name = "concat"
    needs_query = True

    def __init__(self, units: int = 8, prefix: str = "cat_"):
        self.units, self.prefix = checks.integer(units, "units", 1), _prefix(prefix)
        self._additive = Additive(units, prefix="")

    def _split(self, p, query_size: int) -> dict:
        W = p[self.key("W")]
        return {"W": W[:, :query_size], "U": W[:, query_size:], "v": p[self.key("v")]}

    @initialiser
    def init(self, rng, key_size, query_size=0, steps=0):
        key_size, query_size, steps = _sizes(rng, key_size, query_size, steps)
        return Params(
            {
                self.key("W"): fan_in_normal(rng, self.units, query_size + key_size),
                self.key("v"): fan_in_normal(rng, self.units),
            }
        )

    def _scores(self, p, h, s):
        h, s = _check_states(h, s, True, self.name, self, p)
        if p[self.key("W")].shape[1] != s.shape[-1] + h.shape[-1]:
            raise ValueError(
                f"W_a has {p[self.key('W')].shape[1]} columns; [s; h] has "
                f"{s.shape[-1] + h.shape[-1]}"
            )
        return self._additive._scores(self._split(p, s.shape[-1]), h, s)

    def _scores_backward(self, p, h, s, cache, grad_scores):
        grads, grad_h, grad_s = self._additive._scores_backward(
            self._split(p, s.shape[-1]), h, s, cache, grad_scores
        )
        return (
            {
                self.key("W"): np.concatenate([grads["W"], grads["U"]], axis=1),
                self.key("v"): grads["v"],
            },
            grad_h,
            grad_s,
        )


class Location(Flavour):
    """Luong et al. (2015), "location": e_i = W s_i, one score per position, blind to h (section
    3).

    W: (m, S), so the layer is built for one number of steps.
    """

    name = "location"
    needs_query = True
    sized_by_steps = True

    def __init__(self, prefix: str = "loc_"):
        self.prefix = _prefix(prefix)

    @initialiser
    def init(self, rng, key_size, query_size=0, steps=0):
        key_size, query_size, steps = _sizes(rng, key_size, query_size, steps)
        if steps < 1:
            raise ValueError("location scores need the number of steps")
        return Params({self.key("W"): fan_in_normal(rng, steps, query_size)})

    def _scores(self, p, h, s):
        h, s = _check_states(h, s, True, self.name, self, p)
        if p[self.key("W")].shape[0] != h.shape[1]:
            raise ValueError(
                f"this layer was built for {p[self.key('W')].shape[0]} steps; the input has "
                f"{h.shape[1]}"
            )
        return s @ p[self.key("W")].T, None

    def _scores_backward(self, p, h, s, cache, grad_scores):
        grads = {self.key("W"): np.einsum("nim,nis->ms", grad_scores, s)}
        return grads, np.zeros(np.shape(h)), grad_scores @ p[self.key("W")]


def _window(centre: np.ndarray, steps: int, half_width: int) -> np.ndarray:
    """True where step j lies within half_width of the centre: centre (N, n) -> (N, n, m)."""
    return np.abs(np.arange(steps) - centre[..., None]) <= half_width


class LocalM(Flavour):
    """Luong's local-m: query i attends only to steps within D of step i (monotonic alignment)
    (section 3).

    Wraps a score flavour ``inner``; the weights are a softmax over the window.
    """

    windowed = True

    def __init__(self, inner: Flavour, half_width: int = 2):
        if not isinstance(inner, Flavour):
            raise TypeError(
                f"inner must be a Flavour that scores the steps, got {type(inner).__name__}"
            )
        self.inner, self.half_width = inner, checks.integer(half_width, "half_width", 0)
        self.name = f"local-m ({inner.name})"
        self.needs_query, self.prefix = inner.needs_query, inner.prefix

    @initialiser
    def init(self, rng, key_size, query_size=0, steps=0):
        key_size, query_size, steps = _sizes(rng, key_size, query_size, steps)
        return self.inner.init(rng, key_size, query_size, steps)

    def _scores(self, p, h, s):
        return self.inner._scores(p, h, s)

    def _scores_backward(self, p, h, s, cache, grad_scores):
        return self.inner._scores_backward(p, h, s, cache, grad_scores)

    def _weigh(self, p, scores, s, mask):
        n, m = scores.shape[-2:]
        window = _window(
            np.broadcast_to(np.arange(n, dtype=float), scores.shape[:-1]), m, self.half_width
        )
        window = window if mask is None else window & mask
        return softmax(scores, window), None


class LocalP(LocalM):
    """Luong's local-p: a predicted centre p_i = (m - 1)·sigmoid(v_p · tanh(W_p s_i)) (section
    3).

    Weights: a softmax over the steps within D of p_i, times a Gaussian exp(-(j - p_i)² / (2σ²))
    with σ = D/2, not renormalised (as in the paper; its centres run over 0..m with steps
    counted from 1, ours over 0..m-1 with steps counted from 0).  The Gaussian makes the weights
    differentiable in p_i, so the whole flavour trains by backpropagation.  Parameters W_p: (A,
    S), v_p: (A,), besides the inner flavour's.
    """

    needs_query = True

    def __init__(self, inner: Flavour, half_width: int = 2, units: int = 8, prefix: str = "lp_"):
        super().__init__(inner, half_width)
        self.name = f"local-p ({inner.name})"
        self.units, self.prefix, self.needs_query = checks.integer(units, "units", 1), prefix, True

    @initialiser
    def init(self, rng, key_size, query_size=0, steps=0):
        key_size, query_size, steps = _sizes(rng, key_size, query_size, steps)
        own = {
            self.key("W"): fan_in_normal(rng, self.units, query_size),
            self.key("v"): fan_in_normal(rng, self.units),
        }
        return Params({**self.inner.init(rng, key_size, query_size, steps), **own})

    def centre(self, p, s, steps: int):
        """The predicted centres p_i (N, n) of queries s (N, n, S) over ``steps`` steps, and
        the tanh layer and gate they came from."""
        checks.params(p, "p", (self.key("W"), self.key("v")))
        s = checks.array(s, "s", ndim=3, copy=False)
        if s.shape[-1] != p[self.key("W")].shape[1]:
            raise ValueError(
                f"s must hold queries of size {p[self.key('W')].shape[1]}, got shape {s.shape}"
            )
        steps = checks.integer(steps, "steps", 1)
        hidden = np.tanh(s @ p[self.key("W")].T)  # (N, n, A)
        gate = sigmoid(hidden @ p[self.key("v")])
        return (steps - 1) * gate, (hidden, gate)

    def _weigh(self, p, scores, s, mask):
        if s is None:
            raise ValueError("local-p needs queries to predict its centre from")
        m = scores.shape[-1]
        sigma = self.half_width / 2
        centre, (hidden, gate) = self.centre(p, s, m)
        window = _window(centre, m, self.half_width)
        window = window if mask is None else window & mask
        inside = softmax(scores, window)
        offset = np.arange(m) - centre[..., None]  # (N, n, m)
        gauss = np.exp(-np.square(offset) / (2 * sigma**2))
        return inside * gauss, (inside, gauss, offset, hidden, gate)

    def _weigh_backward(self, p, scores, s, weights, cache, grad_weights):
        inside, gauss, offset, hidden, gate = cache
        m = scores.shape[-1]
        sigma = self.half_width / 2
        grad_scores = softmax_backward(inside, grad_weights * gauss)
        # d gauss / d p: Σ_j grad_weights · inside · gauss · offset / σ²
        grad_centre = (grad_weights * inside * gauss * offset).sum(axis=-1) / sigma**2
        grad_logit = grad_centre * (m - 1) * gate * (1 - gate)  # (N, n)
        grad_v = np.einsum("ni,nia->a", grad_logit, hidden)
        grad_pre = grad_logit[..., None] * p[self.key("v")] * (1 - hidden * hidden)  # (N, n, A)
        grads = {self.key("W"): np.einsum("nia,nis->as", grad_pre, s), self.key("v"): grad_v}
        return grads, grad_scores, grad_pre @ p[self.key("W")]


FLAVOURS = {
    "mean pooling": lambda: MeanPooling(),
    "feed-forward": lambda: FeedForward(),
    "feed-forward, bias per position": lambda: FeedForward(per_position=True),
    "context vector": lambda: ContextVector(),
    "additive": lambda: Additive(),
    "dot": lambda: Dot(),
    "general": lambda: General(),
    "concat": lambda: Concat(),
    "location": lambda: Location(),
    "local-m (general)": lambda: LocalM(General()),
    "local-p (general)": lambda: LocalP(General()),
}


def make(name: str) -> Flavour:
    """A fresh flavour by name; see :data:`FLAVOURS` for the names."""
    return FLAVOURS[checks.choice(name, "name", FLAVOURS)]()


def as_flavour(flavour) -> Flavour:
    """``flavour`` itself if it is a Flavour, else a fresh flavour of that name (a key of
    :data:`FLAVOURS`)."""
    if isinstance(flavour, Flavour):
        return flavour
    if not isinstance(flavour, str):
        raise TypeError(
            f"flavour must be a flavour's name or a Flavour, got {type(flavour).__name__}"
        )
    return make(checks.choice(flavour, "flavour", FLAVOURS))


class Attention:
    """What :func:`attend` computed: scores, weights (N, n, m) and context (N, n, D), plus
    caches."""

    def __init__(self, scores, weights, context, score_cache, weight_cache):
        for name, value in (("scores", scores), ("weights", weights), ("context", context)):
            if not isinstance(value, np.ndarray) or value.ndim != 3:
                raise TypeError(f"{name} must be a (N, n, ·) array, as attend makes it")
        if weights.shape != scores.shape or context.shape[:2] != scores.shape[:2]:
            raise ValueError(
                f"scores and weights (N, n, m) and context (N, n, D) must agree, got "
                f"{scores.shape}, {weights.shape}, {context.shape}"
            )
        self.scores, self.weights, self.context = scores, weights, context
        self.score_cache, self.weight_cache = score_cache, weight_cache


def attend(flavour: Flavour, p, h, s=None, mask=None) -> Attention:
    """Scores, weights and the context a h for hidden states h (N, m, D) and queries s (N, n,
    S).

    mask: boolean, broadcastable to (N, n, m), True where a step may be attended to (the book's
    convention, and torch's SDPA's).
    """
    if not isinstance(flavour, Flavour):
        raise TypeError(f"flavour must be a Flavour (flavours.make), got {type(flavour).__name__}")
    checks.params(p, "p", flavour.names)
    h, s = _check_states(h, s, flavour.needs_query, flavour.name)
    scores, score_cache = flavour._scores(p, h, s)
    weights, weight_cache = flavour._weigh(p, scores, s, mask)
    return Attention(scores, weights, weights @ h, score_cache, weight_cache)


def scores_backward(flavour: Flavour, p, h, s, att: Attention, grad_scores):
    """The gradients of ``flavour``'s scores alone, from grad_scores (N, n, m), for a pass of
    :func:`attend` that gave ``att``: (parameter gradients: dict, grad_h (N, m, D), grad_s (N, n,
    S) or None).  For a training that does not differentiate the weights (hard attention's
    REINFORCE, Part V, section 3)."""
    if not isinstance(flavour, Flavour):
        raise TypeError(f"flavour must be a Flavour (flavours.make), got {type(flavour).__name__}")
    if not isinstance(att, Attention):
        raise TypeError(f"att must be the Attention of attend, got {type(att).__name__}")
    checks.params(p, "p", flavour.names)
    h, s = _check_states(h, s, flavour.needs_query, flavour.name)
    grad_scores = checks.array(grad_scores, "grad_scores", shape=att.scores.shape, copy=False)
    return flavour._scores_backward(p, h, s, att.score_cache, grad_scores)


def attend_backward(flavour: Flavour, p, h, s, att: Attention, grad_context, grad_weights=None):
    """Gradients of :func:`attend`, given the gradient of the context (N, n, D), and of the
    weights themselves (N, n, m) when a loss reads them (Part VI, section 2's adversary).

    Returns (parameter gradients: dict, grad_h (N, m, D), grad_s (N, n, S) or None).
    """
    if not isinstance(flavour, Flavour):
        raise TypeError(f"flavour must be a Flavour (flavours.make), got {type(flavour).__name__}")
    if not isinstance(att, Attention):
        raise TypeError(f"att must be the Attention of attend, got {type(att).__name__}")
    checks.params(p, "p", ())
    grad_context = checks.array(grad_context, "grad_context", shape=att.context.shape, copy=False)
    h = checks.array(h, "h", ndim=3, copy=False)
    if s is not None:
        s = checks.array(s, "s", copy=False)
    through_context = grad_context @ np.swapaxes(h, 1, 2)  # context = a h
    if grad_weights is None:
        grad_weights = through_context
    else:
        grad_weights = through_context + checks.array(
            grad_weights, "grad_weights", shape=att.weights.shape, copy=False
        )
    grad_h = np.swapaxes(att.weights, 1, 2) @ grad_context
    weigh_grads, grad_scores, grad_s_window = flavour._weigh_backward(
        p, att.scores, s, att.weights, att.weight_cache, grad_weights
    )
    score_grads, grad_h_scores, grad_s = flavour._scores_backward(
        p, h, s, att.score_cache, grad_scores
    )
    grad_h += grad_h_scores  # grad_h is this call's own array
    if grad_s_window is not None:
        grad_s = grad_s_window if grad_s is None else grad_s + grad_s_window
    return {**score_grads, **weigh_grads}, grad_h, grad_s


def sample_steps(weights: np.ndarray, rng: np.random.RandomState) -> np.ndarray:
    """One step per row drawn from the weights (..., m): indices (...,) (hard attention, section
    3).

    Each row must hold non-negative finite weights with a positive sum.
    """
    weights = checks.array(weights, "weights")
    if weights.ndim < 1 or weights.shape[-1] < 1:
        raise ValueError(f"weights must have at least one step, got shape {weights.shape}")
    if np.any(weights < 0) or np.any(weights.sum(axis=-1) <= 0):
        raise ValueError("weights must be non-negative, with a positive sum in every row")
    cumulative = np.cumsum(weights, axis=-1)
    draws = rng.random_sample(weights.shape[:-1] + (1,)) * cumulative[..., -1:]
    return np.minimum((cumulative <= draws).sum(axis=-1), weights.shape[-1] - 1)


def reinforce_scores_gradient(
    weights: np.ndarray, chosen: np.ndarray, advantage: np.ndarray
) -> np.ndarray:
    """REINFORCE's estimate of d E[loss] / d scores: advantage · (onehot(chosen) - weights)
    (section 3).

    weights: (..., m) softmax weights; chosen: (...,) sampled steps; advantage: (...,) the loss
    of each draw minus a baseline.  Averaged over draws, it equals the exact gradient of the
    expected loss; one draw is noisy.
    """
    weights = checks.array(weights, "weights", copy=False)
    if weights.ndim < 1:
        raise ValueError("weights must have an axis of steps, (..., m)")
    chosen = checks.integers(chosen, "chosen", 0, weights.shape[-1] - 1)
    advantage = checks.array(advantage, "advantage", copy=False)
    try:
        np.broadcast_shapes(chosen.shape, advantage.shape, weights.shape[:-1])
    except ValueError:
        raise ValueError(
            f"chosen {chosen.shape} and advantage {advantage.shape} must match the weights' "
            f"leading axes {weights.shape[:-1]}"
        ) from None
    onehot = np.arange(weights.shape[-1]) == chosen[..., None]
    return advantage[..., None] * (onehot - weights)
