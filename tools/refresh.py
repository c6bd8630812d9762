"""Execute notebooks in place, top to bottom, and store their outputs and widget state.

Usage: python tools/refresh.py chapters/lesson/01-setup.ipynb [...]
Each notebook runs in its own folder in a fresh kernel of this environment.
"""

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def refresh(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=900,
        kernel_name="python3",
        store_widget_state=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute()
    nbformat.write(notebook, path)
    print(f"{path}: {len(notebook.cells)} cells in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if os.environ.get("ATTENTION_MEASURED_NUDGE", "").strip():
        sys.exit("ATTENTION_MEASURED_NUDGE is set: stored outputs must come from unnudged weights")
    for name in sys.argv[1:]:
        refresh(Path(name))
