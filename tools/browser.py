"""Print the path of a Chromium for the browser tests, installing one when this machine has none.

In order: $CHROMIUM; Debian's /usr/bin/chromium; when run as root on Debian,
`apt-get install chromium`; otherwise Playwright's own Chromium
(`playwright install chromium`).  Everything but the path goes to stderr, so
the Makefile can write CHROMIUM="$(python tools/browser.py)".
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

DEBIAN = Path("/usr/bin/chromium")


def say(message: str) -> None:
    print(f"tools/browser.py: {message}", file=sys.stderr, flush=True)


def playwright_chromium() -> Path | None:
    """Playwright's own Chromium, if it is installed."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        path = Path(p.chromium.executable_path)
    return path if path.is_file() else None


def find_or_install() -> Path:
    given = os.environ.get("CHROMIUM")
    if given:
        if Path(given).is_file():
            return Path(given)
        sys.exit(f"tools/browser.py: $CHROMIUM is {given!r}, which is not a file")
    if DEBIAN.is_file():
        return DEBIAN
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        say("no Chromium on this machine; installing Debian's chromium package (a minute or two)")
        environment = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for command in (
            ["apt-get", "update", "-qq"],
            ["apt-get", "install", "-y", "-qq", "chromium"],
        ):
            done = subprocess.run(command, env=environment, stdout=subprocess.DEVNULL)
            if done.returncode:
                sys.exit(
                    f"tools/browser.py: {' '.join(command)} failed (exit {done.returncode}); "
                    "install Chromium yourself and set $CHROMIUM to its path"
                )
        if DEBIAN.is_file():
            return DEBIAN
    found = playwright_chromium()
    if found:
        return found
    say("no Chromium on this machine; installing Playwright's own (playwright install chromium)")
    done = subprocess.run(
        [sys.executable, "-m", "playwright", "install", "chromium"], stdout=sys.stderr
    )
    found = playwright_chromium() if done.returncode == 0 else None
    if not found:
        sys.exit(
            "tools/browser.py: could not install a Chromium (Playwright's download failed). "
            "Install Chromium or Chrome yourself and set $CHROMIUM to its path, "
            "e.g. CHROMIUM=/usr/bin/chromium"
        )
    return found


if __name__ == "__main__":
    print(find_or_install())
