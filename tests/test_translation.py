import numpy as np
import pytest

from attention_measured.tasks import translation


def test_a_sentence_worked_by_hand():
    pair = translation.translate(
        "the red fox sees a dog near the old tree and every child likes a boat"
    )
    assert " ".join(pair.target) == (
        "lo fuxo ruda na kani lo trea vesa pesa vidas ta oma kido na nava amas"
    )
    # target word i translates source word alignment[i]
    assert pair.alignment == (0, 2, 1, 4, 5, 7, 9, 8, 6, 3, 10, 11, 12, 14, 15, 13)


def test_every_drawn_sentence_follows_the_three_rules():
    kinds = {w: kind for kind, words in translation.LEXICON.items() for w in words}
    corpora = translation.corpus(5, (5, 40), seed=7)
    assert sorted(corpora) == list(range(5, 41))
    for length, corpus in corpora.items():
        assert corpus.source.shape == (5, length) and corpus.target.shape == (5, length + 1)
        assert len({tuple(row) for row in corpus.source}) == 5  # no sentence twice
        for src, tgt, align in zip(corpus.source, corpus.target, corpus.alignment):
            words = [translation.SOURCE_WORDS[i] for i in src]
            assert sorted(align) == list(range(length))  # one target word per source word
            assert translation.TARGET_WORDS[tgt[-1]] == translation.EOS
            for i, j in enumerate(align):
                assert translation.TARGET_WORDS[tgt[i]] == translation.DICTIONARY[words[j]]
            target_kinds = [kinds[words[j]] for j in align]
            for i, kind in enumerate(target_kinds):
                if kind == "adjective":  # after its noun
                    assert target_kinds[i - 1] == "noun"
                if kind == "verb":  # last in its clause
                    assert i + 1 == length or target_kinds[i + 1] == "conjunction"
                if kind == "preposition":  # after its noun phrase
                    assert target_kinds[i - 1] in ("noun", "adjective")


def test_the_corpus_is_the_same_from_the_same_seed_and_split_apart():
    a, b = translation.corpus(4, (6, 9), seed=3), translation.corpus(4, (6, 9), seed=3)
    for n in a:
        np.testing.assert_array_equal(a[n].source, b[n].source)
    train, test = translation.split(translation.corpus(6, (6, 9)), held_out=2)
    for n in train:
        assert len(test[n].source) == 2 and len(train[n].source) == 4
        assert not {tuple(r) for r in train[n].source} & {tuple(r) for r in test[n].source}


def test_decoding_stops_at_the_end_of_sentence():
    ids = [
        translation.TARGET_IDS["lo"],
        translation.TARGET_IDS["fuxo"],
        translation.TARGET_IDS[translation.EOS],
        translation.TARGET_IDS["ta"],
    ]
    assert translation.decode_target(ids) == ("lo", "fuxo")
    np.testing.assert_array_equal(
        translation.encode_source("the fox"), [translation.SOURCE_IDS[w] for w in ("the", "fox")]
    )


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: translation.translate("the cat sees a dog"), "unknown source words"),
        (lambda: translation.translate("the fox a dog sees"), "verb"),
        (lambda: translation.translate("the fox sees a dog the"), "'and' or the end"),
        (lambda: translation.translate("red fox sees a dog"), "noun phrase"),
        (lambda: translation.encode_source("the fox <s>"), "words holds unknown tokens"),
        (lambda: translation.corpus(3, (4, 9)), "lengths"),
        (lambda: translation.corpus(3, (9, 6)), "low to high"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_teacher_forcing_reads_the_true_words_before_each_position():
    shifted = translation.shifted_right(np.array([[5, 6, 7], [8, 9, 2]]), first=1)
    assert shifted.tolist() == [[1, 5, 6], [1, 8, 9]]


def test_the_grammar_is_counted_and_a_corpus_it_cannot_fill_is_refused_before_drawing():
    counts = translation.sentence_counts()
    assert sorted(counts) == list(range(translation.SHORTEST, translation.LONGEST + 1))
    # length 5 is "determiner noun verb determiner noun"; 6 adds one adjective, in either phrase
    assert counts[5] == (3 * 10) * 8 * (3 * 10)
    assert counts[6] == 2 * (3 * 6 * 10) * 8 * (3 * 10)
    # one more than the grammar makes is refused at once, not after minutes of drawing
    with pytest.raises(ValueError, match="fewer than 7201 distinct sentences of lengths \\[5\\]"):
        translation.corpus(counts[5] + 1, (5, 5))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: translation.translate(""), ValueError, "source must hold a sentence"),
        (lambda: translation.translate(None), TypeError, "source must be a sentence"),
        (lambda: translation.translate([1, 2]), TypeError, "source must be a sentence"),
        (lambda: translation.split({}, 1), ValueError, "corpora holds no sentences"),
        (lambda: translation.split(None, 1), TypeError, "corpora must be a dict of Corpus"),
        (
            lambda: translation.draw_batch({}, np.random.RandomState(0), 2),
            ValueError,
            "corpora holds no",
        ),
    ],
)
def test_a_source_and_corpora_are_checked_up_front(call, error, message):
    with pytest.raises(error, match=message):
        call()
