import numpy as np
import pytest
from gradcheck import numeric_gradient

from attention_measured.book import flavour_explorers
from attention_measured.models import memory_network
from attention_measured.tasks import stories


@pytest.mark.parametrize("hops", [1, 3])
def test_memory_network_gradients(hops):
    data = stories.stories(n=4, facts=2, seed=1, length=5)
    encoded = stories.encode(data)
    model = memory_network.MemoryNetwork(hops=hops, size=3)
    p = model.init(seed=2)
    for k in p:
        p[k] = p[k] * 10  # away from the near-uniform start, so every path matters
    _, grads = model.loss_and_grads(p, encoded, data.answers)
    for k in p:
        numeric = numeric_gradient(lambda: model.loss_and_grads(p, encoded, data.answers)[0], p[k])
        np.testing.assert_allclose(grads[k], numeric, atol=1e-7, err_msg=k)


def test_stories_answer_their_questions():
    for facts in (1, 2):
        data = stories.stories(n=200, facts=facts, seed=0)
        for i in range(len(data)):
            sentences, question = data.sentences[i], data.questions[i]
            first, second = data.facts[i]
            if facts == 1:
                person = question[2]
                moves = [j for j, s in enumerate(sentences) if s[0] == person]
                assert first == second == max(moves)
            else:
                thing = question[3]
                holder = sentences[first]
                assert holder[1:] == ["picked", "up", "the", thing]
                moves = [j for j, s in enumerate(sentences) if s[0] == holder[0] and s[1] == "went"]
                assert second == max(moves)
            assert stories.PLACES[data.answers[i]] == sentences[second][-1]


def test_unused_slots_get_no_weight():
    data = stories.stories(n=5, seed=0, length=4)
    model = memory_network.MemoryNetwork(hops=2)
    p = model.init(0)
    weights = model.forward(p, stories.encode(data)).weights  # (N, hops, slots)
    assert np.all(weights[:, :, 4:] == 0)
    np.testing.assert_allclose(weights.sum(-1), 1.0)


def test_the_network_takes_part_fives_changes():
    data = stories.stories(n=5, seed=0, length=4)
    model = memory_network.MemoryNetwork(hops=2)
    p = model.init(0)
    memories, questions, used = stories.encode(data)
    own = model.forward(p, (memories, questions, used))
    logits, weights = own.output, own.weights
    # its own weights put back give its own output; a scale of two is the stored story doubled
    same = model.forward(p, (memories, questions, used), weights=weights).output
    np.testing.assert_allclose(same, logits, rtol=1e-12)
    scale = np.ones(used.shape)
    scale[:, 1] = 2.0
    doubled = memories.copy()
    doubled[:, 1] *= 2.0
    np.testing.assert_allclose(
        model.forward(p, (memories, questions, used), scale=scale).output,
        model.forward(p, (doubled, questions, used)).output,
    )
    with pytest.raises(ValueError, match="weights of shape"):
        model.forward(p, (memories, questions, used), weights=weights[..., :3])


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"facts": True}, TypeError, "facts must be an integer, got True"),
        ({"facts": 1.0}, TypeError, "facts must be an integer"),
        ({"facts": 3}, ValueError, "facts must be an integer between 1 and 2, got 3"),
        ({"facts": 0}, ValueError, "facts must be an integer between 1 and 2, got 0"),
        ({"n": 0}, ValueError, "n must be an integer between 1 and 100000"),
        ({"length": 1}, ValueError, "length must be an integer of at least 2"),
    ],
)
def test_stories_refuse_bad_settings(kwargs, error, message):
    with pytest.raises(error, match=message):
        stories.stories(**{"n": 3, **kwargs})


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: memory_network.MemoryNetwork(hops=0),
            ValueError,
            "hops must be an integer of at least 1",
        ),
        (lambda: memory_network.MemoryNetwork(size=2.5), TypeError, "size must be an integer"),
        (
            lambda: flavour_explorers.hop_report(500),
            ValueError,
            "story must be an integer between 0 and 499",
        ),
        (
            lambda: flavour_explorers.hop_report(0, hop=0),
            ValueError,
            "hop must be an integer between 1 and 3",
        ),
        (lambda: stories.stories(5).text(-1), ValueError, "i must be an integer between 0 and 4"),
    ],
)
def test_the_network_and_its_report_refuse_bad_settings(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_bad_arguments():
    with pytest.raises(ValueError, match="at most"):
        stories.stories(length=9)
    with pytest.raises(ValueError, match="unknown word"):
        stories.bag_of_words([["where", "is", "bob"]])
