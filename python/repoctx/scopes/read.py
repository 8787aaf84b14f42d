"""Scopes: `.context.yaml` per directory, fresh or stale by stat fingerprint.

The read side of the dotcontext contract: `list_contexts`, `check_freshness`
and `query_context`, with its fields, states, error messages and `isError`
rules. Scanning and fingerprinting run in the Rust core; reading and judging
context files is scope_state.py's, as for every other door.
"""

from __future__ import annotations

import bisect
import os
import stat
import sys
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from repoctx import _core
from repoctx.base import fs, index
from repoctx.base.command import CliView, Command, McpView, compact_json
from repoctx.base.errors import RepoctxError
from repoctx.base.words import plural
from repoctx.base.workspace import CONFIG_FILE, PathEscape, RootNotAllowed, Workspace
from repoctx.formats import config as config_format
from repoctx.formats import context_file as cf
from repoctx.scopes import state as scope_state
from repoctx.scopes.heads import Head, Invalid

TRAVERSAL = "Invalid scope: path traversal detected"

# A scope's state. A context file that exists but cannot be used is `invalid`; the dotcontext
# contract calls it `missing`, and so does a server or repository that asks for the contracts'
# own words (`serve --names contract`, `names: contract` in .repoctx/config.yaml).
State = Literal["fresh", "stale", "missing", "invalid"]
STATES = ("fresh", "stale", "missing", "invalid")


def contract_words(ws: Workspace) -> bool:
    """Whether answers use the contracts' own words (`names: contract`)."""
    if ws.names is not None:
        return ws.names == "contract"
    try:
        return config_format.load(ws.root).names == "contract"
    except config_format.ConfigError:  # reported by every command that reads the file
        return False


def _worded(ws: Workspace, state: str) -> str:
    return "missing" if state == "invalid" and contract_words(ws) else state

Scope = Annotated[str, Meta(description='Relative path from project root, e.g. "src/core" or "." for root')]
RootOverride = Annotated[
    str | None,
    Meta(description="Project root path override. Defaults to the server's configured root; "
         "other roots must be allowed with --allow-root."),
]


# The files of this surface anywhere at the root: a context file, the config, the ignore file.
DATA_FILES = (cf.CONTEXT_FILE, CONFIG_FILE, ".contextignore")


def has_data(ws: Workspace) -> bool:
    """Whether the root holds a file of this surface (registry/catalog.surfaces_with_data)."""
    return any(os.path.lexists(os.path.join(ws.root, name)) for name in DATA_FILES)


def _missing(scope: str) -> str:
    return (
        f'No .context.yaml found at scope "{scope}". This scope may be below the min_tokens '
        "threshold; use list_contexts to see eligible scopes."
    )


def _for_people(error: str) -> str:
    """A contract's error as a person reads it on the CLI: the contract's missing-file text blames
    min_tokens and names an MCP tool; whether the directory exists at all is advice.py's to say."""
    return "no .context.yaml" if error.startswith("No .context.yaml found at scope") else error


def _corrupt(scope: str) -> str:
    return f'Invalid or corrupt .context.yaml at scope "{scope}"'


def _unsupported(version: object) -> str:
    return (
        f"Unsupported schema version {version} (this tool supports version 1). "
        "Upgrade dotcontext to read this file."
    )


class ScopeProblem(RepoctxError):
    """A scope that cannot be served, with the contract's message and, when its context file
    exists but cannot be used, why."""

    def __init__(self, message: str, invalid: InvalidContext | UnsetType = UNSET) -> None:
        super().__init__(message)
        self.invalid = invalid


class InvalidContext(Struct, omit_defaults=True):
    """Why a context file that exists cannot be used, and where when its YAML is broken."""

    reason: Annotated[str, Meta(description="What is wrong with the file, e.g. \"did not find expected key\"")]
    line: Annotated[int, Meta(description="Line (from 1) where the YAML reader stopped")] | UnsetType = UNSET
    column: Annotated[int, Meta(description="Column on that line (from 1, in characters)")] | UnsetType = UNSET

    @classmethod
    def of(cls, bad: Invalid) -> InvalidContext | UnsetType:
        """The wire form of why a file cannot be used; UNSET for a file gone since the walk."""
        if bad.read == "missing":
            return UNSET
        return cls(bad.detail, bad.line or UNSET, bad.column or UNSET)


InvalidField = Annotated[
    InvalidContext | UnsetType,
    Meta(description="Only when the .context.yaml exists but cannot be used (state invalid; missing in the "
         "contract's words): why, and where"),
]


def _invalid_text(scope: str, invalid: InvalidContext) -> str:
    """`invalid (src/.context.yaml:3:5: reason)`: the file and place, as compilers name one."""
    path = cf.CONTEXT_FILE if scope == "." else f"{scope}/{cf.CONTEXT_FILE}"
    where = "".join(f":{n}" for n in (invalid.line, invalid.column) if n is not UNSET)
    return f"invalid ({path}{where}: {invalid.reason})"


# APFS and NTFS (by default) open a directory typed in another case, and APFS one typed in
# another Unicode form; a scope is its directories' names as stored, byte for byte, on every
# OS (docs/platforms.md). Linux's file systems hold to that already.
_FOLDING = sys.platform in ("darwin", "win32")


def named_as_stored(root: str, rel: str) -> bool:
    """Whether each name of `rel` (a normalised scope) is an entry of its parent byte for byte."""
    parent = "."
    for name in [] if rel == "." else rel.split("/"):
        if name not in set(fs.listdir(root, parent)):
            return False
        parent = name if parent == "." else f"{parent}/{name}"
    return True


def load_scope(ws: Workspace, scope: str) -> tuple[str, str, cf.ContextFile]:
    """(normalised scope, directory, parsed context) or ScopeProblem with the contract's error."""
    try:
        rel, directory = ws.resolve(scope)
    except PathEscape:
        raise ScopeProblem(TRAVERSAL) from None
    path = os.path.join(directory, cf.CONTEXT_FILE)
    try:
        st = os.stat(path)
    except OSError:
        raise ScopeProblem(_missing(rel)) from None
    if not stat.S_ISREG(st.st_mode) or (_FOLDING and not named_as_stored(ws.root, rel)):
        raise ScopeProblem(_missing(rel))
    if not ws.contains_real(path):
        raise ScopeProblem(TRAVERSAL)
    ctx = scope_state.read_one(path, st)
    if isinstance(ctx, Invalid):
        if ctx.read == "missing":
            raise ScopeProblem(_missing(rel))
        raise ScopeProblem(_unsupported(ctx.version) if ctx.version is not None else _corrupt(rel),
                           InvalidContext.of(ctx))
    return rel, directory, ctx


# --- list_contexts ---------------------------------------------------------


class ListContextsParams(Struct):
    path: RootOverride = None
    under: Annotated[
        str | None, Meta(description='Only scopes at or under this one, e.g. "packages/api" (for large trees)')
    ] = None
    state: Annotated[State | None, Meta(description="Only entries in this state")] = None
    limit: Annotated[int, Meta(ge=1, description="At most this many entries; then next_cursor gives the next page")] | None = None
    cursor: Annotated[str | None, Meta(description="next_cursor of the page before")] = None
    check: Annotated[
        bool, Meta(description="For CI: an error (non-zero exit) when any scope is stale, missing or invalid")
    ] = False


# Added to a fresh scope whose fingerprints differ: git found its files unchanged since the
# commit the context recorded ("Fresh after a clone" in docs/scopes.md).
FreshBy = Annotated[
    Literal["git"] | UnsetType,
    Meta(description='"git" when the scope is fresh because git finds its files unchanged since the commit '
         "its context recorded, although the stored and computed fingerprints differ"),
]


class Entry(Struct, omit_defaults=True):
    scope: str
    state: State
    has_context: bool
    last_updated: str | UnsetType = UNSET
    summary: str | UnsetType = UNSET
    fresh_by: FreshBy = UNSET
    invalid: InvalidField = UNSET


class CheckOutcome(Struct):
    passed: bool
    fresh: int
    stale: int
    missing: int
    invalid: int  # 0 in the contracts' words, where invalid files count as missing


class ListContextsResult(Struct, omit_defaults=True):
    root: str
    total_directories: int
    skipped_directories: int
    tracked: int
    entries: list[Entry]
    # Only with under/state/limit/cursor: entries matching under and state, and where the next page starts.
    matched: int | UnsetType = UNSET
    next_cursor: str | UnsetType = UNSET
    check: CheckOutcome | UnsetType = UNSET  # only with check
    error: str | UnsetType = UNSET


def list_contexts(ws: Workspace, p: ListContextsParams) -> ListContextsResult:
    try:
        ws = ws.with_path(p.path)
    except RootNotAllowed as exc:
        return ListContextsResult(os.path.abspath(p.path or "."), 0, 0, 0, [], error=str(exc))
    listing = _full_listing(ws)
    full = listing.result
    if full.error:
        return full
    result = full
    if p.under is not None or p.state is not None or p.limit is not None or p.cursor is not None:
        try:
            result = _page(ws, listing, p)
        except PathEscape:
            return msgspec.structs.replace(full, entries=[], matched=0, error=TRAVERSAL)
    contract = contract_words(ws)
    if p.check:
        counts = {s: len(listing.by_state[s]) for s in STATES}
        if contract:
            counts["missing"] += counts.pop("invalid")
            counts["invalid"] = 0
        outcome = CheckOutcome(counts["stale"] == counts["missing"] == counts["invalid"] == 0, **counts)
        result = msgspec.structs.replace(result, check=outcome)
    if contract and listing.by_state["invalid"]:
        result = msgspec.structs.replace(result, entries=[
            msgspec.structs.replace(e, state="missing") if e.state == "invalid" else e for e in result.entries])
    return result


def _page(ws: Workspace, listing: _Listing, p: ListContextsParams) -> ListContextsResult:
    """The entries under a scope and in a state, from the cursor on, at most `limit` of them:
    found by bisection on the listing's sorted scopes, so a page costs its own entries, not
    the tree's."""
    full = listing.result
    under = ws.resolve(p.under)[0] if p.under is not None else "."
    # Entry positions in scope order: all, or those in the state asked for (missing in the
    # contracts' words includes invalid).
    among: range | list[int] = range(len(listing.scopes)) if p.state is None else listing.by_state[p.state]
    if p.state == "missing" and contract_words(ws):
        among = sorted(listing.by_state["missing"] + listing.by_state["invalid"])
    # At or under `under`: the scope itself, then (not always next to it: "src-x" sorts
    # between "src" and "src/a") the run of scopes starting "under/", which ends before
    # "under0" ("0" is the character after "/").
    if under == ".":
        spans = [(0, len(listing.scopes))]
    else:
        at = bisect.bisect_left(listing.scopes, under)
        spans = [(at, at + 1 if at < len(listing.scopes) and listing.scopes[at] == under else at),
                 (bisect.bisect_left(listing.scopes, under + "/"), bisect.bisect_left(listing.scopes, under + "0"))]
    # Scopes are sorted by their UTF-8 bytes, which is the order of their code points.
    start = 0 if p.cursor is None else bisect.bisect_right(listing.scopes, p.cursor)
    matched, picked, more = 0, [], False
    for lo, hi in spans:
        first, end = bisect.bisect_left(among, lo), bisect.bisect_left(among, hi)
        matched += end - first
        k = max(first, bisect.bisect_left(among, start))
        room = len(among) if p.limit is None else p.limit - len(picked)
        picked.extend(among[k:min(end, k + room)])
        more = more or end > k + room
    page = [full.entries[i] for i in picked]
    return msgspec.structs.replace(
        full, entries=page, matched=matched, next_cursor=page[-1].scope if more else UNSET
    )


def _full_listing(ws: Workspace) -> _Listing:
    cfg = ws.scan_config()
    try:
        table = index.scan(ws, cfg)
    except OSError:
        return _Listing.of(0, ListContextsResult(ws.root, 0, 0, 0, [], error=f'Failed to scan project at "{ws.root}"'))
    key = (ws.root, cfg)
    last = _listed.get(key) if table.generation else None
    if last is not None and last.generation == table.generation:
        return last
    eligible = [row for row in table.rows if row.eligible]
    # An entry follows from its row alone (the row carries the context file's stamp), so only
    # rows that changed since the last listing are looked at again: after a touch, one.
    changed = eligible if last is None else [
        row for row, at in zip(table.rows, table.changed_at) if row.eligible and at > last.generation]
    judged = scope_state.judge_rows(ws.root, changed, every=last is None)
    redone = {scope: _entry(scope, j) for scope, j in judged.items()}
    listing = None if last is None else last.patched(table.generation, table.skipped, len(eligible), redone)
    if listing is None:  # the first listing, or scopes came or went
        before = {} if last is None else {e.scope: e for e in last.result.entries}
        entries = [redone[row.scope] if row.scope in redone else before[row.scope] for row in eligible]
        tracked = sum(1 for e in entries if e.has_context)
        listing = _Listing.of(table.generation, ListContextsResult(ws.root, len(eligible), table.skipped, tracked, entries))
    if table.generation:
        _listed[key] = listing
    return listing


def _entry(scope: str, j: scope_state.Judged) -> Entry:
    if j.head is None:  # missing, or a file that cannot be used (invalid; the contract says missing)
        why = InvalidContext.of(j.problem) if j.problem else UNSET
        return Entry(scope, "missing" if why is UNSET else "invalid", False, invalid=why)
    return Entry(scope, j.state, True, j.head.last_updated, j.head.summary, fresh_by=j.fresh_by or UNSET)


@dataclass
class _Listing:
    """A serving process's last listing, with its scopes in order for paging: while no file
    moved, the same question gets the same answer object; after a change, only changed rows
    are redone."""

    generation: int
    result: ListContextsResult
    scopes: list[str]  # of the entries, in their (byte) order
    by_state: dict[str, list[int]]  # the positions of the entries in each state, ascending

    @classmethod
    def of(cls, generation: int, result: ListContextsResult) -> _Listing:
        by_state: dict[str, list[int]] = {s: [] for s in STATES}
        for i, e in enumerate(result.entries):
            by_state[e.state].append(i)
        return cls(generation, result, [e.scope for e in result.entries], by_state)

    def patched(self, generation: int, skipped: int, eligible: int, redone: dict[str, Entry]) -> _Listing | None:
        """This listing with the redone entries put in their places, when the scopes are
        the same ones (else None): copies of its lists, no entry looked at but the redone."""
        if eligible != len(self.scopes):
            return None
        entries, by_state, tracked = list(self.result.entries), dict(self.by_state), self.result.tracked
        for scope, entry in redone.items():
            i = bisect.bisect_left(self.scopes, scope)
            if i == len(self.scopes) or self.scopes[i] != scope:
                return None  # a scope new to the listing: one went for it to keep the count
            old = entries[i]
            if old.state != entry.state:
                for state in (old.state, entry.state):
                    if by_state[state] is self.by_state[state]:
                        by_state[state] = list(by_state[state])
                positions = by_state[old.state]
                del positions[bisect.bisect_left(positions, i)]
                bisect.insort(by_state[entry.state], i)
            tracked += entry.has_context - old.has_context
            entries[i] = entry
        result = msgspec.structs.replace(self.result, skipped_directories=skipped, tracked=tracked, entries=entries)
        return _Listing(generation, result, self.scopes, by_state)


_listed: dict[tuple, _Listing] = {}  # by (root, scan config)


def _render_status(r: ListContextsResult) -> str:
    if r.error:
        return r.error
    marks = {"fresh": "✓", "stale": "⚠", "missing": "✗", "invalid": "✗"}  # status: missing before invalid
    width = max((len(e.scope) for e in r.entries), default=1)
    lines = [f"  {marks[_state(e)]} {e.scope.ljust(width)}  "
             + (_invalid_text(e.scope, e.invalid) if e.invalid else e.state + (" (by git)" if e.fresh_by else ""))
             for e in r.entries]
    counts = {s: 0 for s in marks}
    for e in r.entries:
        counts[_state(e)] += 1
    below = plural(r.skipped_directories, "directory")
    scopes = plural(r.total_directories, "scope")
    verdict = "" if r.check is UNSET else f"check {'passed' if r.check.passed else 'failed'}"
    if r.matched is UNSET:  # the whole tree is shown: its counts
        said = [f"{counts[s]} {s}" for s in marks if s != "invalid" or counts[s]]
        lines.append(f"{scopes}: {', '.join(said)} ({below} below min_tokens)" + (f" — {verdict}" if verdict else ""))
    else:  # a filtered list: the counts of what it shows, then how much more matches
        said = ", ".join(f"{counts[s]} {s}" for s in marks if counts[s])
        line = f"{len(r.entries)} of {scopes} shown" + (f": {said}" if said else "")
        if r.next_cursor:
            line += f" ({r.matched} match; next page: --cursor {r.next_cursor})"
        elif r.matched != len(r.entries):
            line += f" ({r.matched} match)"
        lines.append(line)
        if verdict:  # the check is the whole tree's
            c = r.check
            lines.append(f"{verdict} for all {scopes}: {c.fresh} fresh, {c.stale} stale, {c.missing} missing, "
                         f"{c.invalid} invalid")
    return "\n".join(lines)


def _state(e: Entry) -> str:
    """The state a person is shown: the contract's, or invalid for a file that cannot be used."""
    return "invalid" if e.invalid else e.state


# --- check_freshness -------------------------------------------------------


class CheckFreshnessParams(Struct):
    scope: Scope
    path: RootOverride = None


class Fingerprints(Struct):
    stored: str
    computed: str


class CheckFreshnessResult(Struct, omit_defaults=True):
    scope: str
    state: State
    fingerprint: Fingerprints | UnsetType = UNSET
    last_updated: str | UnsetType = UNSET
    fresh_by: FreshBy = UNSET
    error: str | UnsetType = UNSET
    invalid: InvalidField = UNSET


def check_freshness(ws: Workspace, p: CheckFreshnessParams) -> CheckFreshnessResult:
    try:
        ws = ws.with_path(p.path)
        rel, directory, ctx = load_scope(ws, p.scope)
        computed = _core.fingerprint(directory)
    except RootNotAllowed as exc:
        return CheckFreshnessResult(_shown(ws, p.scope), "missing", error=str(exc))
    except ScopeProblem as exc:
        state = "missing" if exc.invalid is UNSET else _worded(ws, "invalid")
        return CheckFreshnessResult(_shown(ws, p.scope), state, error=str(exc), invalid=exc.invalid)
    except OSError:
        return CheckFreshnessResult(p.scope, "missing", error=f'Cannot read the directory at scope "{p.scope}"')
    j = scope_state.judge(ws.root, {rel: (Head.of(ctx), computed)})[rel]
    return CheckFreshnessResult(rel, j.state, Fingerprints(ctx.fingerprint, computed), ctx.last_updated,
                                fresh_by=j.fresh_by or UNSET)


def _shown(ws: Workspace, scope: str) -> str:
    """The scope as a response names it: normalised when it stays inside, else as given."""
    try:
        return ws.resolve(scope)[0]
    except PathEscape:
        return scope


def _render_check(r: CheckFreshnessResult) -> str:
    if r.invalid:
        return f"{r.scope}: {_invalid_text(r.scope, r.invalid)}"
    if r.error:
        return f"{r.scope}: {_for_people(r.error)}"
    fp = r.fingerprint
    by = ", by git" if r.fresh_by else ""
    return f"{r.scope}: {r.state}{by} (stored {fp.stored}, computed {fp.computed}; last updated {r.last_updated})"


# --- query_context ---------------------------------------------------------


class QueryContextParams(Struct):
    scope: Scope
    filter: Annotated[
        list[str] | None,
        Meta(description="Fields to include: " + ", ".join(cf.FILTERABLE_FIELDS)
             + ". Metadata fields (version, scope, fingerprint, last_updated) are always included."),
    ] = None
    path: RootOverride = None


class QueryContextResult(Struct, omit_defaults=True):
    found: bool
    scope: str
    context: dict | UnsetType = UNSET
    error: str | UnsetType = UNSET
    invalid: InvalidField = UNSET


def query_context(ws: Workspace, p: QueryContextParams) -> QueryContextResult:
    try:
        ws = ws.with_path(p.path)
        rel, _directory, ctx = load_scope(ws, p.scope)
    except RootNotAllowed as exc:
        return QueryContextResult(False, _shown(ws, p.scope), error=str(exc))
    except ScopeProblem as exc:
        return QueryContextResult(False, _shown(ws, p.scope), error=str(exc), invalid=exc.invalid)
    data = cf.to_builtins(ctx)
    if p.filter:
        wanted = [f for f in p.filter if f in cf.FILTERABLE_FIELDS]
        keep = [*cf.METADATA_FIELDS, *wanted]
        # Metadata first, then the requested fields in the order they were asked for.
        data = {k: data[k] for k in dict.fromkeys(keep) if k in data}
    return QueryContextResult(True, rel, context=data)


def _render_show(r: QueryContextResult) -> str:
    if r.invalid:
        return f"{r.scope}: {_invalid_text(r.scope, r.invalid)}"
    if not r.found:
        return f"{r.scope}: {_for_people(r.error)}"
    import yaml

    return yaml.safe_dump(r.context, sort_keys=False, allow_unicode=True, width=100).rstrip()


COMMANDS = [
    Command(
        name="status",
        tool="list_contexts",
        summary="List all tracked directories with their staleness status.",
        description="Every directory that should have a .context.yaml (dotcontext's min_tokens rule), "
        "each fresh, stale, missing or invalid, sorted by scope. Call first to discover scopes. On a large tree, "
        "narrow it with under and state, and page it with limit and cursor.",
        params=ListContextsParams,
        result=ListContextsResult,
        handler=list_contexts,
        is_error=lambda r: bool(r.error) or (r.check is not UNSET and not r.check.passed),
        encode=compact_json,
        cli=CliView(render=_render_status), mcp=McpView(structured=False),
    ),
    Command(
        name="check",
        tool="check_freshness",
        summary="Check whether a scope's .context.yaml is fresh, stale, missing or invalid.",
        description="Compares the stored fingerprint with one computed from the directory now. "
        "Stale is not an error: regenerate or verify before relying on the context.",
        params=CheckFreshnessParams,
        result=CheckFreshnessResult,
        handler=check_freshness,
        is_error=lambda r: bool(r.error),
        cli=CliView(positional=("scope",), render=_render_check),
    ),
    Command(
        name="show",
        tool="query_context",
        summary="Show a scope's .context.yaml, optionally only some fields.",
        description="Returns the context file's content; with filter, only the named fields "
        "plus the metadata fields.",
        params=QueryContextParams,
        result=QueryContextResult,
        handler=query_context,
        is_error=lambda r: not r.found,
        cli=CliView(positional=("scope",), render=_render_show),
    ),
]
