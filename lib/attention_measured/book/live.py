"""Explorers that compute in the reader's page: the book's models written a second time in
JavaScript (the ``js`` folder beside this module), run by the browser with no server and nothing
loaded from outside the page.

A page opened from its own files (``file://``) may not import another file as a module, so each
module is handed to the page as a ``data:`` URL, its imports of sibling modules rewritten to
theirs (:func:`module_url`).  Where JavaScript is off, the explorer stays hidden and the static
twin of the same explorer (:mod:`.widgets`) is what the reader sees.  The Node tests in
``tests/js`` hold each JavaScript model equal to the library's.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import re
from pathlib import Path

from ..core import checks

FOLDER = Path(__file__).with_name("js")

DEFAULT_SEED = 42  # the live explorer's first seed: one the static twin does not offer

_SIBLING = re.compile(r'from "\./([a-z_]+)\.mjs"')


@functools.cache
def module_url(name: str) -> str:
    """The package's JavaScript module ``name`` (``"lesson"`` for ``js/lesson.mjs``) as a
    ``data:`` URL that a page opened from its own files can import."""
    if not isinstance(name, str) or not re.fullmatch(r"[a-z_]+", name):
        raise ValueError(f"name must be a module of the js folder, like 'lesson', got {name!r}")
    path = FOLDER / f"{name}.mjs"
    if not path.is_file():
        known = sorted(p.stem for p in FOLDER.glob("*.mjs"))
        raise ValueError(f"name must be one of {known}, got {name!r}")
    source = path.read_text()
    if f'from "./{name}.mjs"' in source:
        raise ValueError(f"js/{name}.mjs imports itself")
    source = _SIBLING.sub(lambda m: f'from "{module_url(m.group(1))}"', source)
    return "data:text/javascript;base64," + base64.b64encode(source.encode()).decode()


def seed_explorer(hundred_seeds, hundred_weights):
    """Part I's seed explorer, computed in the page (section 5): a box for any init seed, the
    network trained on it by ``js/lesson.mjs``, its weights and removal effects on held-out
    example 0, and where its weight on the marker falls among the hundred seeds of the sweep,
    ``hundred_seeds`` (100,) and their ``hundred_weights`` (100,)."""
    from IPython.display import HTML

    seeds = [int(s) for s in checks.integers(hundred_seeds, "hundred_seeds", 0, 2**63 - 1)]
    weights = checks.array(hundred_weights, "hundred_weights", ndim=1).tolist()
    if len(seeds) != len(weights) or not seeds:
        raise ValueError(
            f"hundred_seeds and hundred_weights must have one length, got {len(seeds)} and "
            f"{len(weights)}"
        )
    data = html.escape(json.dumps({"seeds": seeds, "weights": weights}))
    return HTML(
        f"""<div class="live-explorer" id="live-change-the-seed" hidden data-hundred="{data}"
 style="border: 1px solid #9a9a9a; border-radius: 6px; padding: 0.5rem 0.8rem; margin: 1rem 0">
<p><strong>Any seed, trained in your browser</strong></p>
<form class="live-form">
<label for="live-seed">init seed, a whole number from 0 to 2<sup>64</sup>&#8239;−&#8239;1</label>
<input id="live-seed" name="seed" inputmode="numeric" autocomplete="off" value="{DEFAULT_SEED}"
 size="22">
<button type="submit">train</button>
</form>
<p class="live-status" role="status" aria-live="polite"></p>
<svg viewBox="0 0 340 300" width="100%" style="max-width: 34rem" role="img"
 aria-label="For the typed seed: bars of the weights on held-out example 0 over its 12 steps,
 bars of each step's removal effect, and a histogram of the hundred seeds' mean weights on the
 marker with the typed seed's as a line."></svg>
<pre class="live-description" style="white-space: pre-wrap"></pre>
<p style="font-size: 0.9em">The lesson's random stream has 2<sup>32</sup> states, so there are
at most that many different networks: seeds past it repeat earlier ones.</p>
</div>
<script type="module">
import {{ mountSeedExplorer }} from "{module_url("lesson_page")}";
const root = document.getElementById("live-change-the-seed");
mountSeedExplorer(root, JSON.parse(root.dataset.hundred));
</script>"""
    )
