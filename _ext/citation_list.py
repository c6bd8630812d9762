"""A Sphinx extension that keeps the bibliography's list accessible.

Docutils writes the bibliography as ``<div role="list" class="citation-list">`` and puts the
back-reference links of each entry directly inside it, so axe-core reports a list whose
children are not list items ("aria-required-children", critical).  The entries are already
marked ``role="doc-biblioentry"``; this removes the list role from their container, in every
page the build writes.
"""

from pathlib import Path

LIST = '<div role="list" class="citation-list">'


def _drop_list_role(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if LIST in text:
            page.write_text(text.replace(LIST, '<div class="citation-list">'), encoding="utf-8")


def setup(app):
    app.connect("build-finished", _drop_list_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
