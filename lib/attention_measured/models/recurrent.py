"""Recurrent networks by hand: the GRU cell, and the encoder-decoders built from it (Part V,
the encoder-decoder).  :class:`EncoderDecoder` documents the four kinds.

A GRU cell (Cho et al. 2014) reads one step x and the previous state h and returns the next
state.  Its parameters carry the names, shapes and gate order of torch's ``nn.GRUCell``, so
weights move between this book and torch unchanged:

- ``weight_ih`` (3H, I) and ``bias_ih`` (3H,) act on the input, ``weight_hh`` (3H, H) and
  ``bias_hh`` (3H,) on the state;
- their rows are three blocks of H, in torch's order: reset r, update z, new n.

    r = σ(W_ir x + b_ir + W_hr h + b_hr)
    z = σ(W_iz x + b_iz + W_hz h + b_hz)
    n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
    h' = (1 − z) ⊙ n + z ⊙ h

In code, x and h are batches of rows, (N, I) and (N, H), so ``x @ weight_ih.T`` applies the
input weights to every row.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..core import checks
from ..core.attention import as_rows, step_contributions
from ..core.losses import sigmoid, softmax_cross_entropy
from ..core.params import Params, fan_in_normal, initialiser
from ..machinery.blas import one_thread
from ..tasks import translation
from .flavours import Additive, General, attend, attend_backward
from .protocol import Output, changes, drop_step

GRU_NAMES = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def _check_gru(params, x, h) -> tuple[np.ndarray, ...]:
    """The four arrays, x and h as floats, with shapes checked against each other."""
    checks.params(params, "params", GRU_NAMES)
    W_ih, W_hh, b_ih, b_hh = (checks.array(params[name], name, copy=False) for name in GRU_NAMES)
    x, h = checks.array(x, "x", copy=False), checks.array(h, "h", copy=False)
    if W_hh.ndim != 2 or W_hh.shape[0] != 3 * W_hh.shape[1]:
        raise ValueError(f"weight_hh must be (3H, H), got {W_hh.shape}")
    H = W_hh.shape[1]
    if W_ih.ndim != 2 or W_ih.shape[0] != 3 * H:
        raise ValueError(f"weight_ih must be (3H, I) = ({3 * H}, I), got {W_ih.shape}")
    if b_ih.shape != (3 * H,) or b_hh.shape != (3 * H,):
        raise ValueError(f"bias_ih and bias_hh must be ({3 * H},), got {b_ih.shape}, {b_hh.shape}")
    if x.ndim != 2 or x.shape[1] != W_ih.shape[1]:
        raise ValueError(f"x must be (N, {W_ih.shape[1]}), got {x.shape}")
    if h.shape != (x.shape[0], H):
        raise ValueError(f"h must be (N, H) = ({x.shape[0]}, {H}), got {h.shape}")
    return W_ih, W_hh, b_ih, b_hh, x, h


def _gates(W_ih, W_hh, b_ih, b_hh, x, h):
    """(r, z, n, the state's part of n's argument) for a batch: each (N, H)."""
    H = h.shape[1]
    from_x, from_h = x @ W_ih.T + b_ih, h @ W_hh.T + b_hh  # (N, 3H) each
    rz = sigmoid(from_x[:, : 2 * H] + from_h[:, : 2 * H])  # both sigmoid gates at once
    n_h = from_h[:, 2 * H :]
    return rz[:, :H], rz[:, H:], np.tanh(from_x[:, 2 * H :] + rz[:, :H] * n_h), n_h


def gru_cell(params, x, h) -> np.ndarray:
    """The next state of a GRU cell, as torch's ``nn.GRUCell`` computes it (Part V).

    params: a mapping with ``weight_ih`` (3H, I), ``weight_hh`` (3H, H), ``bias_ih`` and
    ``bias_hh`` (3H,), gates in the order reset, update, new.  x: (N, I) inputs, h: (N, H)
    previous states.  Returns (N, H).
    """
    return gru_cell_and_gates(params, x, h)[0]


def gru_cell_and_gates(params, x, h) -> tuple[np.ndarray, tuple]:
    """(:func:`gru_cell`'s next state (N, H), its gates): the gates (r, z, n and the state's
    part of n's argument, each (N, H)) are what :func:`gru_cell_backward` would compute again,
    so a training pass keeps them for it (Part V)."""
    W_ih, W_hh, b_ih, b_hh, x, h = _check_gru(params, x, h)
    gates = _gates(W_ih, W_hh, b_ih, b_hh, x, h)
    _, z, n, _ = gates
    return (1.0 - z) * n + z * h, gates


def gru_cell_backward(params, x, h, grad_next, gates=None) -> tuple[dict, np.ndarray, np.ndarray]:
    """Gradients of :func:`gru_cell` (Part V): each line undoes one forward line.

    grad_next: (N, H), the gradient of the loss with respect to the cell's output.  ``gates``:
    the forward pass's, from :func:`gru_cell_and_gates`, or None to compute them again.
    Returns (gradients of the four parameters under their names, grad_x (N, I), grad_h (N, H)).
    """
    W_ih, W_hh, b_ih, b_hh, x, h = _check_gru(params, x, h)
    grad_next = checks.array(grad_next, "grad_next", copy=False)
    if grad_next.shape != h.shape:
        raise ValueError(f"grad_next must be shaped like h {h.shape}, got {grad_next.shape}")
    if gates is None:
        gates = _gates(W_ih, W_hh, b_ih, b_hh, x, h)
    elif not checks.trusting():
        if len(gates) != 4 or any(np.shape(g) != h.shape for g in gates):
            raise ValueError(f"gates must be gru_cell_and_gates's four arrays shaped {h.shape}")
    r, z, n, n_h = gates
    grad_n = grad_next * (1.0 - z)  # h' = (1 − z) n + z h
    grad_z = grad_next * (h - n)
    grad_n_arg = grad_n * (1.0 - n**2)  # n = tanh(n_i + r n_h)
    grad_r = grad_n_arg * n_h
    grad_r_arg = grad_r * r * (1.0 - r)  # r = σ(r_i + r_h)
    grad_z_arg = grad_z * z * (1.0 - z)  # z = σ(z_i + z_h)
    grad_i = np.concatenate([grad_r_arg, grad_z_arg, grad_n_arg], axis=1)  # (N, 3H)
    grad_h_gates = np.concatenate([grad_r_arg, grad_z_arg, grad_n_arg * r], axis=1)
    grads = {
        "weight_ih": grad_i.T @ x,
        "weight_hh": grad_h_gates.T @ h,
        "bias_ih": grad_i.sum(axis=0),
        "bias_hh": grad_h_gates.sum(axis=0),
    }
    grad_x = grad_i @ W_ih
    grad_h = grad_h_gates @ W_hh + grad_next * z
    return grads, grad_x, grad_h


KINDS = ("fixed context", "Bahdanau", "Luong", "Luong, input feeding")


def _gru(p, prefix: str) -> dict:
    """The four GRU arrays stored under ``prefix`` (a torch module's names), as gru_cell's."""
    return {name: p[full] for name, full in zip(GRU_NAMES, _gru_names(prefix))}


_SUFFIXES = {
    "encoder.": ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"),
    "encoder.reverse.": ("weight_ih_l0_reverse", "weight_hh_l0_reverse")
    + ("bias_ih_l0_reverse", "bias_hh_l0_reverse"),
    "decoder.": GRU_NAMES,
}


def _gru_names(prefix: str) -> list[str]:
    head = "encoder." if prefix == "encoder.reverse." else prefix
    return [head + suffix for suffix in _SUFFIXES[prefix]]


class _Step(NamedTuple):
    """What one decoder step computed (all (N, ·)): its GRU input x, state s, context c,
    output features o and the attention record (None for the fixed context)."""

    x: np.ndarray
    s: np.ndarray
    c: np.ndarray
    o: np.ndarray
    attention: Any
    gates: tuple | None = None  # the decoder cell's, for the backward pass


class EncoderDecoder:
    """A GRU encoder and a GRU decoder, with or without attention (Part V, the encoder-decoder).

    ``kind`` is one of :data:`KINDS`:

    - ``"fixed context"`` (Cho et al. 2014): the encoder's last state is the decoder's first
      state and the context c of every step;
    - ``"Bahdanau"`` (Bahdanau et al. 2015): a bidirectional encoder, annotations
      h_j = [→h_j; ←h_j], and at step i the additive score e_ij = v·tanh(W s_{i−1} + U h_j) of
      the previous decoder state; the context enters the GRU and the output;
    - ``"Luong"`` (Luong et al. 2015, global attention): the decoder's new state s_i scores the
      encoder states with ``general``, e_ij = s_i·W h_j, and the output reads
      h̃_i = tanh(W_c [c_i; s_i]);
    - ``"Luong, input feeding"``: the same, with h̃_{i−1} fed into the GRU beside the previous
      word.

    Parameters carry torch's names: the encoder is an ``nn.GRU`` (``encoder.weight_ih_l0``, and
    ``…_reverse`` when bidirectional), the decoder an ``nn.GRUCell`` (``decoder.weight_ih``, …).
    Sentences of one batch share one source length m; targets have n words, the last </s>.  It
    follows the book's model protocol (:mod:`.protocol`): its inputs are (source, target) pairs
    read under teacher forcing, its weights (N, n, m) one row per target word.
    """

    draws = True  # each training step draws its batch
    output_kind = "tokens"

    def __init__(
        self,
        kind: str,
        source_vocabulary: int,
        target_vocabulary: int,
        embedding: int = 16,
        hidden: int = 32,
        units: int = 32,
        batch: int = 32,
        bos: int = 1,
        eos: int = 2,
    ):
        self.kind = checks.choice(kind, "kind", KINDS)
        self.source_vocabulary = checks.integer(source_vocabulary, "source_vocabulary", 2)
        self.target_vocabulary = checks.integer(target_vocabulary, "target_vocabulary", 3)
        self.embedding = checks.integer(embedding, "embedding", 1)
        self.hidden = checks.integer(hidden, "hidden", 1)
        self.units = checks.integer(units, "units", 1)
        self.batch = checks.integer(batch, "batch", 1)
        self.bos = checks.index(bos, "bos", self.target_vocabulary)
        self.eos = checks.index(eos, "eos", self.target_vocabulary)
        self.bidirectional = self.kind == "Bahdanau"
        self.feeding = self.kind == "Luong, input feeding"
        if self.kind == "Bahdanau":
            self.flavour = Additive(units=self.units)
        elif self.kind.startswith("Luong"):
            self.flavour = General()
        else:
            self.flavour = None
        self.cannot = (
            {
                change: "the fixed-context model has no attention: every word reads the last "
                "encoder state"
                for change in ("keep", "weights")
            }
            if self.flavour is None
            else {}
        )
        self.annotation = 2 * self.hidden if self.bidirectional else self.hidden
        # the context enters the GRU for the fixed context and Bahdanau, the output for all
        self.context_in = self.kind in ("fixed context", "Bahdanau")

    def __repr__(self) -> str:
        return f"EncoderDecoder({self.kind!r}, hidden={self.hidden})"

    # -------------------------------------------------------------- parameters
    @initialiser
    def init(self, seed: int = 0) -> Params:
        """Parameters drawn from ``seed``: normal with standard deviation 1/sqrt(fan-in)."""
        rng = np.random.RandomState(checks.seed(seed))
        E, H, D = self.embedding, self.hidden, self.annotation
        p = Params(
            source_embedding=rng.normal(0.0, 1.0, (self.source_vocabulary, E)),
            target_embedding=rng.normal(0.0, 1.0, (self.target_vocabulary, E)),
        )
        grus = ["encoder."] + (["encoder.reverse."] if self.bidirectional else []) + ["decoder."]
        inputs = {"encoder.": E, "encoder.reverse.": E, "decoder.": self.decoder_input}
        for prefix in grus:
            width = inputs[prefix]
            for name, shape in zip(
                _gru_names(prefix), [(3 * H, width), (3 * H, H), (3 * H,), (3 * H,)]
            ):
                p[name] = rng.uniform(-1.0, 1.0, shape) / np.sqrt(H)  # torch's GRU initialisation
        if self.flavour is not None:
            p.update(self.flavour.init(rng, D, H))
        if self.kind == "Bahdanau":
            p["init.weight"], p["init.bias"] = fan_in_normal(rng, H, H), np.zeros(H)
        if self.kind.startswith("Luong"):
            p["combine.weight"] = fan_in_normal(rng, H, D + H)
        features = H if self.kind.startswith("Luong") else H + D
        p["out.weight"], p["out.bias"] = (
            fan_in_normal(rng, self.target_vocabulary, features),
            np.zeros(self.target_vocabulary),
        )
        return p

    @property
    def decoder_input(self) -> int:
        """The width of the decoder GRU's input: the previous word, and the context or h̃."""
        return (
            self.embedding
            + (self.annotation if self.context_in else 0)
            + (self.hidden if self.feeding else 0)
        )

    # -------------------------------------------------------------- forward
    def _check_source(self, source) -> np.ndarray:
        return checks.token_ids(source, "source", self.source_vocabulary, (None, None))

    @checks.model_params
    def encode(self, p, source, scale=None) -> tuple[np.ndarray, np.ndarray, dict]:
        """Annotations h (N, m, D) and the decoder's first state s_0 (N, H) for source ids (N, m).

        The third value keeps what the backward pass needs.  ``scale``: optional (N, m), each
        word's embedding multiplied by it (Part VI's gradient × input).
        """
        source = self._check_source(source)
        N, m = source.shape
        if m < 1:
            raise ValueError("source sentences need at least one word")
        x = p["source_embedding"][source]  # (N, m, E)
        if scale is not None:
            x = x * checks.array(scale, "scale", shape=source.shape, copy=False)[..., None]
        forward, gates = _run_gru(_gru(p, "encoder."), x)
        states, cache = [forward], {"x": x, "forward": forward, "forward gates": gates}
        if self.bidirectional:
            backward, gates = _run_gru(_gru(p, "encoder.reverse."), x[:, ::-1])
            backward = backward[:, ::-1]
            states.append(backward)
            cache["backward"], cache["backward gates"] = backward, gates
        h = np.concatenate(states, axis=-1)
        if self.kind == "Bahdanau":  # s_0 = tanh(W_init ←h_1 + b)
            s0 = np.tanh(backward[:, 0] @ p["init.weight"].T + p["init.bias"])
        else:
            s0 = forward[:, -1]
        cache["s0"] = s0
        return h, s0, cache

    @checks.model_params
    def _step(
        self, p, h, s_prev, o_prev, words, late: bool = False, keep=None, weights=None
    ) -> _Step:
        """One decoder step for the previous words (N,) ids: see the class docstring.

        ``late``: leave Luong's attention and output out of this step (c and o are None), for
        :meth:`forward` to compute for all steps at once.  Part VI's changes: ``keep`` (N, m)
        boolean, the source words this step may attend to; ``weights`` (N, m), weights that
        replace this step's own in the context c = Σ_j a_j h_j.
        """
        parts, att, c = [p["target_embedding"][words]], None, None
        if self.kind == "fixed context":
            c = h[:, -1]
        elif self.kind == "Bahdanau":  # the previous state asks
            att, c = self._attend(p, h, s_prev, keep, weights)
        if self.context_in:
            parts.append(c)
        if self.feeding:
            parts.append(o_prev)
        x = np.concatenate(parts, axis=1)
        s, gates = gru_cell_and_gates(_gru(p, "decoder."), x, s_prev)
        if not self.kind.startswith("Luong"):
            return _Step(x, s, c, np.concatenate([s, c], axis=1), att, gates)
        if late:
            return _Step(x, s, None, None, None, gates)
        att, c = self._attend(p, h, s, keep, weights)  # the new state asks
        o = np.tanh(np.concatenate([c, s], axis=-1) @ p["combine.weight"].T)
        return _Step(x, s, c, o, att, gates)

    def _attend(self, p, h, query, keep, weights):
        """One step's attention for query (N, H) and its context (N, D), with the changes of
        :meth:`forward` for this step: keep (N, m) or None, weights (N, m) or None."""
        mask = None if keep is None else keep[:, None]
        att = attend(self.flavour, p, h, query[:, None, :], mask)
        if weights is None:
            return att, att.context[:, 0]
        return att, np.einsum("nm,nmd->nd", weights, h)

    def _luong_output(self, p, h, queries, keep=None, weights=None):
        """Luong's attention for queries (N, n, H) and h̃ = tanh(W_c [c; s]): (att, c, h̃), with
        the changes of :meth:`forward` for every step at once."""
        att = attend(self.flavour, p, h, queries, keep)
        c = att.context if weights is None else weights @ h
        joined = np.concatenate([c, queries], axis=-1)
        return att, c, np.tanh(joined @ p["combine.weight"].T)

    @one_thread
    @checks.model_params
    def forward(self, p, inputs, *, keep=None, weights=None, scale=None) -> Output:
        """Teacher forcing on ``inputs`` = (source (N, m), target (N, n)) ids: each step reads
        the true previous word.  Returns the logits (N, n, V) and the attention weights
        (N, n, m), row i where word i looked (None for the fixed context); as parts, the
        ``steps`` and ``record`` the backward pass reads.  Without input feeding, Luong's
        attention never feeds back into the recurrence, so it is computed once, for all n steps
        together, after it.

        The changes (Part VI): ``keep`` (N, n, m) boolean, the source words each step may attend
        to; ``weights`` (N, n, m), each step's weights replaced in its context c = Σ_j a_j h_j;
        ``scale`` (N, m), each source word's embedding multiplied by it.
        """
        source, target = self._inputs(inputs)
        n, m = target.shape[1], source.shape[1]
        keep, weights, scale = changes(
            keep, weights, scale, (len(source), n, m), source.shape, self.cannot
        )
        h, s, enc = self.encode(p, source, scale)
        previous = translation.shifted_right(target, self.bos)
        o, late = np.zeros((len(h), self.hidden)), self.kind == "Luong"
        steps = []
        for i in range(n):
            mine = {
                "keep": None if keep is None or late else keep[:, i],
                "weights": None if weights is None or late else weights[:, i],
            }
            steps.append(self._step(p, h, s, o, previous[:, i], late=late, **mine))
            s, o = steps[-1].s, steps[-1].o
        record = {"h": h, "enc": enc, "previous": previous, "late": None, "weights": None}
        if late:
            states = np.stack([st.s for st in steps], axis=1)
            att, c, features = self._luong_output(p, h, states, keep, weights)
            record["late"], record["weights"] = (att, c, states, features), att.weights
        else:
            features = np.stack([st.o for st in steps], axis=1)
            if self.flavour is not None:
                record["weights"] = np.stack([st.attention.weights[:, 0] for st in steps], axis=1)
        record["features"] = features
        logits = features @ p["out.weight"].T + p["out.bias"]  # (N, n, V)
        shown = record["weights"] if weights is None else weights
        return Output(logits, shown, parts={"steps": steps, "record": record})

    @checks.model_params
    def contributions(self, p, inputs) -> np.ndarray:
        """What each source word adds to each target word's context, a_ij h_j (Part VI,
        Kobayashi et al.'s α f(x)): (N, n, m, D), under teacher forcing."""
        if self.flavour is None:
            raise ValueError("the fixed context has no attention weights")
        out = self.forward(p, inputs)
        return step_contributions(out.weights, out.parts["record"]["h"])

    def rows_upto(self, inputs, n: int) -> tuple:
        """(source, target) with each target cut to its first ``n`` words: under teacher forcing
        word i reads only the words before it, so its row of the output is unchanged (Part VI's
        adversary, :meth:`~.explanations.Subject.row_predict`)."""
        source, target = self._inputs(inputs)
        n = checks.integer(n, "n", 1, target.shape[1])
        return source, target[:, :n]

    def without_step(self, inputs, step) -> tuple:
        """(source, target) with each source sentence's word ``step`` (N,) deleted: the
        encoder reads m − 1 words (Jain & Wallace's leave-one-out, Part VI)."""
        source, target = self._inputs(inputs)
        return drop_step(source, step), target

    def _inputs(self, inputs) -> tuple[np.ndarray, np.ndarray]:
        """(source, target) ids, checked: (N, m) and (N, n)."""
        if not (isinstance(inputs, tuple) and len(inputs) == 2):
            raise TypeError("inputs must be (source, target), two arrays of token ids")
        source = self._check_source(inputs[0])
        target = checks.token_ids(inputs[1], "target", self.target_vocabulary, (len(source), None))
        if source.shape[1] < 1 or target.shape[1] < 1:
            raise ValueError("source and target sentences need at least one word")
        return source, target

    @checks.model_params
    def decoder_start(self, p, source) -> dict:
        """The decoder's state before its first word, for :mod:`decoding`: the annotations
        "h" (N, m, D), the state "s" (N, H) and the previous output "o" (N, H), zero."""
        h, s, _ = self.encode(p, source)
        return {"h": h, "s": s, "o": np.zeros((len(h), self.hidden))}

    @checks.model_params
    def decoder_next(self, p, state, words, t: int = 0) -> tuple:
        """One free-running step for the previous words (N,): (logits (N, V), attention
        weights (N, m) or None, the next state).  ``t`` is unused (a recurrent decoder keeps
        its place in its state)."""
        if not isinstance(state, dict) or not {"h", "s", "o"} <= state.keys():
            raise TypeError("state must be the dict of decoder_start, holding h, s and o")
        checks.integer(t, "t", 0, translation.MAX_STEPS)
        words = checks.token_ids(words, "words", self.target_vocabulary, (len(state["s"]),))
        st = self._step(p, state["h"], state["s"], state["o"], words)
        weights = None if st.attention is None else st.attention.weights[:, 0]
        return st.o @ p["out.weight"].T + p["out.bias"], weights, {**state, "s": st.s, "o": st.o}

    @one_thread
    @checks.model_params
    def greedy(self, p, source, steps: int | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """Greedy decoding: each step feeds back its own most likely word.

        Returns (ids (N, steps), weights (N, steps, m) or None).  ``steps`` defaults to the
        source length + 1, enough for a translation of equal length and its </s>, and is at
        most :data:`~.translation.MAX_STEPS`.
        """
        state = self.decoder_start(p, source)
        h = state["h"]
        steps = (
            h.shape[1] + 1
            if steps is None
            else checks.integer(steps, "steps", 1, translation.MAX_STEPS)
        )
        words = np.full(len(h), self.bos)
        out, weights = [], []
        for t in range(steps):
            logits, w, state = self.decoder_next(p, state, words, t)
            words = logits.argmax(axis=1)
            out.append(words)
            if w is not None:
                weights.append(w)
        return np.stack(out, axis=1), (np.stack(weights, axis=1) if weights else None)

    # -------------------------------------------------------------- backward
    @checks.model_params
    def loss_and_grads(self, p, data, rng=None, baseline=None):
        """Mean cross-entropy per target word and its gradients, on one batch.

        ``data`` is either a (source, target) pair of id arrays, used whole, or a dict
        {length: Corpus} from which ``rng`` draws a length and ``batch`` sentences of it (the
        training loop's draws).  ``baseline`` is unused (the loop offers it to every drawing
        model).
        """
        if baseline is not None:
            checks.real(baseline, "baseline")
        if rng is not None:
            checks.random_state(rng, "rng")
        if isinstance(data, dict):
            if rng is None:
                raise ValueError("drawing a batch from a corpus needs rng")
            source, target = translation.draw_batch(data, checks.random_state(rng), self.batch)
        else:
            if not isinstance(data, tuple) or len(data) != 2:
                raise TypeError("data must be a (source, target) pair of id arrays or a corpus")
            source, target = data
        out = self.forward(p, (source, target))
        logits, steps, record = out.output, out.parts["steps"], out.parts["record"]
        losses, grad_logits = softmax_cross_entropy(logits, target)
        grad_logits /= losses.size
        grads = Params({name: np.zeros_like(value) for name, value in p.items()})
        features = record["features"]
        grads["out.weight"] += as_rows(grad_logits).T @ as_rows(features)
        grads["out.bias"] += grad_logits.sum(axis=(0, 1))
        grad_features = grad_logits @ p["out.weight"]
        grad_h = np.zeros(record["h"].shape)
        grad_states = self._late_backward(p, record, grad_features, grads, grad_h)
        self._decoder_backward(p, record, steps, grad_features, grad_states, grads, grad_h)
        self._encoder_backward(p, source, record["enc"], grad_h, grads)
        return float(losses.mean()), grads

    def _late_backward(self, p, record, grad_features, grads, grad_h):
        """Back through Luong's attention computed after the recurrence (without input
        feeding): returns the gradient of the decoder states (N, n, H), or None."""
        if record["late"] is None:
            return None
        att, c, states, features = record["late"]
        grad_pre = grad_features * (1.0 - features**2)  # h̃ = tanh(W_c [c; s])
        joined = np.concatenate([c, states], axis=-1)
        grads["combine.weight"] += as_rows(grad_pre).T @ as_rows(joined)
        grad_joined = grad_pre @ p["combine.weight"]
        D = self.annotation
        att_grads, gh, grad_queries = attend_backward(
            self.flavour,
            p,
            record["h"],
            states,
            att,
            grad_joined[..., :D],
        )
        for name, g in att_grads.items():
            grads[name] += g
        grad_h += gh
        return grad_joined[..., D:] + grad_queries

    def _decoder_backward(self, p, record, steps, grad_features, grad_states, grads, grad_h):
        """Back through the decoder steps, last to first, adding to grads and to grad_h (the
        gradient of the annotations), including what flows into s_0."""
        h, s0, previous = record["h"], record["enc"]["s0"], record["previous"]
        E, H, D = self.embedding, self.hidden, self.annotation
        decoder = _gru(p, "decoder.")
        grad_s, grad_o_next = np.zeros_like(s0), 0.0
        grad_words = np.zeros(previous.shape + (E,))
        for i in reversed(range(len(steps))):
            st = steps[i]
            s_prev = steps[i - 1].s if i else s0
            if grad_states is not None:  # Luong without input feeding, done above
                grad_s, grad_c = grad_s + grad_states[:, i], None
            elif self.kind.startswith("Luong"):  # o = tanh(W_c [c; s])
                grad_pre = (grad_features[:, i] + grad_o_next) * (1.0 - st.o**2)
                grads["combine.weight"] += grad_pre.T @ np.concatenate([st.c, st.s], axis=1)
                grad_cs = grad_pre @ p["combine.weight"]
                grad_c, grad_s = grad_cs[:, :D], grad_s + grad_cs[:, D:]
                grad_s = grad_s + self._attention_backward(p, h, st.s, st, grad_c, grads, grad_h)
            else:  # o = [s; c]
                grad_s, grad_c = grad_s + grad_features[:, i, :H], grad_features[:, i, H:]
            cell_grads, grad_x, grad_s = gru_cell_backward(decoder, st.x, s_prev, grad_s, st.gates)
            _add_gru_grads(grads, "decoder.", cell_grads)
            grad_words[:, i] = grad_x[:, :E]
            if self.context_in:
                grad_c = grad_c + grad_x[:, E : E + D]
            if self.feeding:  # h̃_{i−1} was this step's input
                grad_o_next = grad_x[:, -H:]
            if self.kind == "Bahdanau":
                grad_s = grad_s + self._attention_backward(p, h, s_prev, st, grad_c, grads, grad_h)
            elif self.kind == "fixed context":
                grad_h[:, -1] += grad_c
        np.add.at(grads["target_embedding"], previous, grad_words)
        self._initial_state_backward(p, h, s0, grad_s, grads, grad_h)

    def _attention_backward(self, p, h, query, st, grad_c, grads, grad_h) -> np.ndarray:
        """Back through one step's attention; adds to grads and grad_h, returns grad_query."""
        att_grads, gh, gq = attend_backward(
            self.flavour,
            p,
            h,
            query[:, None, :],
            st.attention,
            grad_c[:, None, :],
        )
        for name, g in att_grads.items():
            grads[name] += g
        grad_h += gh
        return gq[:, 0]

    def _initial_state_backward(self, p, h, s0, grad_s0, grads, grad_h) -> None:
        if self.kind == "Bahdanau":  # s_0 = tanh(W_init ←h_1 + b), ←h_1 = h[:, 0, H:]
            grad_pre = grad_s0 * (1.0 - s0**2)
            grads["init.weight"] += grad_pre.T @ h[:, 0, self.hidden :]
            grads["init.bias"] += grad_pre.sum(axis=0)
            grad_h[:, 0, self.hidden :] += grad_pre @ p["init.weight"]
        else:  # s_0 = →h_m
            grad_h[:, -1, : self.hidden] += grad_s0

    def _encoder_backward(self, p, source, enc, grad_h, grads) -> None:
        H = self.hidden
        grad_x = _run_gru_backward(
            _gru(p, "encoder."), enc["x"], enc["forward"], grad_h[..., :H], enc["forward gates"]
        )
        _add_gru_grads(grads, "encoder.", grad_x[1])
        grad_x = grad_x[0]
        if self.bidirectional:
            reverse = _run_gru_backward(
                _gru(p, "encoder.reverse."),
                enc["x"][:, ::-1],
                enc["backward"][:, ::-1],
                grad_h[:, ::-1, H:],
                enc["backward gates"],
            )
            _add_gru_grads(grads, "encoder.reverse.", reverse[1])
            grad_x = grad_x + reverse[0][:, ::-1]
        np.add.at(grads["source_embedding"], source, grad_x)


def _run_gru(params, x) -> tuple[np.ndarray, list]:
    """(The states (N, m, H) of a GRU reading x (N, m, I) from a zero state, first step first;
    each step's gates, for :func:`_run_gru_backward`)."""
    N, m, _ = x.shape
    h = np.zeros((N, params["weight_hh"].shape[1]))
    states, gates = np.empty((N, m, h.shape[1])), []
    for t in range(m):
        h, step_gates = gru_cell_and_gates(params, x[:, t], h)
        states[:, t] = h
        gates.append(step_gates)
    return states, gates


def _run_gru_backward(params, x, states, grad_states, gates) -> tuple[np.ndarray, dict]:
    """Back through :func:`_run_gru`, with its gates: (grad_x (N, m, I), the four parameter
    gradients)."""
    N, m, _ = x.shape
    grad_x = np.empty_like(x)
    totals = {name: np.zeros_like(params[name]) for name in GRU_NAMES}
    grad_h = np.zeros_like(states[:, 0])
    for t in reversed(range(m)):
        h_prev = states[:, t - 1] if t else np.zeros_like(states[:, 0])
        cell, grad_x[:, t], grad_h = gru_cell_backward(
            params, x[:, t], h_prev, grad_states[:, t] + grad_h, gates[t]
        )
        for name in GRU_NAMES:
            totals[name] += cell[name]
    return grad_x, totals


def _add_gru_grads(grads, prefix: str, cell_grads: dict) -> None:
    for name, suffix in zip(_gru_names(prefix), GRU_NAMES):
        grads[name] += cell_grads[suffix]
