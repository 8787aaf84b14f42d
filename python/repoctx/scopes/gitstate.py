"""Git's view of a scope's files: are they what they were at a commit?

A stat fingerprint changes with every checkout, so after a clone every scope
reads stale by stat alone. git knows better: a context file that records in
`evidence.commit_sha` a commit whose version of the scope's files is what the
context describes (repoctx records one only when that holds) is still right when
git finds those files unchanged since that commit, whatever their mtimes.

"The scope's files" are the files directly in its directory, as the fingerprint
counts them, less `.context.yaml` and what git ignores. The core answers in process
(rust/git/: the index and the objects read with gix, as `git diff
--name-only --no-renames COMMIT` and `git ls-files --others --exclude-standard`
would answer): one handle per root, kept, so a second question costs stats, not
reads. Questions are batched: one call per commit asked about, whatever the number
of scopes.
"""

from __future__ import annotations

import threading

import msgspec

from repoctx import _core

CONTEXT_FILE = ".context.yaml"
OUR_EVIDENCE = frozenset({"collected_at", "commit_sha"})

# One handle per root for the life of the process (a serving process asks again and again).
_repos: dict[str, _core.GitRepo] = {}
_lock = threading.Lock()


def repo(root: str) -> _core.GitRepo:
    """The core's handle on the repository holding `root` (opened on first use, kept)."""
    held = _repos.get(root)
    if held is None:
        with _lock:
            held = _repos.setdefault(root, _core.GitRepo(root))
    return held


def head(root: str) -> str | None:
    """The commit checked out at `root`, or None outside a repository or before the first commit."""
    return repo(root).head()


def changed_dirs(root: str, commit: str, scopes: list[str]) -> set[str] | None:
    """Directories among or under `scopes` holding a file that differs from `commit`
    or that git neither tracks nor ignores; None when git cannot tell (no repository,
    unknown commit)."""
    return repo(root).changed_dirs(commit, scopes)


def unchanged_since(root: str, wanted: dict[str, str]) -> set[str]:
    """The scopes of `wanted` (scope -> commit) whose files git finds unchanged since that commit."""
    by_commit: dict[str, list[str]] = {}
    for scope, commit in wanted.items():
        by_commit.setdefault(commit, []).append(scope)
    fresh: set[str] = set()
    for commit, scopes in by_commit.items():
        # Only the scopes' own files decide (changed_dirs(...) asked about them alone).
        same = repo(root).unchanged(commit, scopes)
        if same is not None:
            fresh.update(same)
    return fresh


def recorded_commit(evidence) -> str | None:
    """The commit of evidence as repoctx writes it (`collected_at` and `commit_sha`, nothing
    else), else None: evidence other tools collected may name a commit the files never matched."""
    if not isinstance(evidence, msgspec.Struct):
        return None
    fields = msgspec.structs.asdict(evidence)
    present = {k for k, v in fields.items() if v is not msgspec.UNSET}
    return fields["commit_sha"] if present == OUR_EVIDENCE else None
