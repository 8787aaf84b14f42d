"""Where `.contextia/` is: a module of its own, without msgspec, so the task index's build (which
runs beside the prompt hook's imports) can look for it without importing the documents' formats."""

from __future__ import annotations

import os

CONTEXTIA_DIR = ".contextia"


def find_project_dir(root: str) -> str | None:
    """The `.contextia/` directory serving `root`: its own, never a parent's (the root is the
    boundary every read and write is confined to; base/rootfind.py already found the root
    from where a command started); a link in its place is not one. None when there is none."""
    candidate = os.path.join(root, CONTEXTIA_DIR)
    return candidate if os.path.isdir(candidate) and not os.path.islink(candidate) else None
