"""Git's view of a scope's files: are they what they were at a commit?

A stat fingerprint changes with every checkout, so after a clone every scope
reads stale by stat alone. git knows better: a context file that records in
`evidence.commit_sha` a commit whose version of the scope's files is what the
context describes (repoctx records one only when that holds) is still right when
git finds those files unchanged since that commit, whatever their mtimes.

"The scope's files" are the files directly in its directory, as the fingerprint
counts them, less `.context.yaml` and what git ignores. Questions are batched: one
`git diff` and one `git ls-files` per commit asked about, whatever the number of scopes.
"""

from __future__ import annotations

import os
import posixpath
import subprocess

import msgspec

CONTEXT_FILE = ".context.yaml"
OUR_EVIDENCE = frozenset({"collected_at", "commit_sha"})
# Beyond this many scopes, one question about the whole tree beats a long pathspec.
_PATHSPEC_LIMIT = 64


def _git(root: str, *args: str) -> bytes | None:
    # git may refresh its index's stat cache as it goes (as `git status` does): without that,
    # every question after a checkout or a touch would hash the touched files again.
    env = {**os.environ, "LC_ALL": "C"}
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(var, None)
    try:
        proc = subprocess.run(["git", "-C", root, *args], capture_output=True, env=env, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def head(root: str) -> str | None:
    """The commit checked out at `root`, or None outside a repository or before the first commit."""
    out = _git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    return out.decode().strip() if out else None


def _dirs_of(paths: bytes) -> set[str]:
    dirs = set()
    for raw in paths.split(b"\0"):
        if raw:
            path = raw.decode("utf-8", "surrogateescape")
            if posixpath.basename(path) != CONTEXT_FILE:
                dirs.add(posixpath.dirname(path) or ".")
    return dirs


def _pathspec(scopes: list[str]) -> list[str]:
    if "." in scopes or len(scopes) > _PATHSPEC_LIMIT:
        return []
    return ["--", *(f":(literal){s}" for s in scopes)]


def changed_dirs(root: str, commit: str, scopes: list[str]) -> set[str] | None:
    """Directories among or under `scopes` holding a file that differs from `commit`
    or that git neither tracks nor ignores; None when git cannot tell (no repository,
    unknown commit)."""
    spec = _pathspec(scopes)
    diff = _git(root, "diff", "--name-only", "-z", "--no-renames", "--relative", commit, *spec)
    if diff is None:
        return None
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z", *spec)
    if untracked is None:
        return None
    return _dirs_of(diff) | _dirs_of(untracked)


def unchanged_since(root: str, wanted: dict[str, str]) -> set[str]:
    """The scopes of `wanted` (scope -> commit) whose files git finds unchanged since that commit."""
    by_commit: dict[str, list[str]] = {}
    for scope, commit in wanted.items():
        by_commit.setdefault(commit, []).append(scope)
    fresh: set[str] = set()
    for commit, scopes in by_commit.items():
        changed = changed_dirs(root, commit, scopes)
        if changed is not None:
            fresh.update(s for s in scopes if s not in changed)
    return fresh


def recorded_commit(evidence) -> str | None:
    """The commit of evidence as repoctx writes it (`collected_at` and `commit_sha`, nothing
    else), else None: evidence other tools collected may name a commit the files never matched."""
    if not isinstance(evidence, msgspec.Struct):
        return None
    present = {k for k, v in msgspec.structs.asdict(evidence).items() if v is not msgspec.UNSET}
    return evidence.commit_sha if present == OUR_EVIDENCE else None
