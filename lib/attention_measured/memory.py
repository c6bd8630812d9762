"""Part III, section 8: an end-to-end memory network with hops (Sukhbaatar et al. 2015).

- :func:`stories`  tiny story-question tasks generated in code: one supporting fact
  ("where is mary?") or two ("where is the apple?": who picked it up, and where that
  person went last)
- :class:`MemoryNetwork`  sentences as bags of words stored in memory; a question
  vector reads the memory through softmax attention, ``hops`` times, each read
  added to the question; then a softmax over the places
- :func:`hop_measures`  accuracy, and where each hop's attention lands

Shapes: N stories, M memory slots (sentences, the most recent last), V words, d embedding size,
K hops.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import checks
from .attention import as_rows, softmax, softmax_backward
from .cache import remembered
from .losses import softmax_cross_entropy
from .params import Params, initialiser
from .training import Trained, trained

PEOPLE = ("mary", "john", "sandra", "daniel")
PLACES = ("kitchen", "garden", "office", "hallway", "bathroom", "bedroom")
OBJECTS = ("apple", "football", "milk")
WORDS = ("went", "to", "the", "picked", "up", "where", "is") + PEOPLE + PLACES + OBJECTS
WORD_ID = {w: i for i, w in enumerate(WORDS)}
SLOTS = 8  # M: sentences a story may hold


@dataclass(frozen=True)
class Stories:
    """sentences: N lists of sentences (lists of words); questions: N lists of words; answers:
    (N,) index into PLACES; facts: (N, 2) the supporting sentences (the same index twice for
    the one-fact task), counted from the start."""

    sentences: list
    questions: list
    answers: np.ndarray
    facts: np.ndarray

    def __len__(self) -> int:
        return len(self.answers)

    def text(self, i: int) -> str:
        """Story i as readable lines, each sentence numbered, then the question and its answer."""
        i = checks.index(i, "i", len(self.sentences))
        lines = [f"{j}: {' '.join(s)}" for j, s in enumerate(self.sentences[i])]
        return "\n".join(
            lines + [f"Q: {' '.join(self.questions[i])}?  A: {PLACES[self.answers[i]]}"]
        )


def stories(n: int = 1000, facts: int = 1, seed: int = 0, length: int = SLOTS) -> Stories:
    """Stories of ``length`` sentences and a question needing ``facts`` supporting facts (1 or
    2).

    facts=1: every sentence is "<person> went to the <place>"; the question is "where is
    <person>" about someone who moved; the answer is that person's last place.  facts=2: one
    sentence is "<person> picked up the <object>"; the question is "where is the <object>"; the
    answer is where the person who picked it up went last (a move of that person is guaranteed).
    """
    n, length = checks.integer(n, "n", 1), checks.integer(length, "length", 2)
    facts = checks.integer(facts, "facts", 1, 2)  # 1 or 2; True is not a number of facts
    if length > SLOTS:
        raise ValueError(f"a story holds at most {SLOTS} sentences, got {length}")
    rng = np.random.RandomState(checks.seed(seed))
    all_sentences, questions, answers, support = [], [], [], []
    for _ in range(n):
        movers = rng.randint(len(PEOPLE), size=length)
        places = rng.randint(len(PLACES), size=length)
        sentences = [
            [PEOPLE[who], "went", "to", "the", PLACES[where]] for who, where in zip(movers, places)
        ]
        if facts == 1:
            last = int(rng.randint(length))  # the supporting fact: a move
            person = movers[last]
            last = max(j for j in range(length) if movers[j] == person)
            questions.append(["where", "is", PEOPLE[person]])
            answers.append(places[last])
            support.append((last, last))
        else:
            pickup = int(rng.randint(length))  # this sentence becomes the pick-up
            person = rng.randint(len(PEOPLE))
            moves = [j for j in range(length) if j != pickup and movers[j] == person]
            if not moves:  # make sure the holder goes somewhere
                j = int(rng.choice([j for j in range(length) if j != pickup]))
                movers[j] = person
                sentences[j][0] = PEOPLE[person]
                moves = [j]
            thing = OBJECTS[rng.randint(len(OBJECTS))]
            sentences[pickup] = [PEOPLE[person], "picked", "up", "the", thing]
            last = max(moves)
            questions.append(["where", "is", "the", thing])
            answers.append(places[last])
            support.append((pickup, last))
        all_sentences.append(sentences)
    return Stories(all_sentences, questions, np.array(answers), np.array(support))


def bag_of_words(sentences) -> np.ndarray:
    """Word counts of each sentence: a list of word lists -> (len, V)."""
    counts = np.zeros((len(sentences), len(WORDS)))
    for i, sentence in enumerate(sentences):
        for word in sentence:
            if word not in WORD_ID:
                raise ValueError(f"unknown word {word!r}")
            counts[i, WORD_ID[word]] += 1
    return counts


def encode(data: Stories) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(memories (N, M, V), questions (N, V), used (N, M) boolean); story sentences fill the
    first slots.
    """
    if not isinstance(data, Stories):
        raise TypeError(f"data must be Stories (memory.stories), got {type(data).__name__}")
    memories = np.zeros((len(data), SLOTS, len(WORDS)))
    used = np.zeros((len(data), SLOTS), dtype=bool)
    for i, sentences in enumerate(data.sentences):
        memories[i, : len(sentences)] = bag_of_words(sentences)
        used[i, : len(sentences)] = True
    return memories, bag_of_words(data.questions), used


class MemoryNetwork:
    """Sukhbaatar et al.'s end-to-end memory network with adjacent weight tying (section 8).

    K + 1 word embeddings E_0..E_K (d, V) and slot vectors T_0..T_K (M, d) (the paper's temporal
    encoding).  Hop k (from 0) matches on m_i = E_k x_i + T_k[i] and returns c_i = E_{k+1} x_i +
    T_{k+1}[i]: the output embedding of one hop is the input embedding of the next.  The
    question enters as u_0 = E_0 q; a = softmax(u_k · m) over the used slots; u_{k+1} = u_k +
    Σ_i a_i c_i; the answer is softmax(W u_K) over the places.
    """

    def __init__(self, hops: int = 1, size: int = 20):
        self.hops, self.size = checks.integer(hops, "hops", 1), checks.integer(size, "size", 1)

    @initialiser
    def init(self, seed: int = 0) -> Params:
        rng = np.random.RandomState(checks.seed(seed))
        K, d, V = self.hops, self.size, len(WORDS)
        return Params(
            E=rng.normal(0, 0.1, (K + 1, d, V)),
            T=rng.normal(0, 0.1, (K + 1, SLOTS, d)),
            W=rng.normal(0, 0.1, (len(PLACES), d)),
        )

    @checks.model_params
    def forward(self, p, memories, questions, used, weights=None, scale=None):
        """Logits over the places (N, P), each hop's weights (K, N, M), and the intermediates
        for backward.

        ``used`` (N, M) is True where a slot holds a sentence; it is also Part I's ``keep``.
        Part V's changes: ``weights`` (K, N, M), each hop's weights replaced; ``scale`` (N, M),
        each stored sentence multiplied by it.
        """
        if scale is not None:
            memories = memories * checks.array(scale, "scale", shape=used.shape)[..., None]
        if weights is not None:
            weights = checks.array(weights, "weights", shape=(self.hops, *used.shape))
        embedded = []  # m_i or c_i = E_k x_i + T_k[i] for every hop k: (N, M, d) each
        for k in range(self.hops + 1):
            shape = memories.shape[:2] + (self.size,)
            embedded.append((as_rows(memories) @ p["E"][k].T).reshape(shape) + p["T"][k])
        u = [questions @ p["E"][0].T]  # u_0: (N, d)
        hops = []
        for k in range(self.hops):
            if weights is None:
                a = softmax(np.einsum("nd,nmd->nm", u[-1], embedded[k]), used)
            else:
                a = weights[k]
            u.append(u[-1] + np.einsum("nm,nmd->nd", a, embedded[k + 1]))
            hops.append(a)
        return u[-1] @ p["W"].T, np.array(hops), (u, embedded)

    @checks.model_params
    def loss_and_grads(self, p, data: tuple, answers):
        """data = :func:`encode`'s three arrays; mean cross-entropy over the stories and its
        gradients.
        """
        memories, questions, used = data
        answers = np.asarray(answers)
        logits, weights, (u, embedded) = self.forward(p, memories, questions, used)
        n = len(answers)
        losses, g_logits = softmax_cross_entropy(logits, answers)
        loss = float(losses.mean())
        g_logits /= n
        g_embedded = [np.zeros(e.shape) for e in embedded]
        g_u = g_logits @ p["W"]  # (N, d)
        for k in reversed(range(self.hops)):
            a = weights[k]
            # u_{k+1} = u_k + Σ a c
            g_embedded[k + 1] += a[..., None] * g_u[:, None, :]
            g_scores = softmax_backward(a, np.einsum("nmd,nd->nm", embedded[k + 1], g_u))
            # scores = u_k · m
            g_embedded[k] += g_scores[..., None] * u[k][:, None, :]
            g_u = g_u + np.einsum("nm,nmd->nd", g_scores, embedded[k])
        # E_k's gradient sums every story's and slot's outer product: one matrix product each
        g_E = np.array([as_rows(g).T @ as_rows(memories) for g in g_embedded])
        g_E[0] += g_u.T @ questions  # u_0 = E_0 q
        return loss, Params(
            E=g_E, T=np.array([g.sum(axis=0) for g in g_embedded]), W=g_logits.T @ u[-1]
        )


def hop_measures(model: MemoryNetwork, p, data: Stories) -> dict:
    """Accuracy, and for each hop the share of stories whose heaviest slot is the first or the
    second supporting fact: arrays (K,) under "on_first" and "on_second" (section 8)."""
    memories, questions, used = encode(data)
    logits, weights, _ = model.forward(p, memories, questions, used)
    heaviest = weights.argmax(axis=2)  # (K, N)
    return {
        "accuracy": float(np.mean(logits.argmax(axis=1) == data.answers)),
        "on_first": (heaviest == data.facts[:, 0]).mean(axis=1),
        "on_second": (heaviest == data.facts[:, 1]).mean(axis=1),
    }


MEMORY_EPOCHS = 400
MEMORY_LEARNING_RATE = 0.02


@remembered
def memory_data(facts: int) -> tuple[Stories, Stories]:
    """Section 8's data for one task: 1000 training stories (seed 1) and 500 test stories (seed
    2)."""
    return stories(1000, facts, seed=1), stories(500, facts, seed=2)


def memory_run(facts: int, hops: int, seed: int) -> Trained:
    """A :class:`MemoryNetwork` with ``hops`` hops trained from ``seed`` on :func:`memory_data`:
    a Trained (model, params, curve).
    """
    train = memory_data(facts)[0]
    return trained(
        MemoryNetwork(hops), seed, encode(train), train.answers, MEMORY_EPOCHS, MEMORY_LEARNING_RATE
    )


HOPS_SHOWN = 3  # the hops of the network section 8's explorer steps through


def hop_report(story: int = 0, hop: int = 1, hops: int = HOPS_SHOWN, seed: int = 0) -> dict:
    """One test story of the two-fact task through the memory network with ``hops`` hops
    (section 8).

    Returns the story's "sentences", "question", "answer" and supporting "facts", the weights of
    hop ``hop`` (1-based) over its sentences, and the "prediction".
    """
    test = memory_data(2)[1]
    index = checks.index(story, "story", len(test))
    hop = checks.integer(hop, "hop", 1, checks.integer(hops, "hops", 1))
    model, params, _ = memory_run(2, hops, seed)
    one = Stories(
        test.sentences[index : index + 1],
        test.questions[index : index + 1],
        test.answers[index : index + 1],
        test.facts[index : index + 1],
    )
    logits, weights, _ = model.forward(params, *encode(one))
    n = len(one.sentences[0])
    return {
        "sentences": one.sentences[0],
        "question": one.questions[0],
        "answer": PLACES[one.answers[0]],
        "facts": tuple(int(f) for f in one.facts[0]),
        "weights": weights[hop - 1, 0, :n],
        "prediction": PLACES[int(logits[0].argmax())],
        "hop": hop,
    }
