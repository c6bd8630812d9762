"""A plain-Python, one-sequence-at-a-time version of Part I, kept as the oracle.

It follows the lesson's algorithm literally (lists, loops, math.exp) and shares
no code with the library, so that models/single_query.py's vectorised
version can be checked against it (tests/test_lesson.py) and timed against it
(bench/).
"""

from __future__ import annotations

import math

T, D, MASK = 12, 3, 0xFFFFFFFF


def stream(seed):
    """The lesson's generator: hash the seed, then step an LCG; returns a draw function."""
    h = ((seed ^ (seed >> 16)) * 2246822507) & MASK
    h = ((h ^ (h >> 13)) * 3266489909) & MASK
    state = (h ^ (h >> 16)) & MASK

    def draw():
        nonlocal state
        state = (state * 1664525 + 1013904223) & MASK
        return state / 4294967296

    return draw


def sequences(n, seed):
    """List of (inputs, label, marker); inputs is a list of T [reading, flag] pairs."""
    out = []
    for i in range(n):
        draw = stream(seed + i)
        draw()  # the region, unused by the task
        readings = [0.0]
        for _ in range(T - 1):
            a, b, c = draw(), draw(), draw()
            readings.append(round((a + b + c - 1.5) * 1.9, 3))
        marker = 2 + int(draw() * (T - 2))
        inputs = [[readings[t], 1.0 if t == marker else 0.0] for t in range(T)]
        out.append((inputs, 1 if readings[marker] > 0.35 else 0, marker))
    return out


def initial(seed):
    draw = stream(seed)

    def weight():
        a, b, c = draw(), draw(), draw()
        return (a + b + c - 1.5) * 0.9

    wk = [[weight(), weight()] for _ in range(D)]
    wv = [[weight(), weight()] for _ in range(D)]
    q = [weight() for _ in range(D)]
    w = [weight() for _ in range(D)]
    return {"wk": wk, "wv": wv, "q": q, "w": w, "b": 0.0}


def run(net, inputs, dropped=None):
    """Keys, values, weights, context and logit for one sequence; ``dropped`` is left out."""
    keys = [[row[0] * x[0] + row[1] * x[1] for row in net["wk"]] for x in inputs]
    values = [[row[0] * x[0] + row[1] * x[1] for row in net["wv"]] for x in inputs]
    scores = [sum(qi * ki for qi, ki in zip(net["q"], k)) / math.sqrt(D) for k in keys]
    kept = [t for t in range(T) if t != dropped]
    top = max(scores[t] for t in kept)
    exps = [math.exp(scores[t] - top) if t in kept else 0.0 for t in range(T)]
    total = sum(exps)
    weights = [e / total for e in exps]
    context = [sum(weights[t] * values[t][i] for t in range(T)) for i in range(D)]
    logit = sum(wi * ci for wi, ci in zip(net["w"], context)) + net["b"]
    return keys, values, weights, context, logit


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def train(seed, data, epochs=200, lr=0.6):
    net = initial(seed)
    n = len(data)
    for _ in range(epochs):
        g = {
            "wk": [[0.0, 0.0] for _ in range(D)],
            "wv": [[0.0, 0.0] for _ in range(D)],
            "q": [0.0] * D,
            "w": [0.0] * D,
            "b": 0.0,
        }
        for inputs, label, _ in data:
            keys, values, weights, context, logit = run(net, inputs)
            err = sigmoid(logit) - label
            g["b"] += err
            for i in range(D):
                g["w"][i] += err * context[i]
            dweight = [err * sum(net["w"][i] * values[t][i] for i in range(D)) for t in range(T)]
            avg = sum(weights[t] * dweight[t] for t in range(T))
            for t in range(T):
                dscore = weights[t] * (dweight[t] - avg) / math.sqrt(D)
                for i in range(D):
                    g["q"][i] += dscore * keys[t][i]
                    for c in range(2):
                        g["wk"][i][c] += dscore * net["q"][i] * inputs[t][c]
                        g["wv"][i][c] += err * weights[t] * net["w"][i] * inputs[t][c]
        for i in range(D):
            net["q"][i] -= lr * g["q"][i] / n
            net["w"][i] -= lr * g["w"][i] / n
            for c in range(2):
                net["wk"][i][c] -= lr * g["wk"][i][c] / n
                net["wv"][i][c] -= lr * g["wv"][i][c] / n
        net["b"] -= lr * g["b"] / n
    return net


def argmax(xs):
    return max(range(len(xs)), key=lambda i: xs[i])


def measures(net, train_set, heldout):
    correct = lambda data: sum((run(net, x)[4] > 0) == (y == 1) for x, y, _ in data) / len(data)
    weight = hits = agree = effect_sum = 0.0
    heavy = inert = 0
    for inputs, _, marker in heldout:
        weights = run(net, inputs)[2]
        weight += weights[marker]
        hits += argmax(weights) == marker
        p = sigmoid(run(net, inputs)[4])
        effects = [abs(sigmoid(run(net, inputs, t)[4]) - p) for t in range(T)]
        top = argmax(weights)
        agree += top == argmax(effects)
        effect_sum += effects[top]
        if weights[top] > 0.5:
            heavy += 1
            inert += effects[top] < 0.05
    n = len(heldout)
    return {
        "train_accuracy": correct(train_set),
        "heldout_accuracy": correct(heldout),
        "marker_weight": weight / n,
        "marker_hit_rate": hits / n,
        "agreement": agree / n,
        "effect_of_heaviest": effect_sum / n,
        "heavy_count": heavy,
        "heavy_inert_count": inert,
    }


def summary(data_seed=20260218, init_seeds=(20260219, 20260220), epochs=200):
    data = sequences(720, data_seed)
    train_set, heldout = data[:360], data[540:]
    rate = sum(y for _, y, _ in heldout) / len(heldout)
    return {
        "baseline": max(rate, 1 - rate),
        "runs": [measures(train(s, train_set, epochs), train_set, heldout) for s in init_seeds],
    }
