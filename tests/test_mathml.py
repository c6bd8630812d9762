"""The build's TeX-to-MathML writer (_ext/mathml.py) sets formulas as TeX would."""

import importlib.util
import re
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location(
    "mathml", Path(__file__).resolve().parents[1] / "_ext" / "mathml.py"
)
mathml = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(mathml)


def written(tex: str) -> str:
    """The MathML the book writes for ``tex``, without its layout's whitespace."""
    return re.sub(r">\s+<", "><", mathml._mathml(None, None, tex, block=False))


@pytest.mark.parametrize("tex", [r"\hat y_i", r"\tilde h_{i-1}", r"\overrightarrow{h}_j"])
def test_an_accented_letter_takes_its_subscript_beside_it(tex):
    out = written(tex)
    assert "<munderover>" not in out
    assert re.search(r"<msub><mover accent=\"true\"><mi>\w</mi><mo[^>]*>.</mo></mover>", out), out


def test_a_sum_keeps_its_limits_under_and_over_it():
    assert "<munderover><mo movablelimits" in written(r"\sum_{i=1}^{n} x_i")


def test_a_prime_sits_beside_its_letter():
    out = written("h' = m''")
    assert "<msup>" not in out and "<mi>′</mi>" in out and "<mi>′</mi><mi>′</mi>" in out


def test_frac_with_two_digits_takes_one_digit_each():
    assert "<mfrac><mn>1</mn><mn>2</mn></mfrac>" in written(r"\frac12")


def test_norm_bars_do_not_stretch_and_big_is_dropped():
    out = written(r"\bigl(\|x\|\bigr)")
    assert out.count('<mo stretchy="false">‖</mo>') == 2 and "big" not in out


def test_a_named_function_is_followed_by_a_thin_space():
    assert '<mi>log</mi><mo>&ApplyFunction;</mo><mspace width="0.1667em">' in written(r"\log p")
