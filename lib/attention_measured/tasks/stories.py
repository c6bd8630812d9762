"""Stories of people moving between places and picking things up, with a question about where
a person or a thing is (Part V, section 5, after bAbI's first tasks): the supporting facts are
known by construction.  :func:`encode` turns stories into the bags of words a memory network
reads."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import checks

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

    def __post_init__(self):
        """Refuse fields that do not describe the same N stories."""
        for name in ("sentences", "questions"):
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, (list, tuple)):
                raise TypeError(f"{name} must be a list with one entry per story, got {value!r}")
        answers = checks.integers(self.answers, "answers", 0, len(PLACES) - 1)
        facts = checks.integers(self.facts, "facts", 0, SLOTS - 1)
        n = len(self.sentences)
        if len(self.questions) != n or answers.shape != (n,) or facts.shape != (n, 2):
            raise ValueError(
                f"sentences, questions, answers (N,) and facts (N, 2) must describe the same "
                f"stories: {n} sentences lists, {len(self.questions)} questions, answers "
                f"{answers.shape}, facts {facts.shape}"
            )

    def __len__(self) -> int:
        return len(self.answers)

    def text(self, i: int) -> str:
        """Story i as readable lines, each sentence numbered, then the question and its answer."""
        i = checks.index(i, "i", len(self.sentences))
        lines = [f"{j}: {' '.join(s)}" for j, s in enumerate(self.sentences[i])]
        return "\n".join(
            lines + [f"Q: {' '.join(self.questions[i])}?  A: {PLACES[self.answers[i]]}"]
        )


MAX_STORIES = 100_000  # the most stories one call draws (the book draws 1,000 to train)


def stories(n: int = 1000, facts: int = 1, seed: int = 0, length: int = SLOTS) -> Stories:
    """Stories of ``length`` sentences and a question needing ``facts`` supporting facts (1 or
    2).

    facts=1: every sentence is "<person> went to the <place>"; the question is "where is
    <person>" about someone who moved; the answer is that person's last place.  facts=2: one
    sentence is "<person> picked up the <object>"; the question is "where is the <object>"; the
    answer is where the person who picked it up went last (a move of that person is guaranteed).
    """
    n, length = checks.integer(n, "n", 1, MAX_STORIES), checks.integer(length, "length", 2)
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
        raise TypeError(f"data must be Stories (from stories()), got {type(data).__name__}")
    memories = np.zeros((len(data), SLOTS, len(WORDS)))
    used = np.zeros((len(data), SLOTS), dtype=bool)
    for i, sentences in enumerate(data.sentences):
        memories[i, : len(sentences)] = bag_of_words(sentences)
        used[i, : len(sentences)] = True
    return memories, bag_of_words(data.questions), used
