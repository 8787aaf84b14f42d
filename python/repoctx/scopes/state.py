"""The state of each scope: its `.context.yaml` read, decoded and judged.

The one reader of context files for every door: `status` and `list_contexts` (and so the
report), `check` and `check_freshness`, `show` and `query_context`, `validate`'s
scopes.context_files, `scopes validate`, and what `regen` takes for stale. A scope with a
context file is fresh when the stored fingerprint is the directory's, or when git finds
its files unchanged since the commit the context recorded (gitstate.py, "Fresh after a
clone" in docs/scopes.md); stale otherwise. Without a file it is missing; with one that
cannot be used, invalid (`Invalid` says why). Files are read through the core's confined
reader, bounded by MAX_CONTEXT_BYTES.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Literal

import msgspec
from msgspec import Struct

from repoctx import _core
from repoctx.base import fs, index
from repoctx.base.workspace import is_racy, stat_key
from repoctx.formats import context_file as cf
from repoctx.scopes import gitstate, heads
from repoctx.scopes.heads import Head, Invalid

# The largest context file read or written: far above a real one (a file listing 10,000 files
# is about 1 MiB), so a valid file is always read; a larger one is refused as invalid.
MAX_CONTEXT_BYTES = 16 << 20

State = Literal["fresh", "stale", "missing", "invalid"]


def read_contexts(paths: list[str]) -> list[_core.YamlFile]:
    """Parse context files (absolute paths) beneath their workspace root, through the confined
    layer: a link on the way that leads out is read as invalid, never followed."""
    if not paths:
        return []
    root = fs.split(paths[0])[0]
    rels = [os.path.relpath(p, root) for p in paths]  # every caller's paths share one root
    return _core.read_yaml_many(root, rels, MAX_CONTEXT_BYTES)


_decoder = msgspec.json.Decoder(cf.ContextFile)


class _Refusal(Struct):
    reason: str
    line: int
    column: int


_refusal = msgspec.json.Decoder(_Refusal)


def decode(kind: str, payload: str) -> cf.ContextFile | Invalid:
    """A context file as the core read it (a YamlFile's kind and text), or why it cannot be used."""
    if kind == "refused":  # YAML the reader refused, and where
        r = _refusal.decode(payload)
        return Invalid("invalid", r.reason, line=r.line, column=r.column)
    if kind == "too_large":
        return Invalid(kind, f"larger than {MAX_CONTEXT_BYTES >> 20} MiB")
    if kind != "json":
        return Invalid(kind, payload or kind)
    try:
        # A valid file in one typed pass (no intermediate dicts): status reads thousands.
        return _decoder.decode(payload)
    except msgspec.ValidationError:
        pass
    # The two-step path tells an unsupported version from a schema error and names the field.
    try:
        return cf.from_data(msgspec.json.decode(payload))
    except cf.UnsupportedVersion as exc:
        return Invalid(kind, exc.advice(), "version", exc.found)
    except cf.SchemaError as exc:
        return Invalid(kind, str(exc), exc.field)


def read_files(root: str, scopes: list[str]) -> dict[str, cf.ContextFile | Invalid]:
    """The context files of `scopes` (each had one when walked), parsed whole: for the
    commands that need every field (the writers, `scopes validate`)."""
    paths = [os.path.join(root, s, cf.CONTEXT_FILE) for s in scopes]
    return {s: decode(read.kind, read.text) for s, read in zip(scopes, read_contexts(paths))}


# Context files parsed by read_one, by path, valid while their stat key holds: an unchanged
# file is never parsed twice in a serving process (one written in the last seconds is, see
# workspace.stat_key). Callers only read them.
_loaded: dict[str, tuple[tuple, cf.ContextFile]] = {}


def read_one(path: str, st: os.stat_result) -> cf.ContextFile | Invalid:
    """The context file at `path` whose stat, taken before this call, is `st` (a write between
    the two leaves an old key, so the file is read again next time)."""
    key = stat_key(st)
    held = _loaded.get(path)
    if held is not None and held[0] == key:
        return held[1]
    [read] = read_contexts([path])
    found = decode(read.kind, read.text)
    if not isinstance(found, Invalid):
        _loaded[path] = (key, found)
    return found


class Judged(Struct, frozen=True, gc=False):
    """A scope's state and what it was judged from."""

    state: State
    fingerprint: str  # the directory's, now
    head: Head | None = None  # the context file's, when it is valid
    fresh_by: Literal["git"] | None = None  # fresh although the fingerprints differ: git says so
    problem: Invalid | None = None  # why the file cannot be used, when invalid


def judge(root: str, found: dict[str, tuple[Head | Invalid | None, str]],
          unchanged: Callable[[dict[str, str]], set[str]] | None = None) -> dict[str, Judged]:
    """Each scope's state from (its context file's head, or why it cannot be used, or None
    when it has none; the directory's fingerprint now). git is asked only about scopes whose
    fingerprints differ, once per commit: by `unchanged` (scope -> commit, to the scopes git
    finds unchanged since), gitstate's by default."""
    wanted = {s: h.commit for s, (h, fp) in found.items() if isinstance(h, Head) and h.fingerprint != fp and h.commit}
    by_git = (unchanged or functools.partial(gitstate.unchanged_since, root))(wanted) if wanted else set()
    out = {}
    for scope, (h, fp) in found.items():
        if h is None:
            out[scope] = Judged("missing", fp)
        elif isinstance(h, Invalid):
            out[scope] = Judged("invalid", fp, problem=h)
        elif h.fingerprint == fp:
            out[scope] = Judged("fresh", fp, h)
        elif scope in by_git:
            out[scope] = Judged("fresh", fp, h, fresh_by="git")
        else:
            out[scope] = Judged("stale", fp, h)
    return out


def judge_rows(root: str, rows: list[index.DirRow], every: bool = True) -> dict[str, Judged]:
    """The state of each table row's scope (a serving process's live table, or a walk's).
    `every`: the rows are all the tree's, so the memo of heads forgets scopes not among them;
    else they are only rows that changed, and the memo keeps the others."""
    found = _heads(root, [row for row in rows if row.has_context], every)
    return judge(root, {row.scope: (found.get(row.scope), row.fingerprint) for row in rows})


BULK_PARSE = 1000  # files parsed in one go after which the parser's garbage is handed back

# Heads of context files by root, then scope, valid while the file's (mtime ns, size) hold:
# an unchanged file is never parsed twice in a serving process, nor, through the memo in the
# user's cache, from one CLI run to the next.
_parsed: dict[str, heads.Memo] = {}


def _heads(root: str, rows: list[index.DirRow], every: bool) -> dict[str, Head | Invalid]:
    """The head of each row's context file, or why it cannot be used, by scope."""
    known = _parsed.get(root)
    if known is None:
        known = heads.load(root)
    out: dict[str, Head | Invalid] = {}
    todo = []
    for row in rows:
        hit = known.get(row.scope)
        if hit is not None and hit[0] == row.context_mtime_ns and hit[1] == row.context_size:
            out[row.scope] = hit[2]
        else:
            todo.append(row)
    current = {row.scope: known[row.scope] for row in rows if row.scope in known} if every else dict(known)
    for row, read in zip(todo, read_contexts([os.path.join(root, row.scope, cf.CONTEXT_FILE) for row in todo])):
        found = decode(read.kind, read.text)
        out[row.scope] = head = found if isinstance(found, Invalid) else Head.of(found)
        # What the content decides is kept; a file unreadable for now, or written so recently
        # that a rewrite may not change its stat, is read again next time.
        if read.kind in ("json", "too_large") and not is_racy(row.context_mtime_ns):
            current[row.scope] = (row.context_mtime_ns, row.context_size, head)
        else:
            current.pop(row.scope, None)
    _parsed[root] = current
    if todo:
        heads.save(root, current)
    if len(todo) >= BULK_PARSE:
        index.release_free_memory()
    return out
