"""Which directory is the repository when no `--root` is given: found as git finds its own.

From the starting directory upwards, the nearest directory holding one of MARKERS is the
root. The walk stops before it would cross into another file system (git's default) and
never moves up into a directory named in $REPOCTX_CEILING_DIRECTORIES or
$GIT_CEILING_DIRECTORIES (colon-separated absolute paths, as git reads the latter): the
starting directory itself is always looked at. When no marker is found, the starting
directory is the root. `--root DIR` is exact and skips all of this.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NamedTuple

# What marks a repository's top: git's directory (a file in a worktree or submodule), the
# state repoctx keeps, dotcontext's config, and a Contextia project.
MARKERS = (".git", ".repoctx", ".context.config.yaml", ".contextia")
CEILING_VARS = ("REPOCTX_CEILING_DIRECTORIES", "GIT_CEILING_DIRECTORIES")


class RootChoice(NamedTuple):
    root: str  # absolute, links resolved
    reason: str  # why this directory, in words
    marker: str | None = None  # the marker found there; None when given or when none was found


def given(root: str) -> RootChoice:
    return RootChoice(os.path.realpath(root), "given with --root")


def find_root(start: str, environ: Mapping[str, str] = os.environ) -> RootChoice:
    """The repository that `start` is in (see the module's docstring)."""
    here = os.path.realpath(start)
    ceilings = _ceilings(environ)
    directory = here
    while True:
        marker = next((m for m in MARKERS if os.path.lexists(os.path.join(directory, m))), None)
        if marker is not None:
            where = "the current directory" if directory == here else f"the nearest directory above {here}"
            return RootChoice(directory, f"{where} holding {marker}", marker)
        parent = os.path.dirname(directory)
        if parent == directory:
            stop = "reached /"
        elif parent in ceilings:
            stop = f"{parent} is a ceiling directory"
        elif _device(parent) != _device(directory):
            stop = f"{parent} is on another file system"
        else:
            directory = parent
            continue
        return RootChoice(here, f"no {', '.join(MARKERS)} in the current directory or above it ({stop})")


def _ceilings(environ: Mapping[str, str]) -> set[str]:
    found = set()
    for var in CEILING_VARS:
        for path in (environ.get(var) or "").split(os.pathsep):
            if os.path.isabs(path):
                found.add(os.path.realpath(path))
    return found


def _device(path: str) -> int | None:
    try:
        return os.stat(path).st_dev
    except OSError:
        return None
