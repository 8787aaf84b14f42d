"""Writing `.context.yaml` files: `init`, `regen`, `rehash`, `update_context`, and
`scopes validate` for what is on disk.

Generation reads the sources in the Rust core (`_core.ScopeSources`) in chunks,
children before parents so a parent lists its children's final summaries, and
writes every file as a temporary beside it; one `syncfs` flushes them all and
they are renamed into place, children first. repoctx writes nothing else into a
scope, so the fingerprint taken by the walk before writing is the one the
directory has afterwards: every scope written is fresh, the root included.

Writes hold the repository's one write lock (workspace.locked), so no two
writers interleave a read-merge-write of the same file.
"""

from __future__ import annotations

import os
import posixpath
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType
from msgspec.structs import replace

from repoctx import _core
from repoctx.base import clock, fs, index
from repoctx.base import manifests as mf
from repoctx.base.command import CliView, Command
from repoctx.base.words import plural
from repoctx.base.workspace import PathEscape, Workspace, locked
from repoctx.formats import context_file as cf
from repoctx.scopes import generate, gitstate
from repoctx.scopes import read as scopes
from repoctx.scopes import state as scope_state
from repoctx.scopes.generate import ScopeFacts
from repoctx.scopes.heads import Head, Invalid

CHUNK = 256  # scopes read per call into the core: the unit of progress and of memory held


class Progress:
    """A one-line bar on stderr, only when stderr is a terminal and not --quiet."""

    def __init__(self, label: str, total: int, quiet: bool) -> None:
        self.label, self.total = label, total
        self.on = not quiet and total > 0 and sys.stderr.isatty()

    def update(self, done: int) -> None:
        if self.on:
            filled = int(30 * done / self.total)
            sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] {done}/{self.total}")
            sys.stderr.flush()

    def close(self) -> None:
        if self.on:
            sys.stderr.write("\r" + " " * (len(self.label) + 50) + "\r")
            sys.stderr.flush()


# --- the tree as it is --------------------------------------------------------


@dataclass
class Tree:
    """A walk's table with the context files on it parsed."""

    root: str
    rows: dict[str, index.DirRow]
    order: list[str]  # every scope of the table, byte-ordered
    contexts: dict[str, cf.ContextFile]
    problems: dict[str, str]  # scope -> why its file cannot be used
    ignore: list[str]  # the config's extra ignore patterns, which apply to files too

    @property
    def eligible(self) -> list[str]:
        return [s for s in self.order if self.rows[s].eligible]

    def children(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for s in self.order:
            if s != "." and self.rows[s].included:
                out.setdefault(posixpath.dirname(s) or ".", []).append(s)
        return out


def load_tree(ws: Workspace) -> Tree:
    cfg = ws.scan_config()
    table = index.scan(ws, cfg)
    rows = {r.scope: r for r in table.rows}
    found = scope_state.read_files(ws.root, [r.scope for r in table.rows if r.has_context])
    contexts = {s: c for s, c in found.items() if not isinstance(c, Invalid)}
    problems = {s: _problem(c) for s, c in found.items() if isinstance(c, Invalid)}
    return Tree(ws.root, rows, list(rows), contexts, problems, list(cfg.ignore))


def _problem(bad: Invalid) -> str:
    if bad.version is not None:
        return f"unsupported schema version {bad.version}; left as it is"
    if bad.read == "too_large":
        reason = f"larger than {scope_state.MAX_CONTEXT_BYTES} bytes"
    else:
        reason = f"field {bad.field}: {bad.detail}" if bad.field else bad.detail.splitlines()[0]
        reason += f" at line {bad.line}, column {bad.column}" if bad.line else ""
    return f"invalid .context.yaml ({reason}); fix it or remove it"


class GitView:
    """git's answers for one write, each commit asked once; HEAD asked in the background
    while the tree is walked."""

    def __init__(self, root: str, scopes_hint: list[str] | None = None) -> None:
        self.root, self.hint = root, scopes_hint or ["."]
        self._changed: dict[str, set[str] | None] = {}
        self._head: str | None = None
        self._thread = threading.Thread(target=self._prefetch, daemon=True)
        self._thread.start()

    def _prefetch(self) -> None:
        self._head = gitstate.head(self.root)
        if self._head:
            self._changed[self._head] = gitstate.changed_dirs(self.root, self._head, self.hint)

    def head(self) -> str | None:
        self._thread.join()
        return self._head

    def unchanged_since(self, wanted: dict[str, str]) -> set[str]:
        """The scopes of `wanted` (scope -> commit) whose files are as at that commit."""
        return {scope for scope, commit in wanted.items() if self.unchanged(scope, commit)}

    def unchanged(self, scope: str, commit: str) -> bool:
        self._thread.join()
        if commit not in self._changed:
            self._changed[commit] = gitstate.changed_dirs(self.root, commit, self.hint)
        changed = self._changed[commit]
        return changed is not None and scope not in changed

    def evidence(self, old: cf.ContextFile | None, scope: str, now: str) -> cf.Evidence | UnsetType:
        """Evidence naming a commit whose version of the scope's files is the current one:
        the one recorded while it still holds, else HEAD when the files are as committed."""
        recorded = gitstate.recorded_commit(old.evidence) if old else None
        if recorded and self.unchanged(scope, recorded):
            return old.evidence
        head = self.head()
        if head and self.unchanged(scope, head):
            return cf.Evidence(collected_at=now, commit_sha=head)
        return UNSET

    def fresh(self, tree: Tree, among: list[str]) -> set[str]:
        """The scopes `among` these whose context file is fresh (scope_state's judgement, with
        git's answers from this view)."""
        found = {s: (Head.of(tree.contexts[s]), tree.rows[s].fingerprint) for s in among if s in tree.contexts}
        judged = scope_state.judge(self.root, found, self.unchanged_since)
        return {s for s, j in judged.items() if j.state == "fresh"}


# --- generation ----------------------------------------------------------------


class Skipped(Struct):
    scope: str
    reason: str


class WriteResult(Struct, omit_defaults=True):
    root: str
    written: list[str]
    unchanged: int
    skipped: list[Skipped]
    error: str | UnsetType = UNSET


def _depth(scope: str) -> int:
    return 0 if scope == "." else scope.count("/") + 1


class Generator:
    """Derives and writes the context files of some scopes of a tree."""

    def __init__(self, ws: Workspace, tree: Tree, git: GitView) -> None:
        self.ws, self.tree, self.git = ws, tree, git
        self.sources = _core.ScopeSources(ws.root, tree.order, tree.ignore, sorted(mf.NAMES))
        self.manifests = generate.Manifests(ws.root)
        self.children = tree.children()
        self.summaries = {s: c.summary for s, c in tree.contexts.items()}
        self.now = clock.stamp()

    def derive(self, scope: str, facts: ScopeFacts, old: cf.ContextFile | None) -> cf.ContextFile:
        self.manifests.learn(scope, facts.manifests)
        root = scope == "."
        mine = generate.owned(old)
        derived = {
            "files": facts.files or UNSET,
            "generic": facts.generic,
            "interfaces": facts.interfaces or UNSET,
            "dependencies.internal": facts.internal or UNSET,
            "dependencies.external": generate.external(scope, facts, self.manifests) or UNSET,
            "subdirectories": self._subdirectories(scope) or UNSET,
            "testing": generate.testing(scope, facts, self.manifests) or UNSET,
            "exports": facts.exports or UNSET,
            "project": generate.project(self.ws.root, facts, self.manifests, self.sources.languages) if root else UNSET,
            "structure": self._structure() or UNSET if root else UNSET,
            "evidence": self.git.evidence(old, scope, self.now) if "evidence" in mine else UNSET,
        }
        ctx = generate.merge(old, mine, scope, self.tree.rows[scope].fingerprint, self.now, derived)
        self.summaries[scope] = ctx.summary
        return ctx

    def _summary_of(self, scope: str) -> str:
        if scope in self.summaries:
            return generate.first_sentence(self.summaries[scope])
        row = self.tree.rows[scope]
        if row.eligible:
            return "No valid .context.yaml yet."
        return f"{plural(row.files, 'file')}; below the min_tokens threshold, no .context.yaml."

    def _subdirectories(self, scope: str) -> list[cf.Subdirectory]:
        return [cf.Subdirectory(name=posixpath.basename(c) + "/", summary=self._summary_of(c))
                for c in self.children.get(scope, [])]

    def _structure(self) -> list[cf.StructureEntry]:
        out = []
        for top in self.children.get(".", []):
            if not self.tree.rows[top].eligible:
                continue
            out.append(cf.StructureEntry(path=top, summary=self._summary_of(top)))
            if self.tree.rows[top].source_bytes == 0:  # a container (packages/, crates/ …): its children too
                out += [cf.StructureEntry(path=c, summary=self._summary_of(c))
                        for c in self.children.get(top, []) if self.tree.rows[c].eligible]
        return out[: generate.MAX_STRUCTURE]

    def run(self, targets: list[str], fresh: set[str], quiet: bool, label: str) -> WriteResult:
        """Write the targets whose derived content changed or whose file is not `fresh`."""
        # Children first; the core reads the next chunk and writes the last one while
        # this thread derives the current one.
        order = sorted(targets, key=lambda s: (-_depth(s), s.encode()))
        chunks = [order[i : i + CHUNK] for i in range(0, len(order), CHUNK)]
        progress = Progress(label, len(order), quiet)
        written, unchanged, stages = [], 0, []
        with ThreadPoolExecutor(2) as pool:
            try:
                reading = pool.submit(self.sources.extract, chunks[0]) if chunks else None
                for n, part in enumerate(chunks):
                    facts = generate.decode_facts(reading.result())
                    reading = pool.submit(self.sources.extract, chunks[n + 1]) if n + 1 < len(chunks) else None
                    items = []
                    for scope, f in zip(part, facts):
                        old = self.tree.contexts.get(scope)
                        ctx = self.derive(scope, f, old)
                        if generate.same_content(ctx, old) and scope in fresh:
                            unchanged += 1
                            continue
                        items.append((os.path.join(self.ws.root, scope, cf.CONTEXT_FILE), msgspec.json.encode(ctx)))
                        written.append(scope)
                    stages.append((pool.submit(_core.stage_yaml, self.ws.root, items), [path for path, _ in items]))
                    progress.update(n * CHUNK + len(part))
                staged = _settle(stages)
                _core.commit_staged(self.ws.root, staged)
            except BaseException:
                for future, _paths in stages:
                    if future.done() and future.exception() is None:
                        for tmp in future.result():
                            _unlink(tmp)
                raise
            finally:
                progress.close()
        return WriteResult(self.ws.root, sorted(written, key=str.encode), unchanged, [])


def _settle(stages) -> list[tuple[str, str]]:
    """(temporary, final) pairs of every staged chunk, in order; raises the first failure."""
    staged = []
    for future, paths in stages:
        staged += zip(future.result(), paths)
    return staged


def _unlink(path: str) -> None:
    try:
        fs.remove(*fs.split(path))
    except OSError:
        pass


def _under(scope: str, prefixes: list[str]) -> bool:
    return any(p == "." or scope == p or scope.startswith(p + "/") for p in prefixes)


def _resolve_all(ws: Workspace, given: list[str]) -> list[str]:
    out = []
    for s in given:
        try:
            out.append(ws.resolve(s)[0])
        except PathEscape:
            raise ValueError(scopes.TRAVERSAL) from None
    return out


class InitParams(Struct):
    quiet: Annotated[bool, Meta(description="no progress bar")] = False


class RegenParams(Struct):
    scopes: Annotated[list[str], Meta(description="scopes to regenerate, each with the scopes under it (default: all)")] = []
    stale: Annotated[bool, Meta(description="only scopes that are stale or missing")] = False
    quiet: Annotated[bool, Meta(description="no progress bar")] = False


def init(ws: Workspace, p: InitParams) -> WriteResult:
    """A context file for every eligible scope that has none; existing files untouched."""
    return _generate(ws, [], missing_only=True, stale_only=False, quiet=p.quiet, label="init")


def regen(ws: Workspace, p: RegenParams) -> WriteResult:
    return _generate(ws, p.scopes, missing_only=False, stale_only=p.stale, quiet=p.quiet, label="regen")


def _generate(ws: Workspace, given: list[str], *, missing_only: bool, stale_only: bool, quiet: bool, label: str) -> WriteResult:
    try:
        prefixes = _resolve_all(ws, given) or ["."]
    except ValueError as exc:
        return WriteResult(ws.root, [], 0, [], error=str(exc))
    git = GitView(ws.root)
    with locked(ws.root):
        try:
            tree = load_tree(ws)
        except OSError:
            return WriteResult(ws.root, [], 0, [], error=f'Failed to scan project at "{ws.root}"')
        candidates = [s for s in tree.eligible if _under(s, prefixes)]
        skipped = [Skipped(s, tree.problems[s]) for s in candidates if s in tree.problems]
        for p in prefixes:
            if not any(_under(s, [p]) for s in tree.eligible):
                skipped.append(Skipped(p, "not an eligible scope (below min_tokens, ignored, or not a directory)"))
        targets = [s for s in candidates if s not in tree.problems]
        if missing_only:
            targets = [s for s in targets if s not in tree.contexts]
        fresh = git.fresh(tree, targets)
        if stale_only:
            targets = [s for s in targets if s not in fresh]
        result = Generator(ws, tree, git).run(targets, fresh, quiet, label)
    return replace(result, skipped=skipped)


def _render_write(verb: str):
    def render(r: WriteResult) -> str:
        if r.error:
            return r.error
        lines = [f"  ✗ {s.scope}: {s.reason}" for s in r.skipped]
        lines.append(f"{verb} {plural(len(r.written), 'context file')} ({r.unchanged} unchanged, {len(r.skipped)} skipped).")
        return "\n".join(lines)

    return render


# --- rehash ------------------------------------------------------------------


class RehashParams(Struct):
    scopes: Annotated[list[str], Meta(description="scopes to rehash, each with the scopes under it (default: all)")] = []
    quiet: Annotated[bool, Meta(description="no progress bar")] = False


_SIMPLE = r'(?:"[^"\\\n]*"|\'[^\'\n]*\'|[^\s#"\'][^\n#]*?)'


def _patch(text: str, fingerprint: str, last_updated: str) -> str | None:
    """The file with only its `fingerprint` and `last_updated` lines replaced, keeping
    comments and layout; None when they are not simple one-line scalars."""
    out = text
    for key, value in (("fingerprint", fingerprint), ("last_updated", last_updated)):
        pattern = re.compile(rf"^{key}:[ \t]*{_SIMPLE}[ \t]*(#[^\n]*)?$(?!\n[ \t]+[^\s#])", re.M)
        if len(pattern.findall(out)) != 1:
            return None
        out = pattern.sub(lambda m: f'{key}: "{value}"' + (f" {m.group(1)}" if m.group(1) else ""), out)  # noqa: B023 - called at once
    return out


def rehash(ws: Workspace, p: RehashParams) -> WriteResult:
    """Record current fingerprints and bump last_updated, leaving content as it is."""
    try:
        prefixes = _resolve_all(ws, p.scopes) or ["."]
    except ValueError as exc:
        return WriteResult(ws.root, [], 0, [], error=str(exc))
    git = GitView(ws.root)
    with locked(ws.root):
        try:
            tree = load_tree(ws)
        except OSError:
            return WriteResult(ws.root, [], 0, [], error=f'Failed to scan project at "{ws.root}"')
        now = clock.stamp()
        skipped = [Skipped(s, r) for s, r in tree.problems.items() if _under(s, prefixes)]
        targets = [s for s in tree.order if s in tree.contexts and _under(s, prefixes)]
        progress = Progress("rehash", len(targets), p.quiet)
        raw, converted = [], []
        for n, scope in enumerate(targets):
            old = tree.contexts[scope]
            ctx = replace(old, fingerprint=tree.rows[scope].fingerprint, last_updated=now)
            if "evidence" in generate.owned(old):
                evidence = git.evidence(old, scope, now)
                listed = [e for e in (old.derived_fields or []) if e != "evidence"]
                if evidence is not UNSET:
                    listed = [d for d in generate.DERIVED if d in listed or d == "evidence"] + \
                             [e for e in listed if e not in generate.DERIVED]
                ctx = replace(ctx, evidence=evidence, derived_fields=listed or UNSET)
            path = os.path.join(ws.root, scope, cf.CONTEXT_FILE)
            patched = None
            if ctx.evidence == old.evidence and ctx.derived_fields == old.derived_fields:
                try:
                    text = fs.read_bytes(*fs.split(path), scope_state.MAX_CONTEXT_BYTES).decode()
                    # Patched as LF; staging gives a CRLF file its CRLF back.
                    patched = _patch(text.replace("\r\n", "\n"), ctx.fingerprint, now)
                except (OSError, UnicodeDecodeError):
                    patched = None
            if patched is not None:
                raw.append((path, patched.encode()))
            else:
                converted.append((path, msgspec.json.encode(ctx)))
            if n % CHUNK == 0:
                progress.update(n)
        staged = []
        try:
            staged += zip(_core.stage_yaml(ws.root, converted), (p_ for p_, _ in converted))
            staged += zip(_core.stage_yaml(ws.root, raw, raw=True), (p_ for p_, _ in raw))
            _core.commit_staged(ws.root, staged)
        except BaseException:
            for tmp, _ in staged:
                _unlink(tmp)
            raise
        finally:
            progress.close()
    return WriteResult(ws.root, targets, 0, skipped)


# --- update_context -----------------------------------------------------------

MANAGED = ("version", "scope", "fingerprint", "last_updated", "derived_fields")
UPDATABLE = tuple(f for f in msgspec.structs.fields(cf.ContextFile) if f.name not in MANAGED)
UPDATABLE_NAMES = tuple(f.name for f in UPDATABLE)


class UpdateContextParams(Struct):
    scope: scopes.Scope
    fields: Annotated[
        dict[str, Any],
        Meta(description="Fields to set, by name, each a whole value as the .context.yaml schema (v1) types it; "
             "null removes an optional field. Settable: " + ", ".join(UPDATABLE_NAMES) + ". "
             "Fields you set are no longer machine-derived: regeneration keeps them."),
    ]


class UpdateContextResult(Struct, omit_defaults=True):
    scope: str
    updated: bool
    fields: list[str] = []
    created: bool = False
    fingerprint: str | UnsetType = UNSET
    error: str | UnsetType = UNSET


def update_context(ws: Workspace, p: UpdateContextParams) -> UpdateContextResult:  # noqa: C901 - one refusal per contract rule, in its order
    def fail(message: str, scope: str = p.scope) -> UpdateContextResult:
        return UpdateContextResult(scope, False, error=message)

    if ws.read_only:
        return fail("update_context is not available: the server is read-only")
    try:
        rel, directory = ws.resolve(p.scope)
    except PathEscape:
        return fail(scopes.TRAVERSAL)
    if not os.path.isdir(directory):
        return fail(f'No directory at scope "{rel}"', rel)
    for name in p.fields:
        if name in MANAGED:
            return fail(f'Field "{name}" is managed by repoctx and cannot be set', rel)
        if name not in UPDATABLE_NAMES:
            return fail(f'Unknown field "{name}"; settable fields: {", ".join(UPDATABLE_NAMES)}', rel)
    if not p.fields:
        return fail("No fields given", rel)
    path = os.path.join(directory, cf.CONTEXT_FILE)
    if os.path.lexists(path) and not ws.contains_real(path):
        return fail(scopes.TRAVERSAL, rel)
    git = GitView(ws.root, [rel])
    with locked(ws.root):
        created = not os.path.isfile(path)
        if created:
            base = _generated(ws, rel, git)
            if isinstance(base, str):
                return fail(base, rel)
            data = msgspec.to_builtins(base)
        else:
            [read] = scope_state.read_contexts([path])
            shown = cf.CONTEXT_FILE if rel == "." else f"{rel}/{cf.CONTEXT_FILE}"
            if read.kind != "json":
                bad = scope_state.decode(read.kind, read.text)
                return fail(f"{bad.at(shown)}; fix or remove it first", rel)
            data = msgspec.json.decode(read.text)
            if not isinstance(data, dict):
                return fail(f'The .context.yaml at scope "{rel}" is not a mapping; fix or remove it first', rel)
            version = data.get("version")
            if isinstance(version, (int, float)) and not isinstance(version, bool) and version > cf.SCHEMA_VERSION:
                return fail(f"{shown}: {cf.UnsupportedVersion(version).advice()}", rel)
        for name, value in p.fields.items():
            if value is None:
                data.pop(name, None)
            else:
                data[name] = value
        listed = [e for e in data.get("derived_fields") or [] if isinstance(e, str) and generate._top(e) not in p.fields]
        data["derived_fields"] = listed
        now = clock.stamp()
        data.update(version=1, scope=rel, last_updated=now, fingerprint=_core.fingerprint(directory))
        try:
            ctx = cf.from_data(data)
        except cf.SchemaError as exc:
            return fail(f"Invalid value for {exc.field or 'the context'}: {exc}" if exc.field else f"Invalid context: {exc}", rel)
        if "evidence" not in p.fields and "evidence" in generate.owned(ctx):
            old_ctx = ctx if not created else None
            evidence = git.evidence(old_ctx, rel, now)
            listed = [e for e in ctx.derived_fields or [] if e != "evidence"]
            if evidence is not UNSET:
                listed.append("evidence")
            ctx = replace(ctx, evidence=evidence)
            data["derived_fields"] = listed
        ctx = replace(ctx, derived_fields=[e for e in generate.DERIVED if e in (data["derived_fields"] or [])]
                      + [e for e in data["derived_fields"] if e not in generate.DERIVED] or UNSET)
        try:
            text = _core.to_yaml(msgspec.json.encode(ctx)).encode()
        except (ValueError, UnicodeEncodeError) as exc:
            return fail(f"The fields cannot be written as UTF-8 YAML: {exc}", rel)
        if len(text) > scope_state.MAX_CONTEXT_BYTES:
            return fail(f"The result would be larger than {scope_state.MAX_CONTEXT_BYTES} bytes; not written", rel)
        staged = _core.stage_yaml(ws.root, [(path, text)], raw=True)  # as every context file: its line endings kept
        try:
            _core.commit_staged(ws.root, [(staged[0], path)])
        except BaseException:
            _unlink(staged[0])
            raise
    return UpdateContextResult(rel, True, list(p.fields), created, ctx.fingerprint)


def _generated(ws: Workspace, scope: str, git: GitView) -> cf.ContextFile | str:
    """A freshly derived context for one directory, the base of an update that creates it."""
    try:
        tree = load_tree(ws)
    except OSError:
        return f'Failed to scan project at "{ws.root}"'
    if scope not in tree.rows:
        return f'Scope "{scope}" is not scanned (ignored, hidden or deeper than max_depth)'
    gen = Generator(ws, tree, git)
    [facts] = generate.decode_facts(gen.sources.extract([scope]))
    return gen.derive(scope, facts, None)


def _render_update(r: UpdateContextResult) -> str:
    if r.error:
        return f"{r.scope}: {r.error}"
    verb = "created" if r.created else "updated"
    return f"{r.scope}: {verb} ({', '.join(r.fields)}); fingerprint {r.fingerprint}"


# --- scopes validate ------------------------------------------------------------


class ValidateParams(Struct):
    strict: Annotated[bool, Meta(description="also cross-check against the code: listed files that do not "
                                 "exist, files not listed, exports that no longer exist")] = False


class Finding(Struct):
    kind: Literal["phantom_file", "unlisted_file", "phantom_export"]
    name: str


class ScopeReport(Struct, omit_defaults=True):
    scope: str
    valid: bool
    field: str | UnsetType = UNSET
    error: str | UnsetType = UNSET
    findings: list[Finding] = []


class ValidateResult(Struct, omit_defaults=True):
    root: str
    strict: bool
    valid: int
    invalid: int
    missing: int
    findings: int
    problems: list[ScopeReport]  # only scopes with something to report
    error: str | UnsetType = UNSET


_KEYWORDS = re.compile(
    r"^(?:(?:pub|export|default|async|abstract|declare|static|const|unsafe|def|fn|func|function|class|struct|enum|"
    r"trait|union|type|mod|interface|namespace|var|let)\s+)*"
)
_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)?")


def declared_name(entry: str) -> str | None:
    """The code identifier an `exports` or `interfaces` entry names; None for endpoints,
    commands and other prose (`POST /login`)."""
    text = _KEYWORDS.sub("", entry.strip())
    m = _NAME.match(text)
    if not m:
        return None
    rest = text[m.end():]
    if rest and not (rest[0] in "(<:=[{;," or (rest[0] == " " and rest[1:2].isalpha())):
        return None
    return m.group(0)


def validate_contexts(ws: Workspace, strict: bool) -> ValidateResult:
    """Every `.context.yaml` of the tree against schema v1; with `strict`, against the code too.
    The function `repoctx scopes validate` runs, for other checks to call."""
    cfg = ws.scan_config()
    try:
        table = index.scan(ws, cfg)
    except OSError:
        return ValidateResult(ws.root, strict, 0, 0, 0, 0, [], error=f'Failed to scan project at "{ws.root}"')
    missing = sum(1 for r in table.rows if r.eligible and not r.has_context)
    reports: dict[str, ScopeReport] = {}
    valid: dict[str, cf.ContextFile] = {}
    for scope, read in scope_state.read_files(ws.root, [r.scope for r in table.rows if r.has_context]).items():
        if not isinstance(read, Invalid):
            valid[scope] = read
        elif read.version is not None:
            reports[scope] = ScopeReport(scope, False, "version", f"unsupported schema version {read.version} (must be 1)")
        else:
            reports[scope] = ScopeReport(scope, False, read.field or UNSET, _first_line(read))
    findings = 0
    if strict and valid:
        found = _strict_findings(ws, _core.ScopeSources(ws.root, [r.scope for r in table.rows], list(cfg.ignore)), valid)
        for scope, items in found.items():
            reports[scope] = ScopeReport(scope, True, findings=items)
            findings += len(items)
    problems = sorted(reports.values(), key=lambda r: r.scope.encode())
    invalid = sum(1 for r in problems if not r.valid)
    return ValidateResult(ws.root, strict, len(valid), invalid, missing, findings, problems)


def _first_line(bad: Invalid) -> str:
    text = bad.detail.strip().splitlines()[0] if bad.detail.strip() else bad.read
    text += f" at line {bad.line}, column {bad.column}" if bad.line else ""
    return "not valid YAML: " + text if bad.read == "invalid" else text


def _strict_findings(ws: Workspace, sources: _core.ScopeSources, valid: dict[str, cf.ContextFile]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    listing = [s for s, ctx in valid.items() if ctx.files is not UNSET]
    described = dict(zip(listing, sources.source_files(listing)))
    checks: list[tuple[str, list[str]]] = []
    for scope, ctx in valid.items():
        items = out.setdefault(scope, [])
        if scope in described:
            try:
                on_disk = {e.name for e in os.scandir(os.path.join(ws.root, scope)) if e.is_file(follow_symlinks=False)}
            except OSError:
                on_disk = set()
            listed = {f.name for f in ctx.files}
            items += [Finding("phantom_file", n) for n in sorted(listed - on_disk)]
            items += [Finding("unlisted_file", n) for n in sorted(set(described[scope]) - listed)]
        names = [n for e in [*(ctx.exports or []), *(i.name for i in ctx.interfaces or [])] if (n := declared_name(e))]
        if names:
            checks.append((scope, list(dict.fromkeys(names))))
    for (scope, _names), gone in zip(checks, sources.missing_exports(checks) if checks else []):
        out[scope] += [Finding("phantom_export", n) for n in gone]
    return {s: items for s, items in out.items() if items}


def _render_validate(r: ValidateResult) -> str:
    if r.error:
        return r.error
    lines = []
    for rep in r.problems:
        if not rep.valid:
            where = f"{rep.field}: " if rep.field else ""
            lines.append(f"  ✗ {rep.scope}\n       {where}{rep.error}")
        for f in rep.findings:
            lines.append(f"  ⚠ {rep.scope}: {f.kind.replace('_', ' ')}: {f.name}")
    lines.append(f"{r.valid} valid, {r.invalid} invalid, {r.missing} missing."
                 + (f" strict: {plural(r.findings, 'finding')}." if r.strict else ""))
    return "\n".join(lines)


COMMANDS = [
    Command(
        name="init",
        tool=None,
        summary="Write a .context.yaml for every eligible directory that has none.",
        description="Derived from the code (files and their purposes, exports, dependencies, subdirectories, "
        "tests; project and structure at the root); existing files are left as they are.",
        params=InitParams,
        result=WriteResult,
        handler=init,
        is_error=lambda r: bool(r.error or r.skipped),
        writes=True,
        cli=CliView(render=_render_write("Wrote")),
    ),
    Command(
        name="regen",
        tool=None,
        summary="Refresh the derived fields of context files (all, the given scopes, or --stale ones).",
        description="Fields named in derived_fields are re-derived from the code; everything a person or an "
        "agent wrote is kept. Missing files are created; unchanged ones are not rewritten.",
        params=RegenParams,
        result=WriteResult,
        handler=regen,
        is_error=lambda r: bool(r.error or r.skipped),
        writes=True,
        cli=CliView(positional=("scopes",), render=_render_write("Wrote")),
    ),
    Command(
        name="rehash",
        tool=None,
        summary="Record current fingerprints (and bump last_updated) without touching content.",
        description="For context files that are right but read stale after a checkout, touch or rebuild.",
        params=RehashParams,
        result=WriteResult,
        handler=rehash,
        is_error=lambda r: bool(r.error or r.skipped),
        writes=True,
        cli=CliView(positional=("scopes",), render=_render_write("Rehashed")),
    ),
    Command(
        name="update",
        tool="update_context",
        summary="Set fields of a scope's .context.yaml, recording its current fingerprint.",
        description="Validates the fields against the v1 schema, merges them into the file (creating it from "
        "what the code says when missing), records the fingerprint and last_updated, and writes atomically. "
        "Call after changing a directory so the context stays fresh. Invalid input leaves the file untouched.",
        params=UpdateContextParams,
        result=UpdateContextResult,
        handler=update_context,
        is_error=lambda r: not r.updated,
        writes=True,
        cli=CliView(positional=("scope",), render=_render_update),
    ),
    Command(
        name="scopes validate",
        tool=None,
        summary="Check every .context.yaml against schema v1 (--strict: against the code too).",
        description="Exit 0 only when every file is valid and, with --strict, consistent with the code: no "
        "listed file missing, no source file unlisted, no listed export gone.",
        params=ValidateParams,
        result=ValidateResult,
        handler=lambda ws, p: validate_contexts(ws, p.strict),
        is_error=lambda r: bool(r.error or r.invalid or r.findings),
        cli=CliView(render=_render_validate),
    ),
]

