"""Part V's subjects: every model of the book, through the protocol alone, is explained by what
the model itself computes."""

import numpy as np
import pytest

from attention_measured.experiments import head_runs, marked_step_runs, registry, translation_runs
from attention_measured.measures.explanations import Subject
from attention_measured.models import cloze_head, single_query
from attention_measured.tasks import cloze, translation


def everything(subject: Subject) -> np.ndarray:
    return np.ones(subject.weights.shape, dtype=bool)


def unchanged(subject: Subject, replace: bool = True) -> None:
    """Keeping every step, scaling by 1 and (where allowed) putting the model's own weights
    back all give the model's own output."""
    p = subject.probabilities
    np.testing.assert_allclose(subject.output(keep=everything(subject)), p, atol=1e-12)
    np.testing.assert_allclose(subject.output(scale=np.ones(subject.weights.shape)), p, atol=1e-12)
    if replace:
        np.testing.assert_allclose(subject.predict(subject.weights), p, atol=1e-12)


def test_part_one_subject_is_the_lesson_network_with_its_gradients_by_hand():
    subject = registry.single_query_subject(registry.SINGLE_QUERY_SEEDS[0])
    heldout, stack = marked_step_runs.two_runs()
    params = stack.select(0)  # the lesson's run 1 is the first of the 100 seeds
    fwd = marked_step_runs.MODEL.forward(params, heldout.inputs)
    np.testing.assert_allclose(subject.probabilities[:, 1], 1 / (1 + np.exp(-fwd.output)))
    unchanged(subject)
    # logit = r·Σ a_t x_t + b, a = softmax(u·x): ∂logit/∂a_t = r·x_t, and
    # x_t·∂logit/∂x_t = a_t r·x_t + a_t (r·x_t − r·x̄)(u·x_t)
    u, r = single_query.effective(params)
    x, a = heldout.inputs, fwd.weights
    value = x @ r
    pooled = (a * value).sum(axis=1, keepdims=True)
    by_hand = a * value + a * (value - pooled) * (x @ u)
    # ∂p/∂a_t of the decision d: p_d (1 − p_d) times ±r·x_t, the sign that of d's logit
    own = subject.probabilities[np.arange(len(x)), subject.decision]
    sign = np.where(subject.decision == 1, 1.0, -1.0)
    gradient = (own * (1 - own) * sign)[:, None] * value
    np.testing.assert_allclose(subject.importance("gradient"), gradient, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(subject.importance("gradient × input"), np.abs(by_hand), atol=1e-6)
    p, without = marked_step_runs.MODEL.removal_effects(params, x)
    np.testing.assert_allclose(subject.importance("leave one out"), np.abs(without - p[:, None]))
    with pytest.raises(ValueError, match="100 seeds"):
        registry.single_query_subject(7)


def test_flavour_heads_and_memory_subjects_are_their_models():
    from attention_measured.experiments import flavour_runs, story_runs
    from attention_measured.tasks import marked_step, stories

    for flavour in ("additive", "mean pooling"):
        subject = registry.flavour_subject(flavour, 0)
        model, p, _ = flavour_runs.reader_run(flavour, 0)
        np.testing.assert_allclose(
            subject.probabilities[:, 1],
            model.predict(p, marked_step.lesson_data()[1].inputs),
            atol=1e-12,  # the book's sigmoid stops short of 0 and 1
        )
        unchanged(subject)
    subject = registry.heads_subject("two heads: head 1", 0)
    model, p, _ = head_runs.heads_run(2, 0)
    heldout = head_runs.heads_data()[1]
    prob, without = model.removal_effects(p, heldout.inputs)
    np.testing.assert_allclose(subject.probabilities[:, 1], prob, atol=1e-12)
    np.testing.assert_allclose(subject.weights, model.forward(p, heldout.inputs).weights[:, 1])
    # leave one out drops the step from head 1 only, as Part III's per-head removal test does
    np.testing.assert_allclose(
        subject.importance("leave one out"), np.abs(without[:, 1] - prob[:, None]), atol=1e-12
    )
    unchanged(subject)
    subject = registry.memory_subject(0)
    model, p, _ = story_runs.memory_run(1, 1, 0)
    logits = model.forward(p, stories.encode(story_runs.memory_data(1)[1])).output
    np.testing.assert_allclose(subject.decision, logits.argmax(axis=1))
    unchanged(subject)


def test_cloze_subject_is_the_head_on_each_sentence_without_a_truth():
    head = cloze_head.Head()
    params = head.init(3)
    tokens = cloze.SENTENCES[0]
    n = len(tokens)
    copies = cloze.make_batch([tokens] * n)  # position i of copy i
    subject = Subject(head, params, copies, row=np.arange(n), no_truth="its own query")
    fwd = head.forward(params, cloze.make_batch([tokens]))
    np.testing.assert_allclose(subject.probabilities, fwd.parts["probs"], atol=1e-12)
    others = ~np.eye(n, dtype=bool)
    np.testing.assert_allclose(subject.weights, fwd.weights[0][others].reshape(n, n - 1))
    unchanged(subject)
    assert subject.truth is None and "own query" in subject.cannot["truth"]


def small_translation(kind: str):
    model = translation_runs.book_model(kind)
    data = translation.corpus(3, lengths=(6, 6), seed=5)[6]
    sentence = np.repeat(np.arange(3), 6)
    at = np.tile(np.arange(6), 3)
    return model, model.init(1), data.source[sentence], data.target[sentence], at


@pytest.mark.parametrize("kind", ["Bahdanau", "Luong", "Luong, input feeding"])
def test_recurrent_subject_changes_only_the_word_it_explains(kind):
    model, p, source, target, at = small_translation(kind)
    subject = Subject(model, p, (source, target), row=at, truth=at, name=kind)
    out = model.forward(p, (source, target))
    rows = np.arange(len(at))
    np.testing.assert_allclose(subject._logits(), out.output[rows, at], atol=1e-10)
    np.testing.assert_allclose(subject.weights, out.weights[rows, at], atol=1e-12)
    unchanged(subject)
    first = np.zeros(subject.weights.shape)
    first[:, 0] = 1.0  # every word reads source word 0 alone
    source_0 = subject.predict(first)
    kept = subject.output(keep=first.astype(bool))
    np.testing.assert_allclose(source_0, kept, atol=1e-12)


def test_transformer_subject_masks_one_word_and_cannot_replace_its_weights():
    model, p, source, target, at = small_translation("Transformer")
    subject = Subject(model, p, (source, target), row=at, truth=at, name="T")
    out = model.forward(p, (source, target))
    rows = np.arange(len(at))
    np.testing.assert_allclose(subject._logits(), out.output[rows, at], atol=1e-10)
    np.testing.assert_allclose(subject.weights, out.parts["cross"][-1].mean(axis=1)[rows, at])
    unchanged(subject, replace=False)
    assert "2 heads" in subject.supports("gradient")
    with pytest.raises(ValueError, match="no one row"):
        subject.predict(subject.weights)
    # rollout carries the word's weights through the encoder's layer, residual included
    encoder = model.encode(p, source)[1].weights[0].mean(axis=1)  # (N, m, m)
    mixed = 0.5 * encoder + 0.5 * np.eye(6)
    np.testing.assert_allclose(
        subject.importance("rollout"), np.einsum("nt,nts->ns", subject.weights, mixed)
    )
    # dropping source word j from word i's view changes word i only
    keep = everything(subject)
    keep[:, 2] = False
    memory, _ = model.encode(p, source)
    mask = np.ones((len(at), 7, 6), dtype=bool)
    mask[rows, at, 2] = False
    changed = model.decode(
        p, memory, np.concatenate([np.full((18, 1), model.bos), target[:, :-1]], 1), mask
    )[0]
    np.testing.assert_allclose(subject._logits(keep=keep), changed[rows, at], atol=1e-10)


def test_translation_subjects_refuse_a_model_without_attention_and_unknown_lengths():
    with pytest.raises(ValueError, match="no attention"):
        registry.translation_subjects("fixed context", 0)
    with pytest.raises(ValueError, match="5 to 40"):
        registry.translation_subjects("Luong", 0, lengths=(41,))
