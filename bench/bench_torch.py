"""The book's numpy training beside torch on the CPU, doing the same work: an optional peer.

Four trainings are written a second time in torch: Part II's "token" head (200 full-batch Adam
iterations, ``cloze_runs.train``), Part IV's Transformer and Bahdanau encoder-decoder (300 Adam
steps of 32 sentences, ``training.trained``), and Part VII's language model (1500 Adam steps of 32
copying sequences, ``language_runs.train``'s default: two attention-only layers of two heads with
rotary positions).  The head and Bahdanau's attention loop are written out line by line; where the
book's layers compute what torch's compute, torch's own are used (``nn.Transformer``'s encoder and
decoder, ``nn.GRU``, ``nn.GRUCell``; for the language model ``F.scaled_dot_product_attention``,
``nn.LayerNorm`` and ``F.cross_entropy``, with RoPE written out, as torch has none).  Both sides
start from the book's own initial Params (the models carry torch's parameter names, so the torch
modules load them with a strict ``load_state_dict``), use Adam with the book's hyper-parameters
(torch.optim.Adam computes the book's update: lr (m / c1) / (sqrt(v) / sqrt(c2) + eps) is lr (m /
c1) / (sqrt(v / c2) + eps), epsilon outside the root), and run in float64 on one thread, as the
book trains (:func:`attention_measured.machinery.blas.one_thread`).  Part IV's batches are drawn on
both sides inside each step by the book's own ``translation.draw_batch`` from ``RandomState(0)``,
the generator ``training.fit`` hands the model, so torch sees the same sentences in the same order.
Part VII's are drawn as ``language_runs.train`` draws them, ``repeats.repeats`` with a seed from
``RandomState(seed + 1)`` at every step, and both sides record the held-out losses and head scores
every 50 steps as train does (torch's weights scored by the book's ``induction`` functions).

Before anything is timed, both sides train a few steps from the same weights and the largest gap of
their loss curves (and of their weights, and of the language model's records) is printed: it shows
the work is the same.  The weights may differ by ~1e-12 where the losses agree to ~1e-15: Adam
divides each gradient by its own size plus eps = 1e-8, so a gradient that is nearly zero (the key
biases of attention have one that is zero but for rounding) turns rounding differences of ~1e-18
into steps that differ by ~lr 1e-10; the Transformer's other weights agree to ~1e-14.  One piece is
not matched: the book's GRU clips its gate logits to ±30 before the sigmoid (``losses.sigmoid``),
torch's does not; beyond ±30 the sigmoid is within 1e-13 of 0 or 1.

Then each side is timed, idle and beside a busy core; the book calls ``cloze_runs.train.uncached``,
``training.trained.uncached`` and ``language_runs.train.uncached``, which train every time.  The
ratios and their targets are printed, never asserted (for the language model also torch ÷ book,
whose target is at least 1: the numpy models train no slower than torch float64 on one thread on
the same work).  torch is not a dependency of the book: without it this prints one line and
exits.
"""

import sys
import time
from pathlib import Path

import numpy as np

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError:
    print(
        "torch peer: skipped (torch is not installed; the CPU build is enough: pip install torch "
        "--index-url https://download.pytorch.org/whl/cpu)"
    )
    sys.exit(0)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import busy_core  # noqa: E402

from attention_measured.core import training
from attention_measured.experiments import cloze_runs, language_runs, translation_runs
from attention_measured.models import cloze_head, language_model
from attention_measured.tasks import cloze, translation
from attention_measured.tasks import repeats as copying

torch.set_num_threads(1)  # the book's training loops hold BLAS to one thread
torch.set_default_dtype(torch.float64)  # and compute in float64

HEAD_ITERATIONS = 200
HEAD_REPEATS = 3  # best of 3 after a warm-up
SEQ2SEQ_REPEATS = 2  # best of 2 (the agreement runs warm both sides up)
AGREEMENT = 5  # steps trained from the same weights before timing
HEAD_CHAOS = 80  # bench_udhr's agreement span: past ~100 iterations rounding grows
SEQ2SEQ = ("Transformer", "Bahdanau")
LANGUAGE = "Language model"  # Part VII's, language_runs.train
LANGUAGE_STEPS = language_runs.STEPS  # train's default, 1500 steps
LANGUAGE_REPEATS = 2  # best of 2 (the agreement runs warm both sides up)
TARGET_SLOWDOWN = 1.5  # the book beside a busy core, at most this many times its idle time


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def _parameter(array: np.ndarray) -> nn.Parameter:
    return nn.Parameter(torch.tensor(array))  # a copy: the book's arrays stay untouched


def _adam(module: nn.Module, learning_rate: float) -> torch.optim.Optimizer:
    """optim.Adam's hyper-parameters in torch's Adam (its default, for-loop form on the CPU)."""
    return torch.optim.Adam(module.parameters(), learning_rate, betas=(0.9, 0.999), eps=1e-8)


def _gap(book: dict, module: nn.Module) -> float:
    """The largest difference between the book's Params and the torch module's weights."""
    weights = module.state_dict()
    return max(float(np.max(np.abs(book[name] - weights[name].numpy()))) for name in book)


# ------------------------------------------------------------------ Part II: the "token" head
class Head(nn.Module):
    """cloze_head.Head.forward for the "token" query: the summed cloze loss of a batch."""

    def __init__(self, params):
        super().__init__()
        for name in cloze_head.NAMES:  # E (V, d), W_Q, W_K, W_V (d, d), W_O (d, V)
            setattr(self, name, _parameter(params[name]))

    def forward(self, ids, allowed, real, targets):
        x = F.embedding(ids, self.E)  # x = params.E[batch.ids]  (B, L, d)
        joined = torch.cat([self.W_Q, self.W_K, self.W_V], dim=1)  # _projections: [W_Q|W_K|W_V]
        q, k, v = (x @ joined).split(cloze_head.WIDTH, dim=-1)  # X W_Q, X W_K, X W_V
        # z, a = scaled_dot_product_attention(q, k, v, allowed): softmax(Q Kᵀ / sqrt(d)) over the
        # allowed keys, rows with none (padding) all zeros, as the book's softmax makes them
        z = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        z = z.reshape(-1, cloze_head.WIDTH)[real]  # z.reshape(-1, WIDTH)[batch.real]  (N, d)
        scores = z @ self.W_O  # (N, V)
        return F.cross_entropy(scores, targets, reduction="sum")  # softmax_and_summed_...


def book_head(epochs: int) -> tuple[np.ndarray, dict]:
    result = cloze_runs.train.uncached(seed=0, epochs=epochs)
    return result.curve, result.params


def torch_head(epochs: int) -> tuple[np.ndarray, nn.Module]:
    """cloze_runs.train(seed=0) in torch: Head.loss_and_grads and training.fit's Adam loop."""
    batch = cloze.make_batch(cloze.SENTENCES)
    head = Head(cloze_head.Head("token").init(0))
    tensors = (
        torch.from_numpy(batch.ids),
        torch.from_numpy(batch.allowed),
        torch.from_numpy(batch.real),
        torch.from_numpy(batch.targets),
    )
    adam = _adam(head, cloze_runs.LEARNING_RATE)
    curve = np.empty(epochs)
    for t in range(epochs):
        adam.zero_grad()
        loss = head(*tensors)
        (loss / len(batch)).backward()  # g /= len(batch): the summed loss's gradients / B
        curve[t] = loss.item() / batch.n_predicted  # loss / batch.n_predicted, the mean
        adam.step()
    return curve, head


# ------------------------------------------------------------------ Part IV: two translators
def _positions(steps: int, size: int) -> torch.Tensor:
    """attention.sinusoidal_positions: sin on even columns, cos on odd ones."""
    angles = torch.arange(steps)[:, None] / 10000.0 ** (torch.arange(0, size, 2) / size)
    encoding = torch.empty(steps, size)
    encoding[:, 0::2], encoding[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return encoding


class Transformer(nn.Module):
    """transformer.Transformer (post-norm, ReLU, no dropout): torch's own encoder and decoder
    layers, whose state-dict names the book's Params carry."""

    def __init__(self, book, params):
        super().__init__()
        core = nn.Transformer(
            book.width,
            book.heads,
            book.layers,
            book.layers,
            book.feed_forward,
            dropout=0.0,
            batch_first=True,
        )
        self.encoder, self.decoder = core.encoder, core.decoder  # each with its final norm
        self.source_embedding = _parameter(params["source_embedding"])
        self.target_embedding = _parameter(params["target_embedding"])
        self.out = nn.Linear(book.width, book.target_vocabulary)
        self.load_state_dict({name: torch.tensor(value) for name, value in params.items()})
        self.bos, self.width = book.bos, book.width

    def forward(self, source, target):
        m, n = source.shape[1], target.shape[1]
        x = F.embedding(source, self.source_embedding) + _positions(m, self.width)  # _embed
        memory = self.encoder(x)  # encode: the layers, then encoder.norm
        bos = torch.full((len(target), 1), self.bos)
        previous = torch.cat([bos, target[:, :-1]], dim=1)  # shifted_right(target, bos)
        y = F.embedding(previous, self.target_embedding) + _positions(n, self.width)
        causal = nn.Transformer.generate_square_subsequent_mask(n)  # causal_mask(n)
        y = self.decoder(y, memory, tgt_mask=causal, tgt_is_causal=True)  # decode
        logits = self.out(y)  # out @ p["out.weight"].T + p["out.bias"]
        return F.cross_entropy(logits.flatten(0, 1), target.flatten())  # the mean per word


class Bahdanau(nn.Module):
    """recurrent.EncoderDecoder("Bahdanau"): a bidirectional GRU encoder, additive attention
    asked by the previous decoder state, a GRU cell decoder fed the previous word and the
    context, and an output layer reading [s; c]."""

    def __init__(self, book, params):
        super().__init__()
        E, H, A = book.embedding, book.hidden, book.units
        self.source_embedding = _parameter(params["source_embedding"])
        self.target_embedding = _parameter(params["target_embedding"])
        self.encoder = nn.GRU(E, H, batch_first=True, bidirectional=True)  # encoder.*_l0[_reverse]
        self.decoder = nn.GRUCell(book.decoder_input, H)  # decoder.weight_ih, ...
        # Additive's W (A, S), U (A, D), v (A,): shapes here, values from load_state_dict
        self.add_W = _parameter(np.zeros((A, H)))
        self.add_U = _parameter(np.zeros((A, 2 * H)))
        self.add_v = _parameter(np.zeros(A))
        self.init = nn.Linear(H, H)  # s_0 = tanh(W_init ←h_1 + b)
        self.out = nn.Linear(H + 2 * H, book.target_vocabulary)
        self.load_state_dict({name: torch.tensor(value) for name, value in params.items()})
        self.bos, self.hidden = book.bos, H

    def forward(self, source, target):
        H = self.hidden
        x = F.embedding(source, self.source_embedding)  # p["source_embedding"][source]
        h, _ = self.encoder(x)  # h_j = [→h_j; ←h_j]  (N, m, 2H)
        s = torch.tanh(self.init(h[:, 0, H:]))  # s_0 = tanh(W_init ←h_1 + b)
        bos = torch.full((len(target), 1), self.bos)
        previous = torch.cat([bos, target[:, :-1]], dim=1)  # shifted_right(target, bos)
        features = []
        for i in range(target.shape[1]):  # forward's loop over the decoder steps
            # Additive.scores: e_ij = v·tanh(W s_{i-1} + U h_j), U h recomputed every step as
            # the book's attend does
            hidden = torch.tanh((s @ self.add_W.T)[:, None, :] + h @ self.add_U.T)
            weights = torch.softmax(hidden @ self.add_v, dim=-1)  # (N, m)
            c = (weights[:, None, :] @ h)[:, 0]  # context = weights @ h  (N, 2H)
            word = F.embedding(previous[:, i], self.target_embedding)
            s = self.decoder(torch.cat([word, c], dim=1), s)  # gru_cell(decoder, [E[w]; c], s)
            features.append(torch.cat([s, c], dim=1))  # o = [s; c]
        logits = self.out(torch.stack(features, dim=1))  # features @ out.weight.T + out.bias
        return F.cross_entropy(logits.flatten(0, 1), target.flatten())  # the mean per word


TORCH_MODELS = {"Transformer": Transformer, "Bahdanau": Bahdanau}


def book_seq2seq(name: str, train, steps: int) -> tuple[np.ndarray, dict]:
    model, rate = translation_runs.book_model(name), translation_runs.learning_rate(name)
    result = training.trained.uncached(model, 0, train, None, steps, rate)
    return result.curve, result.params


def torch_seq2seq(name: str, train, steps: int) -> tuple[np.ndarray, nn.Module]:
    """training.trained(book_model(name), 0, train, None, steps, rate) in torch."""
    book = translation_runs.book_model(name)
    module = TORCH_MODELS[name](book, book.init(0))
    adam = _adam(module, translation_runs.learning_rate(name))
    rng = np.random.RandomState(0)  # fit's RandomState(seed=0), which loss_and_grads draws from
    curve = np.empty(steps)
    for t in range(steps):
        source, target = translation.draw_batch(train, rng, book.batch)  # as loss_and_grads
        adam.zero_grad()
        loss = module(torch.from_numpy(source), torch.from_numpy(target))
        loss.backward()
        curve[t] = loss.item()
        adam.step()
    return curve, module


# ------------------------------------------------------------------ Part VII: the language model
def _rope(x: torch.Tensor) -> torch.Tensor:
    """language_model.rotate at positions 0 … L − 1: column pair (2i, 2i + 1) of x (N, heads,
    L, d) at position t turned by the angle t · base^(−2i/d)."""
    length, d = x.shape[-2:]
    angles = torch.arange(length)[:, None] * language_model.ROTARY_BASE ** (
        -torch.arange(0, d, 2) / d
    )
    cos, sin = torch.cos(angles), torch.sin(angles)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


class LanguageLayer(nn.Module):
    """One layer of language_model.LanguageModel: its Params' names under the layer's number
    (W_Q, W_K, W_V, W_O as x @ W; W_1, b_1, W_2, b_2; norm_attention, norm_mlp)."""

    def __init__(self, book):
        super().__init__()
        E, hidden = book.width, book.feed_forward
        shared = book.kv_heads * (E // book.heads)  # the columns of W_K and W_V
        shapes = {"W_Q": (E, E), "W_K": (E, shared), "W_V": (E, shared), "W_O": (E, E)}
        if book.mlp:
            shapes.update({"W_1": (E, hidden), "b_1": (hidden,), "W_2": (hidden, E), "b_2": (E,)})
        for name, shape in shapes.items():  # shapes here, values from load_state_dict
            setattr(self, name, _parameter(np.zeros(shape)))
        if book.norm:  # nn.LayerNorm's eps is the book's transformer.EPS, 1e-5
            self.norm_attention = nn.LayerNorm(E)
            if book.mlp:
                self.norm_mlp = nn.LayerNorm(E)
        self.book = book

    def attend(self, z, bias, weights=None):
        """Causal self-attention on z (N, L, E) by torch's scaled_dot_product_attention with the
        model's mask as an additive ``bias``, or its own causal mask where that is all the bias
        holds (train's model: rotary positions, no window, no null key); ``weights``, a list,
        also gets the layer's weights (N, H, L, L) computed out (for train's records)."""
        book = self.book
        H, G, d = book.heads, book.kv_heads, book.width // book.heads
        q = (z @ self.W_Q).unflatten(-1, (H, d)).transpose(1, 2)  # split_heads: (N, H, L, d)
        k = (z @ self.W_K).unflatten(-1, (G, d)).transpose(1, 2)  # (N, G, L, d)
        v = (z @ self.W_V).unflatten(-1, (G, d)).transpose(1, 2)
        if book.positions == "rotary":
            q, k = _rope(q), _rope(k)
        if book.null_key:  # a zero key with a zero value: its logit q · 0 is the null's 0
            k, v = F.pad(k, (0, 0, 0, 1)), F.pad(v, (0, 0, 0, 1))
        causal = book.positions != "alibi" and book.window is None and not book.null_key
        heads = F.scaled_dot_product_attention(
            q, k, v, None if causal else bias, is_causal=causal, enable_gqa=G != H
        )
        if weights is not None:
            scores = q @ k.repeat_interleave(H // G, dim=1).transpose(-1, -2) / d**0.5
            weights.append(torch.softmax(scores + bias, dim=-1)[..., : z.shape[1]])
        return heads.transpose(1, 2).flatten(-2) @ self.W_O  # merge_heads, then W_O

    def forward(self, x, bias, weights=None):
        x = x + self.attend(self.norm_attention(x) if self.book.norm else x, bias, weights)
        if self.book.mlp:
            z = self.norm_mlp(x) if self.book.norm else x
            x = x + F.relu(z @ self.W_1 + self.b_1) @ self.W_2 + self.b_2
        return x


class LanguageModel(nn.Module):
    """language_model.LanguageModel: its layers registered as "0", "1", … so that the state
    dict's names are the book's Params' ("0.W_Q", "norm.weight", "unembed")."""

    def __init__(self, book, params):
        super().__init__()
        self.embed = _parameter(params["embed"])
        if book.positions == "learned":
            self.positions = _parameter(params["positions"])
        for i in range(book.layers):
            self.add_module(str(i), LanguageLayer(book))
        self.norm = nn.LayerNorm(book.width) if book.norm else None
        self.unembed = _parameter(params["unembed"])
        self.load_state_dict({name: torch.tensor(value) for name, value in params.items()})
        self.book = book

    def bias(self, length: int) -> torch.Tensor:
        """What the attention adds to the scores (H, L, L), or (H, L, L + 1) with the null key
        last: −inf where query t may not read key s (s > t, or out of the window), ALiBi's
        −m_h (t − s) where it may, else 0."""
        book = self.book
        allowed = torch.from_numpy(book.allowed(length))
        bias = torch.zeros(book.heads, length, length)
        if book.positions == "alibi":
            t = torch.arange(length)
            slopes = torch.from_numpy(language_model.alibi_slopes(book.heads))
            bias = -slopes[:, None, None] * (t[:, None] - t[None, :])
        bias = bias.masked_fill(~allowed, float("-inf"))
        return F.pad(bias, (0, 1)) if book.null_key else bias

    def forward(self, tokens, weights=None):
        """The logits (N, L, V) of tokens (N, L); ``weights``: as LanguageLayer.attend's."""
        length = tokens.shape[1]
        x = F.embedding(tokens, self.embed)  # p["embed"][tokens]
        if self.book.positions == "learned":
            x = x + self.positions[:length]
        elif self.book.positions == "sinusoidal":
            x = x + _positions(length, self.book.width)
        bias = self.bias(length)
        for i in range(self.book.layers):
            x = getattr(self, str(i))(x, bias, weights)
        return (self.norm(x) if self.book.norm else x) @ self.unembed


def _language_record(module: LanguageModel, data) -> dict:
    """language_runs.measure(model, params) in torch: the losses by position and every layer's
    weights from one pass, the head scores by the book's induction functions on them."""
    every = []
    with torch.no_grad():
        logits = module(torch.from_numpy(data.tokens), every)
        losses = F.cross_entropy(
            logits[:, :-1].transpose(1, 2), torch.from_numpy(data.tokens[:, 1:]), reduction="none"
        ).numpy()  # (N, L − 1): position t's loss on token t + 1
    return language_runs.record(losses, [w.numpy() for w in every], data)


def book_language(steps: int) -> tuple[np.ndarray, dict, language_runs.History]:
    result, history = language_runs.train.uncached(seed=0, steps=steps)
    return result.curve, result.params, history


def torch_language(steps: int) -> tuple[np.ndarray, nn.Module, language_runs.History]:
    """language_runs.train(seed=0, steps=steps) in torch: the same model (train's defaults:
    width 32, 2 layers of 2 heads, rotary positions, attention only), the same batches, Adam
    and records every EVERY steps."""
    runs = language_runs
    book = language_model.LanguageModel(runs.VOCABULARY, runs.CONTEXT, 32, 2, 2, "rotary")
    module = LanguageModel(book, book.init(0))  # train's params: model.init(seed)
    adam = _adam(module, runs.LEARNING_RATE)
    draws = np.random.RandomState(0 + 1)  # train's batches come from RandomState(seed + 1)
    held_out, curve, records = runs.held_out(), np.empty(steps), []
    for step in range(steps):
        if step % runs.EVERY == 0:
            records.append((step, _language_record(module, held_out)))
        seed = draws.randint(2**31)  # as train: repeats(BATCH, LENGTH, VOCABULARY, seed)
        batch = torch.from_numpy(
            copying.repeats(runs.BATCH, runs.LENGTH, runs.VOCABULARY, seed).tokens
        )
        adam.zero_grad()
        logits = module(batch)[:, :-1]  # position t predicts token t + 1
        loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())  # the mean
        loss.backward()
        curve[step] = loss.item()
        if not np.isfinite(curve[step]):
            raise ValueError(f"the loss became {curve[step]} at step {step}")
        adam.step()
    records.append((steps, _language_record(module, held_out)))
    history = runs.History(
        np.array([s for s, _ in records]),
        *(np.array([r[name] for _, r in records]) for name in runs.History._fields[1:]),
    )
    return curve, module, history


# ------------------------------------------------------------------ timing
def _timed(function) -> tuple[float, np.ndarray]:
    """(seconds, loss curve) of one call of ``function``."""
    start = time.perf_counter()
    curve = function()[0]
    return time.perf_counter() - start, curve


def _best(function, repeats: int, warm_up: bool) -> tuple[float, np.ndarray]:
    """(the fastest of ``repeats`` calls, the loss curve), after an untimed call if
    ``warm_up``."""
    if warm_up:
        function()
    runs = [_timed(function) for _ in range(repeats)]
    return min(seconds for seconds, _ in runs), runs[-1][1]


def _agreement(train) -> dict[str, tuple]:
    """Per model, (largest loss-curve gap, largest weight gap, and for the language model the
    largest gap of train's records, else None) after AGREEMENT steps."""
    pairs = {"Part II head": (book_head(AGREEMENT), torch_head(AGREEMENT))}
    for name in SEQ2SEQ:
        pairs[name] = book_seq2seq(name, train, AGREEMENT), torch_seq2seq(name, train, AGREEMENT)
    pairs[LANGUAGE] = book_language(AGREEMENT), torch_language(AGREEMENT)
    return {
        name: (
            float(np.max(np.abs(book[0] - peer[0]))),
            _gap(book[1], peer[1]),
            max(float(np.max(np.abs(b - p))) for b, p in zip(book[2], peer[2]))
            if name == LANGUAGE
            else None,
        )
        for name, (book, peer) in pairs.items()
    }


def main() -> None:
    train, _ = translation.book_data()
    runs = {  # name: (book, torch, the work, repeats, warm-up)
        "Part II head": (
            lambda: book_head(HEAD_ITERATIONS),
            lambda: torch_head(HEAD_ITERATIONS),
            f"{HEAD_ITERATIONS} iterations",
            HEAD_REPEATS,
            True,
        ),
        **{
            name: (
                lambda name=name: book_seq2seq(name, train, translation_runs.STEPS),
                lambda name=name: torch_seq2seq(name, train, translation_runs.STEPS),
                f"{translation_runs.STEPS} steps of 32",
                SEQ2SEQ_REPEATS,
                False,
            )
            for name in SEQ2SEQ
        },
        LANGUAGE: (
            lambda: book_language(LANGUAGE_STEPS),
            lambda: torch_language(LANGUAGE_STEPS),
            f"{LANGUAGE_STEPS} steps of {language_runs.BATCH}",
            LANGUAGE_REPEATS,
            False,
        ),
    }
    print(
        f"torch {torch.__version__} peer: the book's numpy training and the same in torch, "
        "float64, one thread"
    )
    print(f"  the same work: {AGREEMENT} steps from the same initial weights, largest gaps")
    for name, (curve_gap, weight_gap, records_gap) in _agreement(train).items():
        records = "" if records_gap is None else f"   records {records_gap:7.1e}"
        print(
            f"    {name:<14} loss curve {curve_gap:7.1e}   weights after {weight_gap:7.1e}"
            + records
        )
    start, rng = time.perf_counter(), np.random.RandomState(0)
    for _ in range(translation_runs.STEPS):
        translation.draw_batch(train, rng, translation_runs.RECURRENT_SIZES["batch"])
    print(
        "  Part IV's batches: drawn inside every timed step on both sides, by the book's\n"
        f"    translation.draw_batch from RandomState(0) ({translation_runs.STEPS} draws take "
        f"{(time.perf_counter() - start) * 1000:.0f} ms)"
    )
    sizes = language_runs.BATCH, language_runs.LENGTH, language_runs.VOCABULARY
    start, draws = time.perf_counter(), np.random.RandomState(1)
    for _ in range(LANGUAGE_STEPS):
        copying.repeats(*sizes, draws.randint(2**31))
    print(
        "  Part VII's batches: drawn inside every timed step on both sides, as train draws them:\n"
        f"    repeats({', '.join(map(str, sizes))}, seed), each seed drawn from "
        f"RandomState(seed + 1 = 1)\n    ({LANGUAGE_STEPS} draws take "
        f"{(time.perf_counter() - start) * 1000:.0f} ms); "
        "both sides also record the held-out losses and head\n    scores every "
        f"{language_runs.EVERY} steps, as train does"
    )

    idle, busy, gaps = {}, {}, {}
    for name, (book, peer, _, repeats, warm_up) in runs.items():
        (book_time, book_curve), (peer_time, peer_curve) = (
            _best(side, repeats, warm_up) for side in (book, peer)
        )
        idle[name], gaps[name] = (book_time, peer_time), np.abs(book_curve - peer_curve)
        with busy_core():
            busy[name] = _timed(book)[0], _timed(peer)[0]
    print(
        f"  idle: best of {HEAD_REPEATS} after a warm-up (head), best of {SEQ2SEQ_REPEATS} "
        f"(translators),\n    best of {LANGUAGE_REPEATS} (language model); book ÷ torch below 1: "
        "the book is faster"
    )
    print(f"    {'model':<14}{'work':>18}{'book':>10}{'torch':>10}{'book ÷ torch':>14}")
    for name, (book, peer) in idle.items():
        print(f"    {name:<14}{runs[name][2]:>18}{book:9.2f}s{peer:9.2f}s{book / peer:14.2f}")
    for name, (book, peer) in idle.items():
        met = _verdict(book <= peer)
        print(f"    {name}: book at least as fast as torch f64 on one thread: {met}")
    print("  beside a busy core, one run each: seconds, and busy ÷ idle")
    print(f"    {'model':<14}{'book':>10}{'torch':>10}{'book':>8}{'torch':>8}")
    for name, (book, peer) in busy.items():
        slowdown = book / idle[name][0]
        print(
            f"    {name:<14}{book:9.2f}s{peer:9.2f}s{slowdown:7.2f}x{peer / idle[name][1]:7.2f}x"
            f"   book <= {TARGET_SLOWDOWN}x: {_verdict(slowdown <= TARGET_SLOWDOWN)}"
        )
    print("  largest loss gap over the whole timed runs (rounding grows in a long run; no target)")
    for name, gap in gaps.items():
        print(f"    {name:<14} {np.max(gap):7.1e}")
    early = np.max(gaps["Part II head"][:HEAD_CHAOS])
    print(
        f"    (the head's first {HEAD_CHAOS} iterations: {early:.1e}; past ~100 its training is "
        "chaotic, as bench_udhr.py notes)"
    )
    (book_idle, peer_idle), (book_busy, peer_busy) = idle[LANGUAGE], busy[LANGUAGE]
    print(
        f"  Part VII's language model, {runs[LANGUAGE][2]}: torch ÷ book "
        f"{peer_idle / book_idle:.2f} idle, {peer_busy / book_busy:.2f} beside a busy core\n"
        "    target: at least 1 (the numpy models train no slower than torch float64 on one "
        "thread\n    on the same work)\n"
        f"    idle: {_verdict(peer_idle >= book_idle)}; beside a busy core: "
        f"{_verdict(peer_busy >= book_busy)}"
    )


if __name__ == "__main__":
    main()
