"""Part I's trainings and the numbers the lesson prints (Part I, sections 2 to 5): the two runs
(:func:`train_runs`, :func:`two_runs`), one network from any seed (:func:`train`), the eighteen
numbers of the lesson (:func:`summary`) and the sweep over a hundred seeds (:func:`sweep`,
:func:`hundred_seeds`).  Every network is :class:`~.single_query.SingleQuery`, trained by
full-batch gradient descent."""

from __future__ import annotations

import numpy as np

from ..core import checks, rng
from ..core.params import Params
from ..core.training import Trained, fit
from ..machinery.cache import remembered
from ..measures import markers
from ..models.single_query import SingleQuery
from ..tasks.marked_step import (
    DATA_SEED,
    SPLIT,
    Sequences,
    majority_baseline,
    make_sequences,
    split,
)

INIT_SEEDS = (DATA_SEED + 1, DATA_SEED + 2)  # the lesson's runs 1 and 2
EPOCHS = 200
LEARNING_RATE = 0.6
EXAMPLES = SPLIT[2]  # held-out sequences, the examples the explorers offer
MODEL = SingleQuery()


def train_runs(
    seeds,
    train_set: Sequences,
    epochs: int = EPOCHS,
    learning_rate: float = LEARNING_RATE,
) -> Trained:
    """Full-batch gradient descent for every init seed at once (sections 2 and 5).

    Returns a :class:`~.training.Trained`: the :class:`~.single_query.SingleQuery`, a Params
    stack with R = len(seeds), run r being the network the lesson trains from seed r (equal up
    to floating-point summation order), and the loss curve (epochs, R), the mean cross-entropy
    before each update.
    """
    if not isinstance(train_set, Sequences):
        raise TypeError(
            f"train_set must be Sequences (from marked_step.split), got {type(train_set).__name__}"
        )
    seeds = checks.seeds(seeds, "seeds", below=2**64)
    params = MODEL.init(seeds)
    curve = fit(
        MODEL,
        params,
        train_set.inputs,
        train_set.labels,
        checks.integer(epochs, "epochs", 1, 100_000),
        learning_rate,
        optimiser="gradient descent",
    )
    return Trained(MODEL, params, curve)


def train(
    seed: int,
    data_seed: int = DATA_SEED,
    epochs: int = EPOCHS,
    learning_rate: float = LEARNING_RATE,
) -> Trained:
    """One network trained on the training split of ``data_seed``: a Trained whose params are
    one network's and whose curve is (epochs,)."""
    seed = checks.seed(seed, "seed", below=2**64)
    train_set = split(make_sequences(seed=rng.check_seed(data_seed, "data_seed")))[0]
    model, params, curve = train_runs([seed], train_set, epochs, learning_rate)
    return Trained(model, params.select(0), curve[:, 0])


def summary(data_seed: int = DATA_SEED, init_seeds=INIT_SEEDS) -> dict:
    """Everything the lesson prints: {"baseline": float, "runs": [run, ...]}.

    Each run is a dict of train_accuracy, heldout_accuracy, marker_weight, marker_hit_rate,
    agreement, effect_of_heaviest (floats, unrounded) and heavy_count, heavy_inert_count (ints),
    all on the held-out set (the last 180 sequences) except train_accuracy.
    """
    init_seeds = checks.seeds(init_seeds, "init_seeds", below=2**64)
    train_set, _, heldout = split(make_sequences(seed=rng.check_seed(data_seed, "data_seed")))
    params = train_runs(init_seeds, train_set).params
    return {
        "baseline": majority_baseline(heldout.labels),
        "runs": markers.eight_numbers(MODEL, params, train_set, heldout),
    }


def sweep(init_seeds, data_seed: int = DATA_SEED) -> dict[str, np.ndarray]:
    """Train every init seed at once and measure each on the held-out set (section 5).

    Returns arrays of shape (len(init_seeds),): seeds, heldout_accuracy, marker_weight,
    agreement.
    """
    seeds = checks.seeds(init_seeds, "init_seeds", below=2**64)
    train_set, _, heldout = split(make_sequences(seed=rng.check_seed(data_seed, "data_seed")))
    params = train_runs(seeds, train_set).params
    return {
        "seeds": np.array(seeds),
        "heldout_accuracy": markers.accuracy(MODEL, params, heldout),
        "marker_weight": markers.marker_weight(MODEL, params, heldout)[0],
        "agreement": markers.causality(MODEL, params, heldout)["agreement"],
    }


HUNDRED = 100  # section 5's sweep: the hundred init seeds from run 1's


@remembered
def hundred_seeds() -> dict[str, np.ndarray]:
    """Section 5's sweep of the :data:`HUNDRED` init seeds from run 1's, remembered for the
    explorer that places any seed among them (arrays of shape (100,), as :func:`sweep`)."""
    return sweep(np.arange(INIT_SEEDS[0], INIT_SEEDS[0] + HUNDRED))


@remembered
def two_runs() -> tuple[Sequences, Params]:
    """The held-out set and the lesson's two trained runs, a stack of two networks (sections 2
    to 4), remembered."""
    train_set, _, heldout = split(make_sequences())
    return heldout, train_runs(INIT_SEEDS, train_set).params


def example(index: int) -> Sequences:
    """Held-out sequence ``index`` (0..179) as a one-sequence set."""
    return two_runs()[0][checks.index(index, "index", EXAMPLES)]
