"""`.repoctx/`: what a team shares, and the state of one machine that git never sees.

A team shares `project.yaml`, `config.yaml` and the `.gitignore` below. Everything else
repoctx writes under `.repoctx/` belongs to one machine: caches, runs, proposals, the
journal of `proposals apply`, a report, temporary files, and the session database an older
repoctx kept there (`sessions.db`; now in the user's state place, project/store.py).
`.repoctx/.gitignore` ignores all of it but the shared files, so what a later release adds
there is ignored too, and `makedirs` puts those rules in place before any such file is made:
every writer of `.repoctx/` makes its directory through it.
"""

from __future__ import annotations

import os

from repoctx.base import fs, locks

STATE_DIR = ".repoctx"
IGNORE_FILE = f"{STATE_DIR}/.gitignore"
SHARED = (".gitignore", "config.yaml", "project.yaml")
# Anchored at `.repoctx/`: everything in it, then the shared files back.
RULES = ("/*", *(f"!/{name}" for name in SHARED))
HEADER = ("# repoctx: this machine's state (caches, runs, proposals, sessions, reports) stays out of git;\n"
          "# project.yaml and config.yaml are shared. Lines of yours are kept; one after these overrides them.\n")
MAX_IGNORE_BYTES = 1 << 20


def makedirs(root: str, rel: str) -> None:
    """Make the directory `rel` (relative to the workspace `root`) and its parents, through the
    confined layer; under `.repoctx/`, with the ignore rules in force first."""
    rel = os.path.normpath(rel)
    if rel == STATE_DIR or rel.startswith(STATE_DIR + os.sep):
        ensure_ignored(root)
    fs.makedirs(root, rel)


def ensure_ignored(root: str) -> None:
    """Add the RULES missing from `.repoctx/.gitignore`, keeping every other line (one read
    when none is missing). A `.gitignore` that is a link leading out raises LinkRefused,
    neither read nor written; one too large to be ours, or not a file, is left as it is."""
    if not _missing(_read(root)):
        return
    with locks.exclusive(root):
        text = _read(root)
        missing = _missing(text)
        if not missing:
            return
        fs.makedirs(root, STATE_DIR)
        body = (text + ("" if text.endswith("\n") else "\n")) if text else HEADER
        fs.write_atomic(root, IGNORE_FILE, (body + "\n".join(missing) + "\n").encode())


def _read(root: str) -> str | None:
    """The file's text, "" when there is none; None when it is there but not ours to change."""
    try:
        return fs.read_text(root, IGNORE_FILE, MAX_IGNORE_BYTES)
    except FileNotFoundError:
        return ""
    except fs.LinkRefused:
        raise  # the writer fails naming the link: nothing read through it or written there
    except OSError:
        return None  # too large, not a file, or `.repoctx` is not a directory


def _missing(text: str | None) -> list[str]:
    if text is None:
        return []
    lines = {line.strip() for line in text.splitlines()}
    return [rule for rule in RULES if rule not in lines]
