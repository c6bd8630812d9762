import numpy as np
import pytest
from single_query_oracle import stream

from attention_measured.core import rng


@pytest.mark.parametrize("seed", [0, 1, 20260218, 2**32 + 5, 2**63 + 11])
def test_draws_match_the_scalar_stream(seed):
    draw = stream(seed)
    expected = [draw() for _ in range(40)]
    assert rng.draws(seed, 40).tolist() == expected  # bit for bit


def test_many_streams_at_once_equal_one_at_a_time():
    seeds = [3, 99, 20260219]
    together = rng.draws(seeds, 7)
    assert together.shape == (3, 7)
    for row, seed in zip(together, seeds):
        np.testing.assert_array_equal(row, rng.draws(seed, 7))


@pytest.mark.parametrize("bad", [1.5, "7", None, True])
def test_seeds_of_the_wrong_kind_are_refused(bad):
    with pytest.raises(TypeError, match="seeds? must be an integer"):
        rng.draws(bad, 3)


@pytest.mark.parametrize("bad", [-1, 2**64])
def test_seeds_out_of_range_are_refused(bad):
    with pytest.raises(ValueError, match="seeds? must be an integer between 0 and"):
        rng.draws(bad, 3)


def test_the_largest_seed_is_accepted():
    assert rng.draws(2**64 - 1, 2).shape == (2,)


def test_bad_count_is_refused():
    with pytest.raises(ValueError, match="count"):
        rng.draws(1, -2)
    with pytest.raises(TypeError, match="count"):
        rng.draws(1, 2.0)
