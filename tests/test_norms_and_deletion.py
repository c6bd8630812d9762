"""Part VI's two rankings that need a model's help: Kobayashi et al.'s norm-weighted attention
(each model's ``contributions``) and Jain & Wallace's leave-one-out with the step deleted from
the input (each model's ``without_step``)."""

import numpy as np
import pytest

from attention_measured.core.attention import multi_head_attention, softmax, step_contributions
from attention_measured.measures import explanations
from attention_measured.models import cloze_head, memory_network, single_query, transformer
from attention_measured.models.heads import HeadsReader
from attention_measured.models.protocol import drop_step
from attention_measured.models.reader import Reader
from attention_measured.models.recurrent import EncoderDecoder
from attention_measured.tasks import stories


def kobayashi_reference(weights, x, W_V, b_V, W_O, heads):
    """‖Σ_h α_{h,ij} (x_j W_V^h + b_V^h) W_O^h‖ for every row i and step j, written from the
    paper's equation loop by loop: weights (H, n, m), x (m, d_in)."""
    H, n, m = weights.shape
    dv = W_V.shape[1] // heads
    out = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            total = np.zeros(W_O.shape[1])
            for h in range(H):
                block = slice(h * dv, (h + 1) * dv)
                f = (x[j] @ W_V[:, block] + b_V[block]) @ W_O[block]
                total += weights[h, i, j] * f
            out[i, j] = np.sqrt(np.sum(total**2))
    return out


def test_step_contributions_are_kobayashis_vectors_and_add_up_to_the_output():
    rng = np.random.RandomState(0)
    queries, keys = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))
    W_Q, W_K, W_V, W_O = (rng.normal(size=(4, 6)) for _ in range(4))
    W_O = rng.normal(size=(6, 4))
    biases = tuple(rng.normal(size=6) for _ in range(3)) + (rng.normal(size=4),)
    output, weights = multi_head_attention(queries, keys, W_Q, W_K, W_V, W_O, 2, biases=biases)
    values = keys @ W_V + biases[2]
    added = step_contributions(weights, values, heads=2, W_O=W_O)  # (2, 3, 5, 4)
    assert added.shape == (2, 3, 5, 4)
    np.testing.assert_allclose(added.sum(axis=2), output - biases[3], atol=1e-12)
    for example in range(2):
        reference = kobayashi_reference(weights[example], keys[example], W_V, biases[2], W_O, 2)
        np.testing.assert_allclose(np.linalg.norm(added[example], axis=-1), reference, atol=1e-12)
    # one head, no projection: a_ij v_j
    one = step_contributions(weights[:, 0], values)
    np.testing.assert_allclose(one, weights[:, 0, :, :, None] * values[:, None], atol=1e-15)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: step_contributions(np.ones((3, 4)), np.ones((5, 2))), "share m"),
        (lambda: step_contributions(np.ones((3, 2, 4)), np.ones((4, 5)), heads=3), "3 heads"),
        (
            lambda: step_contributions(np.ones((2, 3, 4)), np.ones((4, 6)), 2, np.ones((5, 6))),
            "W_O",
        ),
        (lambda: drop_step(np.ones((2, 3)), [0, 3]), "step"),
        (lambda: drop_step(np.ones((2, 3)), [0]), "one step per example"),
        (lambda: drop_step(np.ones((2, 1)), [0, 0]), "T of 2"),
    ],
)
def test_bad_input_is_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _sequences(n=6, steps=12, seed=1):
    rng = np.random.RandomState(seed)
    return np.stack([rng.normal(size=(n, steps)), rng.randint(0, 2, (n, steps))], axis=-1)


def test_part_one_norms_are_the_weights_times_the_values_length():
    model = single_query.SingleQuery()
    params, inputs = model.init(5), _sequences()
    subject = explanations.Subject(model, params, inputs, name="Part I")
    values = np.einsum("ntc,dc->ntd", inputs, params.W_V)
    expected = subject.weights * np.linalg.norm(values, axis=-1)
    np.testing.assert_allclose(subject.importance("norm-weighted attention"), expected, rtol=1e-12)
    pooled = model.forward(params, inputs).parts["pooled"]
    np.testing.assert_allclose(
        model.contributions(params, inputs).sum(axis=1), pooled @ params.W_V.T, atol=1e-12
    )


def test_deleting_a_step_is_hiding_it_where_steps_meet_only_in_the_attention():
    model = single_query.SingleQuery()
    subject = explanations.Subject(model, model.init(7), _sequences(), name="Part I")
    np.testing.assert_allclose(
        subject.importance("leave one out, deleted"),
        subject.importance("leave one out"),
        atol=1e-12,
    )


def test_each_model_s_contributions_add_up_to_what_its_attention_returns():
    inputs = _sequences()
    reader = Reader("additive")
    p = reader.init(0)
    out = reader.forward(p, inputs)
    np.testing.assert_allclose(
        reader.contributions(p, inputs).sum(axis=1), out.parts["attention"].context[:, 0]
    )
    heads = HeadsReader(heads=2)
    p = heads.init(0)
    scores, values, _ = heads.head_parts(p, inputs)
    a, dh = softmax(scores), heads.size // 2
    added = heads.contributions(p, inputs)  # (N, H, T, d)
    for h in range(2):
        block = slice(h * dh, (h + 1) * dh)
        expected = np.einsum("nt,ntv->nv", a[:, h], values[:, :, h]) @ p["W_O"][block]
        np.testing.assert_allclose(added[:, h].sum(axis=1), expected, atol=1e-12)
    net = memory_network.MemoryNetwork()
    p = net.init(0)
    story = stories.encode(stories.stories(5, seed=3))
    u = net.forward(p, story).parts["u"]
    np.testing.assert_allclose(net.contributions(p, story)[:, 0].sum(axis=1), u[1] - u[0])
    head = cloze_head.Head()
    p = head.init(0)
    out = head.forward(p, cloze_head.SENTENCES[:3])
    summed = head.contributions(p, cloze_head.SENTENCES[:3]).sum(axis=2)
    real = out.parts["batch"].real
    np.testing.assert_allclose(summed.reshape(-1, summed.shape[-1])[real], out.parts["read"])


def _pairs(n=4, m=5, k=6, seed=2):
    rng = np.random.RandomState(seed)
    return rng.randint(3, 12, (n, m)), rng.randint(3, 12, (n, k))


@pytest.mark.parametrize("kind", ["Bahdanau", "Luong", "Luong, input feeding"])
def test_a_recurrent_translator_adds_each_source_word_to_its_context(kind):
    model = EncoderDecoder(kind, 12, 12)
    p, inputs = model.init(0), _pairs()
    out = model.forward(p, inputs)
    added = model.contributions(p, inputs)
    h = out.parts["record"]["h"]
    np.testing.assert_allclose(added.sum(axis=2), out.weights @ h, atol=1e-12)
    deleted = model.without_step(inputs, np.array([0, 1, 2, 4]))
    assert deleted[0].shape == (4, 4) and deleted[1] is inputs[1]
    np.testing.assert_array_equal(deleted[0][1], np.delete(inputs[0][1], 1))


def test_the_transformer_s_norms_follow_kobayashis_equation_head_by_head():
    model = transformer.Transformer(12, 12, width=8, heads=2, feed_forward=8)
    p, inputs = model.init(0), _pairs()
    weights = model.forward(p, inputs).parts["cross"][-1]
    memory, _ = model.encode(p, inputs[0])
    layer, E = "decoder.layers.0.multihead_attn.", 8
    W_V = p[layer + "in_proj_weight"][2 * E :].T
    b_V = p[layer + "in_proj_bias"][2 * E :]
    W_O = p[layer + "out_proj.weight"].T
    norms = np.linalg.norm(model.contributions(p, inputs), axis=-1)
    for example in range(len(memory)):
        reference = kobayashi_reference(weights[example], memory[example], W_V, b_V, W_O, 2)
        np.testing.assert_allclose(norms[example], reference, atol=1e-12)


def test_subjects_say_why_a_step_cannot_be_deleted():
    location = Reader("location")
    with pytest.raises(ValueError, match="each of its 12 steps"):
        location.without_step(_sequences(), np.zeros(6, dtype=int))
    subject = explanations.Subject(location, location.init(0), _sequences(), name="location")
    assert "12 steps" in subject.supports("leave one out, deleted")
    assert subject.supports("norm-weighted attention") is None
    card = explanations.scorecard(subject)
    assert "12 steps" in card["cannot"]["τ leave one out, deleted"]
    assert "τ leave one out" in card["values"]


def test_a_deleted_sentence_leaves_the_last_slot_of_the_story_empty():
    net = memory_network.MemoryNetwork()
    memories, questions, used = stories.encode(stories.stories(3, seed=4))
    used[:] = True
    after = net.without_step((memories, questions, used), np.array([0, 2, 5]))
    assert after[0].shape == memories.shape and not after[2][:, -1].any()
    np.testing.assert_array_equal(after[0][1, :2], memories[1, :2])
    np.testing.assert_array_equal(after[0][1, 2:-1], memories[1, 3:])


def test_a_translator_run_once_per_sentence_reads_each_word_as_if_run_for_each():
    model = EncoderDecoder("Bahdanau", 12, 12)
    p = model.init(0)
    source, target = _pairs(n=2, m=5, k=5)
    sentence = np.repeat([0, 1], 5)
    rows = np.tile(np.arange(5), 2)
    subject = explanations.Subject(
        model, p, (source[sentence], target[sentence]), row=rows, name="Bahdanau"
    )
    scale = np.random.RandomState(0).uniform(0.5, 1.5, (10, 5))
    scale[5:] = scale[5]  # the second sentence's copies alike, the first's all different
    direct = model.forward(p, (source[sentence], target[sentence]), scale=scale).output
    np.testing.assert_array_equal(subject._logits(scale=scale), direct[np.arange(10), rows])
    first, again = subject._distinct((source[sentence], target[sentence]), {"scale": scale})
    assert len(first) == 6 and np.all(again[5:] == again[5])


def test_a_translator_cut_after_its_explained_word_answers_as_the_whole_sentence():
    model = EncoderDecoder("Bahdanau", 12, 12)
    p = model.init(0)
    source, target = _pairs(n=2, m=5, k=5)
    sentence, rows = np.repeat([0, 1], 5), np.tile(np.arange(5), 2)
    subject = explanations.Subject(
        model, p, (source[sentence], target[sentence]), row=rows, name="Bahdanau"
    )
    candidates = np.random.RandomState(1).dirichlet(np.ones(5), size=7)
    for row in (0, 3, 9):
        whole = softmax(subject._logits(weights=candidates, rows=np.full(7, row)))
        np.testing.assert_allclose(subject.row_predict(row)(candidates), whole, atol=1e-13)
    with pytest.raises(ValueError, match="n must"):
        model.rows_upto((source, target), 0)


def test_deleting_a_sentence_moves_the_answer_by_jain_and_wallaces_total_variation():
    net = memory_network.MemoryNetwork()
    p = net.init(2)
    story = stories.stories(6, seed=7)
    inputs = stories.encode(story)
    inputs[2][:] = True  # every slot a sentence
    subject = explanations.Subject(net, p, inputs, row=0, name="memory")
    own = softmax(net.forward(p, inputs).output)
    expected = np.zeros(subject.weights.shape)
    for t in range(subject.weights.shape[1]):
        after = softmax(net.forward(p, net.without_step(inputs, np.full(6, t))).output)
        expected[:, t] = 0.5 * np.abs(after - own).sum(axis=1)
    np.testing.assert_allclose(subject.importance("leave one out, deleted"), expected, atol=1e-15)
