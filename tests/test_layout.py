"""The packages of lib/README.md, enforced: which package may import which, no private names
across modules, no module named after a source or a Part, and each shared idea written once."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lib" / "attention_measured"
# Each package may import itself and the packages listed for it, never one above it.
ALLOWED = {
    "machinery": {"machinery", "core"},  # the cache reads the argument checks and the nudge
    "core": {"core", "machinery"},
    "tasks": {"tasks", "core", "machinery"},
    "models": {"models", "tasks", "core", "machinery"},
    "measures": {"measures", "models", "tasks", "core", "machinery"},
    "experiments": {"experiments", "measures", "models", "tasks", "core", "machinery"},
    "book": {"book", "experiments", "measures", "models", "tasks", "core", "machinery"},
}
# The drawing modules of the book know no model: they draw what they are handed.
DRAWING = {"book.plots", "book.diagrams", "book.phone_figures", "book.widgets", "book.pages"}
EXPLORERS = {
    f"book.{p.stem}" for p in (PACKAGE / "book").glob("*_explorers.py")
}  # each draws and describes what the packages below compute
# Names of the sources and of the Parts' places: no module may carry them.
FORBIDDEN_NAMES = {"lesson", "udhr", "taxonomy", "article", "demo", "part", "seed", "chapter"}


def modules() -> list[str]:
    """Every module of the package by its dotted name below it ("models.reader")."""
    return sorted(
        ".".join(p.relative_to(PACKAGE).with_suffix("").parts)
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py"
    )


def source(module: str) -> str:
    return (PACKAGE / Path(*module.split("."))).with_suffix(".py").read_text()


def imports(module: str) -> list[tuple[str, str]]:
    """(imported module, imported name or '') for every import of the package in ``module``:
    `from ..core import checks` gives ("core.checks", ""), `from .flavours import attend`
    ("models.flavours", "attend")."""
    known = set(modules())
    tree = ast.parse(source(module))
    package = module.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            base = package[: len(package) - (node.level - 1)]
            if node.module:
                base = base + node.module.split(".")
            for alias in node.names:
                as_module = ".".join(base + [alias.name])
                if as_module in known:
                    found.append((as_module, ""))
                else:
                    found.append((".".join(base), alias.name))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "attention_measured"
        ):
            raise AssertionError(f"{module} imports the package by its absolute name")
    return found


def test_every_module_is_in_a_package_and_named_for_an_idea():
    found = modules()
    assert found, "no modules found"
    for module in found:
        package, *rest = module.split(".")
        assert package in ALLOWED and len(rest) == 1, f"{module} is not in one of {set(ALLOWED)}"
        words = set(rest[0].split("_"))
        assert not words & FORBIDDEN_NAMES, f"{module} is named after a source or a Part"


@pytest.mark.parametrize("module", modules())
def test_imports_go_down_the_packages_only(module):
    package = module.split(".")[0]
    for imported, _ in imports(module):
        assert imported.split(".")[0] in ALLOWED[package], f"{module} imports {imported}"
        if module in DRAWING:
            assert imported.split(".")[0] in ("core", "machinery", "book"), (
                f"{module} draws and should not need {imported}"
            )
            assert imported not in EXPLORERS and imported.split(".")[0] != "experiments"


@pytest.mark.parametrize("module", modules())
def test_no_private_name_crosses_a_module(module):
    tree = ast.parse(source(module))
    for imported, name in imports(module):
        assert not name.startswith("_"), f"{module} imports the private {imported}.{name}"
    aliases = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level >= 1
        for alias in node.names
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr.startswith("_")
        ):
            raise AssertionError(f"{module} uses the private {node.value.id}.{node.attr}")


def test_widgets_know_nothing_of_attention():
    # the cache remembers a twin's page, filed under the code of its render and describe
    assert sorted(imports("book.widgets")) == [
        ("book.phone_figures", ""),
        ("machinery.cache", "remembered"),
    ]
    text = source("book.widgets")
    for word in ("single_query", "cloze", "flavour", "attention_weights"):
        assert f"import {word}" not in text and f"{word}." not in text


HOMES = {  # an idea every model shares, and the one module that writes it
    "softmax": "core.attention",
    "as_rows": "core.attention",
    "shifted_right": "tasks.translation",
    "removal_effects": "measures.removal",
    "effects": "measures.removal",
    "agreement": "measures.removal",
    "Trained": "core.training",
    "fit": "core.training",
    "Control": "book.widgets",
}
ANALYTIC = {  # models that keep a faster removal test of their own, each tested equal to the one
    ("removal_effects", "models.single_query"),
    ("removal_effects", "models.cloze_head"),
    ("removal_effects", "models.heads"),
}


@pytest.mark.parametrize("module", modules())
def test_each_shared_idea_is_written_in_one_module(module):
    for node in ast.walk(ast.parse(source(module))):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            name = node.name.lstrip("_")
            home = HOMES.get(name)
            if home and home != module and (name, module) not in ANALYTIC:
                raise AssertionError(f"{module} writes {node.name}, which lives in {home}")


@pytest.mark.parametrize("module", sorted(EXPLORERS))
def test_every_explorer_states_its_choices_once(module):
    # the live widget and the static twin are both made from one list, by widgets.explorer
    names = {name for _, name in imports(module)}
    assert "explorer" in names and not names & {"live", "static_twin"}
