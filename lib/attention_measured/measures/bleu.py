"""BLEU of translations against references, by sacrebleu (Part III)."""

from __future__ import annotations

from ..core import checks
from ..tasks.translation import TARGET_WORDS, decode_target


def bleu(outputs, references) -> float:
    """Corpus-level BLEU (Papineni et al. 2002) of output ids (N, n) against reference ids
    (N, n'), each read up to its first </s>, by sacrebleu's standard settings: 0 to 100
    (Part III, decoding)."""
    import sacrebleu  # imported here: it takes a moment, and only the translators score with it

    outputs = checks.integers(outputs, "outputs", 0, len(TARGET_WORDS) - 1)
    references = checks.integers(references, "references", 0, len(TARGET_WORDS) - 1)
    if outputs.ndim != 2 or references.ndim != 2 or len(outputs) != len(references):
        raise ValueError(
            f"outputs and references must be id arrays (N, n) with one row per sentence, got "
            f"shapes {outputs.shape} and {references.shape}"
        )
    hypotheses = [" ".join(decode_target(row)) for row in outputs]
    truths = [" ".join(decode_target(row)) for row in references]
    return float(sacrebleu.corpus_bleu(hypotheses, [truths]).score)
