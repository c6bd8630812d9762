"""Execute notebooks in place, top to bottom, and store their outputs and widget state.

Usage: python tools/refresh.py chapters/lesson/01-setup.ipynb [...]
Each notebook runs in its own folder in a fresh kernel of this environment.
"""

import os
import sys
import time
from pathlib import Path

import nbformat
from jupyter_client.channels import AsyncZMQSocketChannel
from nbclient import NotebookClient

POLL = 1.0  # seconds: how long one look at a kernel's channel waits before looking again


async def _get_msg(self, timeout=None):
    """A channel's next message, looked for every :data:`POLL` seconds until ``timeout``.

    The client's poll of a channel sometimes misses the wake-up of a message that has come
    (nbclient issue 312: cells with ipywidgets): the reply then sat unseen until the cell's
    timeout, 900 s, so a notebook of live widgets seemed to hang one run in three or four.
    A poll that ends looks again, and finds the message within a second."""
    from queue import Empty

    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        wait = POLL if deadline is None else max(0.0, min(POLL, deadline - time.monotonic()))
        if await self.socket.poll(int(wait * 1000)):
            return await self._recv()
        if deadline is not None and time.monotonic() >= deadline:
            raise Empty


AsyncZMQSocketChannel.get_msg = _get_msg


def streams_joined(cell) -> None:
    """Join a cell's consecutive printed outputs to the same stream into one, as the page shows
    them: the kernel sends a print in pieces that depend on timing, and each piece stored apart
    becomes a box of its own on the page (an empty one for a lone newline)."""
    outputs = []
    for output in cell.get("outputs", []):
        previous = outputs[-1] if outputs else None
        if (
            output["output_type"] == "stream"
            and previous is not None
            and previous["output_type"] == "stream"
            and previous["name"] == output["name"]
        ):
            previous["text"] += output["text"]
        else:
            outputs.append(output)
    if "outputs" in cell:
        cell["outputs"] = outputs


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
    for cell in notebook.cells:
        streams_joined(cell)
    nbformat.write(notebook, path)
    print(f"{path}: {len(notebook.cells)} cells in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if os.environ.get("ATTENTION_MEASURED_NUDGE", "").strip():
        sys.exit("ATTENTION_MEASURED_NUDGE is set: stored outputs must come from unnudged weights")
    for name in sys.argv[1:]:
        refresh(Path(name))
