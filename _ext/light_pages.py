"""A Sphinx extension that lightens the published pages without changing what they show.

- **Twin frames as WebP.**  A static twin (``attention_measured.widgets.static_twin``) holds
  every frame in its page as a 64-colour PNG.  After the build each frame is re-encoded as
  lossless WebP, which every current browser draws: the same pixels in about three quarters
  of the bytes (a half on the densest pages).  The notebooks keep their PNGs, which nbval
  compares and Jupyter shows.
- **No widget state.**  A notebook that ran a live widget keeps the widget's state (140 KB on
  Part II's last page), and myst-nb copies it into the page for ipywidgets' JavaScript,
  which the book does not load (``nb_ipywidgets_js`` is empty): the page shows the widget's
  static twin instead.  The state stays in the notebook, for Jupyter.
- **The search index on the search page only.**  The theme loads ``searchindex.js`` (about
  130 KB) and Sphinx's search scripts on every page for its search-as-you-type, which this
  book leaves off; its search box sends the reader to ``search.html``, which loads them.
- **No unused stylesheet.**  Jupyter Book turns on sphinx-design (54 KB of CSS and a script)
  for every page; a page that uses none of its ``sd-`` classes does without them.
- **Figures as WebP.**  A figure in ``_images`` is re-encoded as lossless WebP where that
  saves a tenth or more of its bytes, and the pages point to the WebP file.

Encoding the book's 550 images takes 6 s of a build, so each WebP is kept beside the output
folder (``_build/webp``), under the hash of its PNG and of the Pillow that encoded it: a
build encodes only the images that changed, and removes the WebPs no build has used for a
week.
"""

import base64
import hashlib
import io
import os
import re
import time
from pathlib import Path

DATA = re.compile(r'<script type="application/json" class="twin-data">.*?</script>', re.S)
FIRST = re.compile(r'<img class="twin-figure"[^>]*>')
PNG = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
SEARCH = re.compile(
    r'\s*<script src="(?:\.\./)*(?:searchindex|_static/searchtools|_static/language_data)\.js">'
    r"</script>"
)
DESIGN = ("sphinx-design.min.css", "design-tabs.js")
FIGURE = re.compile(r'((?:src|srcset)="(?:\.\./)*_images/[^"/]+)\.png"')


class _Encoded:
    """The WebPs of one build, read from the folder of kept ones or encoded and kept there."""

    KEPT_FOR = 7 * 24 * 3600  # seconds a WebP stays unused before it is removed

    def __init__(self, folder: Path):
        self.folder = folder

    def webp(self, png: bytes) -> bytes:
        from PIL import Image, __version__

        name = hashlib.sha256(__version__.encode() + b"\0" + png).hexdigest() + ".webp"
        kept = self.folder / name
        if kept.is_file():
            os.utime(kept)  # used today
            return kept.read_bytes()
        out = io.BytesIO()
        Image.open(io.BytesIO(png)).save(out, format="WEBP", lossless=True, method=4)
        self.folder.mkdir(parents=True, exist_ok=True)
        partial = kept.with_suffix(f".{os.getpid()}.partial")
        partial.write_bytes(out.getvalue())
        partial.replace(kept)  # a build stopped half-way leaves no half a file
        return out.getvalue()

    def forget_unused(self) -> None:
        now = time.time()
        for kept in self.folder.glob("*.webp"):
            if now - kept.stat().st_mtime > self.KEPT_FOR:
                kept.unlink(missing_ok=True)


def _as_webp(png: bytes, keep: float, encoded: _Encoded) -> bytes | None:
    """The PNG as lossless WebP, or None where that is not below ``keep`` of its bytes."""
    webp = encoded.webp(png)
    return webp if len(webp) < keep * len(png) else None


def _webp(match: re.Match, encoded: _Encoded) -> str:
    webp = _as_webp(base64.b64decode(match.group(1)), 1.0, encoded)
    if webp is None:
        return match.group(0)
    return "data:image/webp;base64," + base64.b64encode(webp).decode("ascii")


def _lighten(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    search_as_you_type = (app.config.html_theme_options or {}).get("search_as_you_type")
    encoded = _Encoded(Path(app.outdir).parent / "webp")
    webp = _figures_as_webp(Path(app.outdir), encoded)
    for page in Path(app.outdir).rglob("*.html"):
        if "_static" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        new = text
        if 'class="static-twin"' in new:
            for part in (DATA, FIRST):
                new = part.sub(
                    lambda found: PNG.sub(lambda png: _webp(png, encoded), found.group(0)), new
                )
        if page.name != "search.html" and not search_as_you_type:
            new = SEARCH.sub("", new)
        new = FIGURE.sub(
            lambda src: src[1] + (".webp" if src[1].rsplit("/", 1)[1] in webp else ".png") + '"',
            new,
        )
        if new != text:
            page.write_text(new, encoding="utf-8")
    encoded.forget_unused()


def _keep_what_the_page_uses(app, pagename, templatename, context, doctree):
    designed = "sd-" in context.get("body", "")

    def used(asset) -> bool:
        if (getattr(asset, "attributes", {}) or {}).get("type") == WIDGET_STATE:
            return False
        name = str(getattr(asset, "filename", "") or "")
        return designed or not name.endswith(DESIGN)

    for key in ("script_files", "css_files"):
        context[key] = [asset for asset in context.get(key, []) if used(asset)]


def _figures_as_webp(outdir: Path, encoded: _Encoded) -> set[str]:
    """Write a WebP beside each figure it makes 10% smaller; return their names, no suffix."""
    smaller = set()
    for png in (outdir / "_images").glob("*.png"):
        webp = _as_webp(png.read_bytes(), 0.9, encoded)
        if webp is not None:
            png.with_suffix(".webp").write_bytes(webp)
            smaller.add(png.stem)
    return smaller


def setup(app):
    app.connect("html-page-context", _keep_what_the_page_uses)
    app.connect("build-finished", _lighten)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
