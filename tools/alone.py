"""Copy each notebook into an empty folder of its own: python tools/alone.py DEST notebook.ipynb ...

`make test-notebooks` runs nbval on these copies, so that a notebook passes only
if it runs with nothing beside it, as it does when a reader opens it on Colab.
"""

import shutil
import sys
from pathlib import Path


def main(destination: str, notebooks: list[str]) -> None:
    for name in notebooks:
        source = Path(name)
        folder = Path(destination) / (source.parent.name or "book") / source.stem
        folder.mkdir(parents=True)
        shutil.copy2(source, folder / source.name)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
