"""Part II's head trained one sentence at a time, kept as the oracle.

A literal transcription of the demo's algorithm with query="token": a Python
loop over sentences, the self-position blanked with -1e9 before a row softmax
written here, gradients summed over sentences and averaged before Adam.  It
imports nothing from the library, so tests/test_udhr.py can check the vectorised
version against it and bench/bench_udhr.py can time the two side by side.
"""

from __future__ import annotations

import numpy as np

WIDTH = 24
B1, B2, EPS, LR = 0.9, 0.999, 1e-8, 0.02
NAMES = ("E", "W_Q", "W_K", "W_V", "W_O")


def row_softmax(scores):
    shifted = scores - scores.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def initial(vocab_size, seed):
    """The five tensors, drawn in order from one RandomState."""
    draw = np.random.RandomState(seed)
    shapes = [
        (vocab_size, WIDTH),
        (WIDTH, WIDTH),
        (WIDTH, WIDTH),
        (WIDTH, WIDTH),
        (WIDTH, vocab_size),
    ]
    return {name: 0.1 * draw.randn(*shape) for name, shape in zip(NAMES, shapes)}


def one_sentence(p, ids, acc):
    """Loss of one sentence (a list of token ids); its gradients are added into acc."""
    n = len(ids)
    root = np.sqrt(WIDTH)
    x = p["E"][ids]
    q, k, v = x @ p["W_Q"], x @ p["W_K"], x @ p["W_V"]
    own = np.eye(n, dtype=bool)
    s = np.where(own, -1e9, q @ k.T / root)
    a = row_softmax(s)
    z = a @ v
    prob = row_softmax(z @ p["W_O"])
    rows = np.arange(n)
    loss = -np.log(prob[rows, ids] + 1e-12).sum()

    g_logits = prob.copy()
    g_logits[rows, ids] -= 1.0
    acc["W_O"] += z.T @ g_logits
    g_z = g_logits @ p["W_O"].T
    g_a = g_z @ v.T
    g_v = a.T @ g_z
    g_s = a * (g_a - (g_a * a).sum(axis=1, keepdims=True))
    g_s[own] = 0.0
    g_q = g_s @ k / root
    g_k = g_s.T @ q / root
    acc["W_Q"] += x.T @ g_q
    acc["W_K"] += x.T @ g_k
    acc["W_V"] += x.T @ g_v
    g_x = g_q @ p["W_Q"].T + g_k @ p["W_K"].T + g_v @ p["W_V"].T
    np.add.at(acc["E"], ids, g_x)
    return loss


def train(sentences, seed=0, epochs=4000, vocab=None):
    """Train on token lists; returns (mean loss per predicted token before each step, params)."""
    if vocab is None:
        vocab = sorted({w for s in sentences for w in s})
    index = {w: i for i, w in enumerate(vocab)}
    id_lists = [[index[w] for w in s] for s in sentences]
    p = initial(len(vocab), seed)
    first = {name: np.zeros_like(t) for name, t in p.items()}
    second = {name: np.zeros_like(t) for name, t in p.items()}
    curve = []
    for step in range(1, epochs + 1):
        acc = {name: np.zeros_like(t) for name, t in p.items()}
        total, count = 0.0, 0
        for ids in id_lists:
            total += one_sentence(p, ids, acc)
            count += len(ids)
        curve.append(total / count)
        for name in NAMES:
            g = acc[name] / len(id_lists)
            first[name] = B1 * first[name] + (1 - B1) * g
            second[name] = B2 * second[name] + (1 - B2) * (g * g)
            m_hat = first[name] / (1 - B1**step)
            v_hat = second[name] / (1 - B2**step)
            p[name] -= LR * m_hat / (np.sqrt(v_hat) + EPS)
    return curve, p
