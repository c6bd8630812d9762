"""Wiegreffe and Pinter's uniform baseline for the models whose tasks have no pooling model of
their own (Part VI, "Retrained with uniform weights"): the heads of Part II, the memory network
of Part V and Part IV's head, each trained again, on the same data and seeds, with its weights
held at 1/T (:class:`~attention_measured.models.uniform.Uniform`), and scored as the book scores
the model itself.  Part I's task has its uniform model already (Part V's mean pooling).
"""

from __future__ import annotations

from ..core import checks
from ..core.training import Trained, fit, trained
from ..machinery.cache import remembered
from ..measures import cloze_recall, markers
from ..models.cloze_head import Head
from ..models.heads import HeadsReader
from ..models.memory_network import MemoryNetwork
from ..models.uniform import Uniform
from ..tasks import cloze, stories
from . import cloze_runs, head_runs, registry, story_runs

ZEROED = {  # the array that every score of each model multiplies
    "heads": {"u": None},  # the learned query
    "memory network": {"E": 0},  # the question's (and hop 1's keys') embedding
    "UDHR head": {"W_Q": None},  # the query projection
}

MODELS = {  # the models compared, what each is scored by, and with which of its own runs
    "one head": "held-out accuracy",
    "two heads": "held-out accuracy",
    "memory network": "test accuracy",
    "UDHR head": "recall of the training tokens",
}


def run(model: str, seed: int, uniform: bool) -> Trained:
    """``model`` (a key of :data:`MODELS`) trained from ``seed``, as the book trains it, with
    attention (``uniform`` False) or with its weights held at 1/T."""
    model = checks.choice(model, "model", MODELS)
    seed = checks.seed(seed)
    uniform = checks.flag(uniform, "uniform")
    heads = {"one head": 1, "two heads": 2}
    if not uniform:  # the runs the book explains
        if model == "UDHR head":
            return cloze_runs.train(seed)
        if model == "memory network":
            return story_runs.memory_run(1, 1, seed)
        return head_runs.heads_run(heads[model], seed)
    if model == "UDHR head":
        return _uniform_head(seed)
    if model == "memory network":
        train = story_runs.memory_data(1)[0]
        net = Uniform(MemoryNetwork(1), ZEROED[model])
        epochs, rate = story_runs.MEMORY_EPOCHS, story_runs.MEMORY_LEARNING_RATE
        return trained(net, seed, stories.encode(train), train.answers, epochs, rate)
    train = head_runs.heads_data()[0]
    reader = Uniform(HeadsReader(heads[model]), ZEROED["heads"])
    epochs, rate = head_runs.HEADS_EPOCHS, head_runs.HEADS_LEARNING_RATE
    return trained(reader, seed, train.inputs, train.targets, epochs, rate)


@remembered
def _uniform_head(seed: int) -> Trained:
    """Part IV's head with its queries held at zero, trained as :func:`cloze_runs.train` trains
    the head itself."""
    head = Uniform(Head(), ZEROED["UDHR head"])
    params = head.init(seed)
    batch = cloze.make_batch([list(s) for s in cloze.SENTENCES])
    curve = fit(head, params, batch, None, cloze_runs.EPOCHS, cloze_runs.LEARNING_RATE)
    return Trained(head, params, curve)


def score(model: str, result: Trained) -> float:
    """What :data:`MODELS` says ``model`` is scored by, for a trained ``result`` of it."""
    model = checks.choice(model, "model", MODELS)
    if not isinstance(result, Trained):
        raise TypeError(f"result must be a Trained (from run), got {type(result).__name__}")
    net = result.model.model if isinstance(result.model, Uniform) else result.model
    if model == "UDHR head":
        return cloze_recall.top1_accuracy(Trained(net, result.params, result.curve))
    if model == "memory network":
        return story_runs.hop_measures(net, result.params, story_runs.memory_data(1)[1])["accuracy"]
    heldout = head_runs.heads_data()[1]
    return float(markers.accuracy(net, result.params, heldout))


@remembered
def compared(model: str, seeds=registry.SEEDS) -> dict:
    """{"attention": [...], "uniform": [...]}: ``model``'s score (:func:`score`) on each of
    ``seeds``, trained with attention and with uniform weights."""
    model = checks.choice(model, "model", MODELS)
    seeds = checks.seeds(seeds, "seeds")
    return {
        how: [score(model, run(model, s, how == "uniform")) for s in seeds]
        for how in ("attention", "uniform")
    }
