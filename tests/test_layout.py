"""The layout of lib/README.md, enforced: which module may import which; no private names across."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lib" / "attention_measured"
CORE = [
    "checks",
    "rng",
    "cache",
    "blas",
    "workspace",
    "params",
    "losses",
    "measures",
    "data",
    "attention",
    "optim",
    "training",
]
PARTS = [  # in order: a Part may import the ones before it
    "lesson",
    "udhr",
    "recall",
    "flavours",
    "taxonomy",
    "selfattention",
    "memory",
    "translation",
    "recurrent",
    "transformer",
    "decoding",
    "comparison",
    "explanations",
    "subjects",
    "adversarial_training",
    "verdict",
    "source_texts",
]
PRESENTATION = [
    "phone_figures",
    "plots",
    "diagrams",
    "widgets",
    "book",
    "lesson_explorers",
    "udhr_explorers",
    "taxonomy_explorers",
    "translation_explorers",
    "explanation_explorers",
]
EXPLORERS = {
    "lesson_explorers",
    "udhr_explorers",
    "taxonomy_explorers",
    "translation_explorers",
    "explanation_explorers",
}


def imports(module: str) -> list[tuple[str, str]]:
    """(imported module, imported name or '') for every import of the package inside ``module``."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                if node.module is None:
                    found.append((alias.name, ""))
                else:
                    found.append((node.module, alias.name))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "attention_measured"
        ):
            found.append((node.module.split(".")[-1], ""))
    return found


def test_every_module_is_in_exactly_one_layer():
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    layers = CORE + PARTS + PRESENTATION
    assert sorted(modules) == sorted(layers) and len(layers) == len(set(layers))


@pytest.mark.parametrize("module", CORE + PARTS + PRESENTATION)
def test_imports_go_down_the_layers_only(module):
    for imported, _ in imports(module):
        if module in CORE:
            assert imported in CORE, f"core module {module} imports {imported}"
        elif module in PARTS:
            allowed = CORE + PARTS[: PARTS.index(module)]
            assert imported in allowed, f"{module} imports {imported}, a later Part or presentation"
        elif module in EXPLORERS:
            allowed = CORE + PARTS + ["plots", "widgets", "book"]
            assert imported in allowed, f"{module} imports {imported}"
        elif module == "diagrams":  # pictures of the mechanisms, in the figure style, checked
            allowed = ("plots", "phone_figures", "attention", "checks")
            assert imported in allowed, f"{module} imports {imported}"
        else:  # the figure style and the widgets draw for a phone too
            allowed = [*CORE, "phone_figures"] if module in ("plots", "widgets") else CORE
            assert imported in allowed and imported not in ("training", "optim"), (
                f"{module} should not need {imported}"
            )


@pytest.mark.parametrize("module", CORE + PARTS + PRESENTATION)
def test_no_private_name_crosses_a_module(module):
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    package_aliases = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None
        for alias in node.names
    }
    for imported, name in imports(module):
        assert not name.startswith("_"), f"{module} imports the private {imported}.{name}"
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in package_aliases
            and node.attr.startswith("_")
        ):
            raise AssertionError(f"{module} uses the private {node.value.id}.{node.attr}")


def test_widgets_know_nothing_of_attention():
    # the cache remembers a twin's page, filed under the code of its render and describe
    assert sorted(imports("widgets")) == [("cache", "remembered"), ("phone_figures", "")]
    source = (PACKAGE / "widgets.py").read_text()
    for word in ("lesson", "udhr", "flavour", "attention_weights"):
        assert f"import {word}" not in source and f"{word}." not in source


HOMES = {  # an idea every Part shares, and the one module that writes it
    "softmax": "attention",
    "as_rows": "attention",
    "shifted_right": "translation",
    "removal_effects": "measures",
    "effects": "measures",
    "agreement": "measures",
    "Trained": "training",
    "fit": "training",
    "Control": "widgets",
}
ANALYTIC = {  # Parts that keep a faster removal test of their own, each tested equal to measures'
    ("removal_effects", "lesson"),
    ("removal_effects", "recall"),
    ("removal_effects", "taxonomy"),
}


@pytest.mark.parametrize("module", CORE + PARTS + PRESENTATION)
def test_each_shared_idea_is_written_in_one_module(module):
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    for node in ast.walk(tree):
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
