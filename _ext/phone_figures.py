"""A Sphinx extension that serves each figure's phone variant to narrow screens.

A notebook's figure output carries, in its metadata, a second drawing made for a phone
(``attention_measured.phone_figures``): narrower, with larger text.  After the build, this
writes that drawing beside the figure in ``_images`` (``<name>-phone.png``, where ``<name>``
is the SHA-256 of the figure's PNG, as myst-nb names it) and wraps the page's ``<img>`` in a
``<picture>`` whose ``<source>`` a browser takes below :data:`NARROW`.  The ``<img>`` keeps
both drawings' smallest text heights, in image pixels, as ``data-text-px`` and
``data-phone-text-px``: the browser tests turn them into CSS pixels on the screen.  A figure
with heat maps also keeps where their cells are in each drawing, and their numbers, as
``data-cells`` and ``data-phone-cells`` (a static twin's image carries its frame's own
``data-cells``; a live explorer's heat map is marked ``data-cell-tips``), and such a page (only
such a page) carries the script ``cells.js`` beside this file, which shows a cell's number when
the reader hovers over it or taps it.

It runs before ``light_pages``, which re-encodes both drawings as WebP.
"""

import base64
import functools
import hashlib
import html
import json
import re
from pathlib import Path

CELLS_SCRIPT = (Path(__file__).parent / "cells.js").read_text(encoding="utf-8")
WRITTEN_SCRIPT = re.compile(r"<script data-cells-script>\n.*?</script>\n", re.S)
NARROW = "(max-width: 700px)"  # the text column is then narrower than the column's figures
IMAGE = re.compile(
    r'<img (?P<before>[^>]*?)src="(?P<path>(?:\.\./)*_images/)(?P<name>[0-9a-f]{64})\.png"'
    r"(?P<after>[^>]*)>"
)


def _variants(notebook: Path) -> dict[str, dict]:
    """{name: the output's image metadata} for each figure of the notebook with a variant."""
    found = {}
    for cell in json.loads(notebook.read_text(encoding="utf-8")).get("cells", []):
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            meta = output.get("metadata", {}).get("image/png", {})
            if png and "phone" in meta:
                found[hashlib.sha256(base64.b64decode(png)).hexdigest()] = meta
    return found


def _serve(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    images = Path(app.outdir) / "_images"
    for doc in sorted(app.env.found_docs):
        source = Path(app.env.doc2path(doc))
        if source.suffix != ".ipynb":
            continue
        variants = _variants(source)
        for name, meta in variants.items():
            if (images / f"{name}.png").exists():
                (images / f"{name}-phone.png").write_bytes(base64.b64decode(meta["phone"]))
        page = Path(app.outdir) / f"{doc}.html"
        before = page.read_text("utf-8")
        text = IMAGE.sub(functools.partial(_picture, variants=variants), before)
        # only a page with heat maps (a figure's, a static twin's frames or a live explorer's)
        # carries their script, once: an incremental build hands this a page it has already
        # written when the page did not change, whose script is then replaced by today's
        text = WRITTEN_SCRIPT.sub("", text)
        if "data-cells=" in text or "data-cell-tips" in text:
            script = f"<script data-cells-script>\n{CELLS_SCRIPT}</script>\n</body>"
            text = text.replace("</body>", script, 1)
        if text != before:
            page.write_text(text, "utf-8")


def _picture(m: re.Match, variants: dict[str, dict]) -> str:
    """The page's <img>, wrapped in a <picture> with its phone variant where it has one."""
    meta = variants.get(m["name"])
    if meta is None:
        return m.group(0)
    sizes = f'data-text-px="{meta["text_px"]}" data-phone-text-px="{meta["phone_text_px"]}" '
    if "cells" in meta:  # a figure with heat maps: their numbers, for cells.js
        for name in ("cells", "phone_cells"):
            attribute = name.replace("_", "-")
            # in single quotes, so that JSON's many double quotes need no escaping
            text = html.escape(meta[name], quote=False).replace("'", "&#x27;")
            sizes += f"data-{attribute}='{text}' "
    return (
        f'<picture><source media="{NARROW}" srcset="{m["path"]}{m["name"]}-phone.png" />'
        f'<img {m["before"]}{sizes}src="{m["path"]}{m["name"]}.png"{m["after"]}></picture>'
    )


def setup(app):
    app.connect("build-finished", _serve, priority=400)  # before light_pages (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
