"""A font cut to the characters the book's pages draw, written as WOFF.

Used after the build by ``icons.py`` (Font Awesome's web fonts) and ``mathml.py`` (the math
font); a page then fetches a few kilobytes of font instead of the whole face.
"""

from pathlib import Path


def cut_to_woff(source: Path, target: Path, unicodes: set[int], *, math: bool = False) -> None:
    """Write ``target``: ``source`` with only the glyphs of ``unicodes``, as WOFF.

    ``math=True`` keeps every OpenType feature and name, with the .notdef outline: MathML
    layout reads the math tables and the glyph variants (sizes of brackets, script styles).
    """
    from fontTools import subset

    options = subset.Options()
    options.flavor = "woff"
    if math:
        options.layout_features = ["*"]
        options.name_IDs = ["*"]
        options.notdef_outline = True
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=unicodes)
    subsetter.subset(font)
    subset.save_font(font, str(target), options)
