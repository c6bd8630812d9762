"""What a reader sees of each page's code: no bookkeeping, and nothing wider than the column.

The browser tests measure the same on the built pages; this reads the stored notebooks, so it
fails before a build and names the line.
"""

import ast
import json
from pathlib import Path

import pytest

from attention_measured.book import pages as book_pages

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = [ROOT / "intro.ipynb", *sorted((ROOT / "chapters").glob("*/*.ipynb"))]
HIDDEN = {"remove-cell", "remove-input", "hide-cell", "hide-input"}  # collapsed or never shown


def shown_cells(path):
    """(index, cell) for each code cell whose source a reader sees on the page."""
    for index, cell in enumerate(json.loads(path.read_text())["cells"]):
        tags = set(cell["metadata"].get("tags", []))
        if cell["cell_type"] == "code" and not tags & HIDDEN:
            yield index, cell


def output_text(cell):
    """The text a cell shows under it: its streams and plain-text results."""
    tags = set(cell["metadata"].get("tags", []))
    if tags & {"remove-cell", "remove-output", "hide-output"}:
        return ""
    parts = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "text" in output:
            parts.append("".join(output["text"]))
        elif "text/plain" in data and not set(data) & {"image/png", "text/html"}:
            parts.append("".join(data["text/plain"]))
    return "".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_visible_code_is_a_glue_call(path):
    for index, cell in shown_cells(path):
        source = "".join(cell["source"])
        assert "glue(" not in source, f"{path.name} cell {index}: glue belongs in a hidden cell"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_code_or_output_line_is_wider_than_the_column(path):
    cells = json.loads(path.read_text())["cells"]
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code" or "remove-cell" in cell["metadata"].get("tags", []):
            continue
        lines = "".join(cell["source"]).splitlines()
        if "remove-input" in cell["metadata"].get("tags", []):
            lines = []
        for line in lines + output_text(cell).splitlines():
            assert len(line) <= book_pages.WIDTH, f"{path.name} cell {index}: {line[:60]!r}..."


def names(source):
    """(the names a cell defines, the names it reads), an IPython line such as %pip passed over."""
    lines = []
    for line in source.splitlines():
        text = line.lstrip()
        magic = text[:1] in ("%", "!") and text[1:2].isalpha()
        lines.append(line[: len(line) - len(text)] + "pass" if magic else line)
    defined, read = set(), set()
    for node in ast.walk(ast.parse("\n".join(lines))):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else defined).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return defined, read


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_visible_name_comes_from_a_hidden_cell(path):
    # a reader who copies the code they see must be able to run it
    seen, unseen = set(), set()
    for index, cell in enumerate(json.loads(path.read_text())["cells"]):
        if cell["cell_type"] != "code":
            continue
        defined, read = names("".join(cell["source"]))
        if {"remove-cell", "remove-input"} & set(cell["metadata"].get("tags", [])):
            unseen |= defined - seen
            continue
        hidden = sorted((read - defined - seen) & unseen)
        assert not hidden, f"{path.name} cell {index} reads {hidden} from a hidden cell"
        seen |= defined


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_cell_prints_into_one_box_and_no_box_is_empty(path):
    # tools/refresh.py joins the pieces the kernel sends; a lone print() would be an empty box
    for index, cell in enumerate(json.loads(path.read_text())["cells"]):
        streams = [o for o in cell.get("outputs", []) if o["output_type"] == "stream"]
        for output, after in zip(cell.get("outputs", []), cell.get("outputs", [])[1:]):
            same = output["output_type"] == after["output_type"] == "stream"
            assert not (same and output["name"] == after["name"]), f"{path.name} cell {index}"
        for output in streams:
            assert "".join(output["text"]).strip(), f"{path.name} cell {index}: an empty box"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_figure_draws_one_text_over_another(path):
    # measured on both drawings when the page ran (phone_figures.overlapping_texts)
    for index, cell in enumerate(json.loads(path.read_text())["cells"]):
        for output in cell.get("outputs", []):
            meta = output.get("metadata", {}).get("image/png", {})
            if "phone" not in meta:
                continue
            where = f"{path.name} cell {index}"
            assert "phone_overlaps" in meta, f"{where}: stored before overlaps were measured"
            assert meta["overlaps"] == [], f"{where}, at 1280 px: {meta['overlaps']}"
            assert meta["phone_overlaps"] == [], f"{where}, on a phone: {meta['phone_overlaps']}"


def test_the_table_of_flavours_lists_every_flavour_of_the_library():
    from attention_measured.models import flavours

    page = json.loads((ROOT / "chapters/taxonomy/04-side-by-side.ipynb").read_text())
    text = next(
        "".join(c["source"])
        for c in page["cells"]
        if c["cell_type"] == "markdown" and "(table-flavours)=" in "".join(c["source"])
    )
    rows = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ")]
    listed = set(rows[1:])  # after the header
    assert set(flavours.FLAVOURS) <= listed, set(flavours.FLAVOURS) - listed
