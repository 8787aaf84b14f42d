"""Caches: context-engine v0 document caches, built here and resolved over MCP.

`cache build` compiles a folder of markdown (or a repository's text files)
into a cache directory (`manifest.json`, `index.json`, `documents/`);
`resolve`, `cache list` and `cache inspect` (the MCP tools `context_resolve`,
`context_list_caches`, `context_inspect_cache`, also callable by the dotted
names `context.resolve`, …) read caches by name under the cache root. Output
and errors are byte for byte those of the reference engine (see docs/caches.md).

A resolve verifies the whole cache (manifest, index, every document's hash)
once, keeps the verified documents and their word index in memory, and reuses
them while nothing in the cache changes: its own paths keep their stat keys and
an inotify watch, begun before the first read, sees no event (where watching is
impossible, macOS and Windows included, every document file must keep its stat key). Any change, a tampered
document included, makes the next call verify again and fail as the spec says.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import shlex
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

from repoctx import _core
from repoctx.base import clock, fs, local_state
from repoctx.base.command import Check, CheckResult, CliView, Command, McpView, fixed_form
from repoctx.base.dirhandle import Dir
from repoctx.base.errors import RepoctxError
from repoctx.base.words import plural
from repoctx.base.workspace import Workspace, locked
from repoctx.formats import bounded
from repoctx.formats import cache as fmt

log = logging.getLogger("repoctx")

DEFAULT_CACHE_ROOT = os.path.join(".repoctx", "caches")
DOCUMENTS = "documents"
BUILD_PREFIX = ".repoctx-build-"
VERSION_RE = re.compile(r"sha256:[0-9a-f]{64}")
# Without a watch, a view is kept only once its files are older than the core's one racy
# window, so a change within one file-system timestamp tick of the read cannot hide behind an
# unchanged stat key.
SETTLE_NS = _core.RACY_NS
MAX_VIEWS = 4


class CacheError(RepoctxError):
    """A refusal in the context engine's words: its code, and the message when not the code's own."""

    def __init__(self, code: str, message: str | None = None) -> None:
        super().__init__(message or fmt.MESSAGES[code], code=code)


def cache_root(ws: Workspace) -> str:
    return ws.cache_root or os.path.join(ws.root, DEFAULT_CACHE_ROOT)


def has_data(ws: Workspace) -> bool:
    """Whether there is a cache root (registry/catalog.surfaces_with_data)."""
    return os.path.isdir(cache_root(ws))


def _base(ws: Workspace) -> tuple[str, str]:
    """(root, path of the cache root relative to it) for the confined layer: the repository
    when the cache root is inside it (the default `.repoctx/caches`), so a link out on the
    way is refused; else the cache root the person gave (`--cache-root`) is its own root."""
    root = cache_root(ws)
    if root == ws.root or root.startswith(ws.root + os.sep):
        return ws.root, os.path.relpath(root, ws.root)
    return root, "."


def _name(ws: Workspace, name: object) -> tuple[str, str, str]:
    """(root, path of the cache relative to it, normalised name) of a cache name, for the
    confined layer.

    A name is relative to the cache root; absolute names and `..` components are refused as
    `cache_missing`, and the layer refuses links that lead out of the root.
    """
    if not isinstance(name, str) or "\x00" in name:
        raise CacheError("cache_missing")
    try:
        name.encode()
    except UnicodeEncodeError:
        raise CacheError("cache_missing") from None
    posix = name.replace("\\", "/")
    parts = [p for p in posix.split("/") if p not in ("", ".")]
    if posix.startswith("/") or re.match(r"[A-Za-z]:", posix) or not parts or ".." in parts:
        raise CacheError("cache_missing")
    base, croot = _base(ws)
    rel = "/".join(parts)
    return base, os.path.normpath(os.path.join(croot, rel)), rel


def locate(ws: Workspace, name: object) -> tuple[str, str]:
    """(root, path relative to it) of an existing cache directory, for `opened`; or
    CacheError("cache_missing") (naming the link when the cache root itself leads out of the
    repository)."""
    base, rel, _ = _name(ws, name)
    try:
        fs.stat(base, _base(ws)[1])  # the cache root: a fixed place, so a link out there is named
    except fs.LinkRefused as exc:
        raise CacheError("cache_missing", exc.strerror) from None
    except OSError:
        raise CacheError("cache_missing") from None
    try:
        if not fs.is_dir(base, rel):
            raise CacheError("cache_missing")
    except OSError:  # a name that leads out is missing, as the engine answers
        raise CacheError("cache_missing") from None
    return base, rel


@contextmanager
def opened(base: str, rel: str) -> Iterator[Dir]:
    """A handle of the cache directory, opened once beneath `base` by the confined layer:
    every file of the cache is then read through it, by single names, so a swap of the cache
    or of a folder above it for a link out after the check is never followed (Windows, which
    has no directory descriptors: base/dirhandle.py)."""
    with _missing_or_io():
        directory = Dir(base, rel)
    try:
        yield directory
    finally:
        directory.close()


@contextmanager
def _missing_or_io() -> Iterator[None]:
    """The layer's refusal of a cache root or a cache as the contract says it: a link out (named)
    or nothing there is cache_missing, any other failure io_error."""
    try:
        yield
    except fs.LinkRefused as exc:
        raise CacheError("cache_missing", exc.strerror) from None
    except (FileNotFoundError, NotADirectoryError):
        raise CacheError("cache_missing") from None
    except OSError:
        raise CacheError("io_error") from None


# --- reading a cache ---------------------------------------------------------


def _read_regular(name: str, directory: Dir) -> bytes:
    """A regular file's bytes, never through a final symlink; CacheError otherwise."""
    try:
        fd = directory.read_open(name)
    except FileNotFoundError:
        raise CacheError("cache_invalid") from None
    except OSError as exc:
        raise CacheError("cache_invalid" if exc.errno in (errno.ELOOP, errno.ENOTDIR) else "io_error") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise CacheError("cache_invalid")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    except OSError:
        raise CacheError("io_error") from None
    finally:
        os.close(fd)


def _decode(raw: bytes, tp: Any) -> Any:
    try:
        return bounded.json(raw, type=tp)
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise CacheError("cache_invalid") from None


def verify_manifest(manifest: fmt.Manifest) -> list[str]:
    """The document file names a manifest lists, once it is consistent; CacheError otherwise."""
    entries = manifest.documents
    names = []
    for i, e in enumerate(entries):
        if not e.id or (i and entries[i - 1].id >= e.id) or not VERSION_RE.fullmatch(e.version):
            raise CacheError("cache_invalid")
        name = f"{e.version[7:19]}.json"
        if e.file != f"{DOCUMENTS}/{name}":
            raise CacheError("cache_invalid")
        names.append(name)
    if (
        manifest.build_config != fmt.V0_CONFIG
        or manifest.document_count != len(entries)
        or len(set(names)) != len(names)
        or manifest.cache_version != fmt.cache_version(manifest.build_config, entries)
    ):
        raise CacheError("cache_invalid")
    return names


def load_view(base: str, rel: str) -> _core.CacheView:
    """Read and verify a whole cache: manifest, index, no orphans, every document's id and hash;
    every file read through one handle of its directory (`opened`)."""
    with opened(base, rel) as directory:
        return _load_view(os.path.join(base, rel), directory)


def _load_view(directory: str, handle: Dir) -> _core.CacheView:
    names_in = ("manifest.json", "index.json", DOCUMENTS)
    paths = [directory, *(os.path.join(directory, n) for n in names_in)]
    watch = _core.CacheWatch([directory, paths[3]])  # first: a change while reading shows on the next call
    # Then the stats, for the same reason (the core keeps their keys: dev, inode, size, mtime,
    # ctime; not workspace.stat_key): a change after them shows on the watch. The core checks
    # them again by path later: a cache swapped for a link then differs, and is read again.
    watched: dict[str, os.stat_result] = {directory: handle.own_stat()}
    problem = None
    for path, name in zip(paths[1:], names_in):
        try:
            st = handle.lstat_or_none(name)
        except OSError:
            problem = problem or "io_error"
            continue
        if st is None:
            problem = problem or "cache_invalid"
        else:
            watched[path] = st
    # The manifest is read before any other check, as the engine does: an unreadable one is
    # io_error even when other files are missing too.
    raw_manifest = _read_regular("manifest.json", handle)
    if problem:
        raise CacheError(problem)
    if not stat.S_ISDIR(watched[paths[3]].st_mode):  # documents/ itself, never a symlink
        raise CacheError("cache_invalid")
    manifest = _decode(raw_manifest, fmt.Manifest)
    names = verify_manifest(manifest)
    index = _decode(_read_regular("index.json", handle), dict[str, str])
    if index != {e.id: e.file for e in manifest.documents}:
        raise CacheError("cache_invalid")
    try:
        docs = handle.sub(DOCUMENTS)
    except OSError:
        raise CacheError("cache_invalid") from None
    try:
        present = docs.listdir()
        if sorted(present) != sorted(names):
            raise CacheError("cache_invalid")  # a missing document or an orphan file
        return _core.load_cache(
            paths[3], docs.descriptor(), [(e.id, e.version, n) for e, n in zip(manifest.documents, names)], watched,
            watch,
        )
    except _core.CacheRefused as exc:
        raise CacheError(exc.code) from None
    except OSError:
        raise CacheError("io_error") from None
    finally:
        docs.close()


class _Views:
    """Verified views by cache directory, each reused while its files' stat keys hold."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.views: OrderedDict[str, _core.CacheView] = OrderedDict()

    def get(self, base: str, rel: str) -> _core.CacheView:
        directory = os.path.join(base, rel)
        with self.lock:
            view = self.views.get(directory)
        if view is not None and view.fresh():
            with self.lock:
                if directory in self.views:
                    self.views.move_to_end(directory)
            return view
        with self.lock:
            self.views.pop(directory, None)
        started = time.time_ns()
        view = load_view(base, rel)
        if view.watching or view.newest_change_ns < started - SETTLE_NS:
            with self.lock:
                self.views[directory] = view
                while len(self.views) > MAX_VIEWS:
                    self.views.popitem(last=False)
        return view


VIEWS = _Views()


# --- the commands ------------------------------------------------------------

CacheName = Annotated[
    str,
    Meta(description='Name of a cache directory under the cache root (`serve --cache-root`, '
         '$CONTEXT_CACHE_ROOT, else .repoctx/caches), e.g. "docs"'),
]


class ResolveParams(Struct):
    cache: CacheName
    query: Annotated[str, Meta(description="The query; lowercased and split on whitespace into terms. May be empty.")]
    budget: Annotated[
        int,
        Meta(ge=0, le=fmt.MAX_BUDGET, description="Maximum tokens of the selected documents, a whole number "
             "from 0 to 2^63-1 (a document costs ceil(bytes / 4))"),
    ]


class ListCachesParams(Struct):
    pass


class InspectParams(Struct):
    cache: CacheName
    total_bytes_of: Annotated[
        Literal["documents", "directory"],
        Meta(description="What total_bytes sums: the document files the manifest lists (as the reference "
             "CLI's fixtures) or the files directly in the cache directory, no symlinks (as the engine's "
             "MCP server, and so the tool context_inspect_cache)"),
    ] = "documents"


class InspectCacheParams(Struct):
    """The MCP tool's parameters: the contract's one."""

    cache: CacheName


class BuildParams(Struct):
    sources: Annotated[str, Meta(description="Directory to read the documents from")]
    cache: Annotated[str, Meta(description="Name of the cache to write under the cache root")]
    force: Annotated[bool, Meta(description="Replace an existing cache of that name")] = False
    repo: Annotated[
        bool,
        Meta(description="Read SOURCES as a repository: its text files, honouring .gitignore, without hidden "
             "and secret-looking files (default: every .md file, as the reference engine)"),
    ] = False
    verbose: Annotated[bool, Meta(description="List each file left out and why (else a count per reason)")] = False


def _guarded(handler: Callable[[Workspace, Any], Any]) -> Callable[[Workspace, Any], Any]:
    """Contract errors become the error object; anything unexpected is an internal_error."""

    def run(ws: Workspace, params: Any) -> Any:
        try:
            return handler(ws, params)
        except CacheError as exc:
            return fmt.error(exc.code, exc.message)
        except OSError as exc:  # the system's refusal (permissions, a read-only mount, a swap)
            log.warning("caches: %s", exc)
            return fmt.error("io_error", exc.strerror or None)
        except Exception:
            log.exception("caches: unexpected failure")
            return fmt.error("internal_error")

    return run


def resolve(ws: Workspace, p: ResolveParams) -> msgspec.Raw | fmt.ErrorResult:
    try:
        p.query.encode()
    except UnicodeEncodeError:
        raise CacheError("invalid_query") from None
    view = VIEWS.get(*locate(ws, p.cache))
    return msgspec.Raw(view.resolve(p.query, p.budget))


def list_caches(ws: Workspace, p: ListCachesParams) -> fmt.ListCachesResult | fmt.ErrorResult:
    base, croot = _base(ws)
    caches = []
    with _missing_or_io():
        for entry in fs.scandir(base, croot):
            if entry.kind != "d":
                continue
            manifest = fs.lstat(base, os.path.join(croot, entry.name, "manifest.json"))
            has_manifest = manifest is not None and stat.S_ISREG(manifest.st_mode)
            caches.append(fmt.CacheEntry(os.fsencode(entry.name).decode("utf-8", "replace"), has_manifest))
    caches.sort(key=lambda c: c.path.encode())
    return fmt.ListCachesResult(caches)


def inspect_cache(ws: Workspace, p: InspectParams) -> fmt.InspectResult | fmt.ErrorResult:
    with opened(*locate(ws, p.cache)) as directory:
        return _inspect(directory, p)


def _inspect(directory: Dir, p: InspectParams) -> fmt.InspectResult:
    try:
        raw = _read_regular("manifest.json", directory)
        data = bounded.json(raw)
    except CacheError as exc:
        if exc.code == "io_error":
            raise
        data = None  # missing, a symlink or not a file: not a readable manifest
    except msgspec.DecodeError:
        data = None
    if not isinstance(data, dict):
        return fmt.InspectResult("", 0, 0, False)
    version, count = data.get("cache_version"), data.get("document_count")
    version = version if isinstance(version, str) else None
    count = count if type(count) is int and count >= 0 else None
    if version is None or count is None:
        total = None
    elif p.total_bytes_of == "directory":
        total = _directory_bytes(directory)
    else:
        total = _document_bytes(directory, data.get("documents"))
    if total is None:
        return fmt.InspectResult(version or "", count or 0, 0, False)
    return fmt.InspectResult(version, count, total, True)


def _document_bytes(directory: Dir, entries: object) -> int | None:
    """Sum of the sizes of the document files the manifest lists (symlinks not followed);
    None when a file cannot be read or an entry names a file outside `documents/`."""
    try:
        st = directory.lstat_or_none(DOCUMENTS)
        if st is None or not stat.S_ISDIR(st.st_mode) or not isinstance(entries, list):
            return None
        docs = directory.sub(DOCUMENTS)
    except OSError:
        return None
    try:
        total = 0
        for e in entries:
            file = e.get("file") if isinstance(e, dict) else None
            name = file[len(DOCUMENTS) + 1:] if isinstance(file, str) and file.startswith(DOCUMENTS + "/") else ""
            if name in ("", ".", "..") or "/" in name or "\\" in name or "\x00" in name:
                return None
            found = docs.lstat_or_none(name)
            if found is None:
                return None
            if stat.S_ISREG(found.st_mode):
                total += found.st_size
        return total
    except OSError:
        return None
    finally:
        docs.close()


def _directory_bytes(directory: Dir) -> int | None:
    """Sum of the sizes of the regular files directly in the directory (symlinks and
    subdirectories left out); None when the directory cannot be listed."""
    try:
        entries = directory.scandir()
        return sum(e.stat(follow_symlinks=False).st_size for e in entries if e.is_file(follow_symlinks=False))
    except OSError:
        return None


# --- building ----------------------------------------------------------------


def build(ws: Workspace, p: BuildParams) -> fmt.BuildResult | fmt.ErrorResult:
    """Every write goes through the confined layer, beneath the repository (or the cache root
    given): `.repoctx` or the cache root linked out is refused by name, nothing made there."""
    sources = _sources(ws, p.sources)
    base, target, rel = _name(ws, p.cache)
    croot = _base(ws)[1]
    if croot == ".":
        os.makedirs(base, exist_ok=True)  # a cache root given outside the repository: the person's choice
    try:
        local_state.makedirs(base, croot)
        with locked(os.path.join(base, croot)):  # one build at a time per cache root
            parent = os.path.dirname(target) or "."
            fs.makedirs(base, parent)
            _check_target(base, target, sources, p.force)
            _remove_stale_builds(base, parent)
            tmp = os.path.join(parent, BUILD_PREFIX + os.urandom(6).hex())
            fs.makedirs(base, tmp)
            try:
                result = _build_into(base, tmp, sources, p, rel)
                _install(base, tmp, target)
            finally:
                _remove_tree(base, tmp)
            return result
    except OSError as exc:  # a link out (named), a cache name over 255 bytes, a full disk
        raise CacheError("io_error", exc.strerror or str(exc)) from None


def _sources(ws: Workspace, given: str) -> str:
    """The real path of the sources directory. One inside the repository is looked up through
    the confined layer: a link on the way that leads out is refused, naming it. One plainly
    outside (`--sources /abs/docs`) is the person's choice: `cache build` is a CLI command."""
    path = os.path.abspath(given)
    if path == ws.root or path.startswith(ws.root + os.sep):
        try:
            inside = fs.is_dir(ws.root, os.path.relpath(path, ws.root))
        except fs.LinkRefused as exc:
            raise CacheError("io_error", exc.strerror) from None
        except OSError:
            inside = False
        if not inside:
            raise _no_sources(given, path)
    real = os.path.realpath(path)
    if not os.path.isdir(real):
        raise _no_sources(given, path)
    return real


def _no_sources(given: str, path: str) -> CacheError:
    """`cache build` is a CLI command: its message names the path as typed and as resolved."""
    where = given if given == path else f"{given} ({path})"
    return CacheError("io_error", f"Sources directory {where} does not exist; pass --sources with the "
                      "directory of the documents to build from")


def _check_target(base: str, target: str, sources: str, force: bool) -> None:
    st = fs.lstat(base, target)
    if st is None:
        return
    if not force:
        raise CacheError("io_error", "Cache already exists (pass --force to replace it)")
    manifest = None if stat.S_ISLNK(st.st_mode) else fs.lstat(base, os.path.join(target, "manifest.json"))
    if manifest is None or not stat.S_ISREG(manifest.st_mode):
        raise CacheError("io_error", "Refusing to replace a directory that is not a cache")
    real = os.path.realpath(os.path.join(base, target))
    if sources == real or sources.startswith(real + os.sep):
        raise CacheError("io_error", "Refusing to replace a cache that holds the sources")


def _remove_tree(base: str, rel: str) -> None:
    try:
        fs.remove_tree(base, rel)
    except OSError:
        pass  # gone already, or left as litter for the next build to remove


def _remove_stale_builds(base: str, parent: str) -> None:
    """Temporary directories of builds that died (builds hold the root's lock, so none is running)."""
    for name in fs.listdir(base, parent):
        if name.startswith(BUILD_PREFIX):
            _remove_tree(base, os.path.join(parent, name))


def _build_into(base: str, tmp: str, sources: str, p: BuildParams, rel: str) -> fmt.BuildResult:
    try:
        built = _core.build_cache(sources, base, tmp, p.repo)
    except _core.CacheRefused as exc:
        raise CacheError(exc.code, exc.message) from None
    except fs.LinkRefused:
        raise
    except OSError:
        raise CacheError("io_error") from None
    entries = [fmt.ManifestEntry(e.id, e.version, e.file) for e in built.entries]
    reasons: dict[str, int] = {}
    for left in built.skipped:
        reasons[left.reason] = reasons.get(left.reason, 0) + 1
    manifest = fmt.Manifest(
        cache_version=fmt.cache_version(fmt.V0_CONFIG, entries),
        build_config=fmt.V0_CONFIG,
        created_at=clock.stamp_ns(time.time_ns()),
        document_count=len(entries),
        documents=entries,
    )
    fs.write_atomic(base, os.path.join(tmp, "index.json"), fmt.pretty({e.id: e.file for e in entries}))
    fs.write_atomic(base, os.path.join(tmp, "manifest.json"), fmt.pretty(manifest))
    listed = [fmt.SkippedFile(left.path, left.reason) for left in built.skipped] if p.verbose else msgspec.UNSET
    return fmt.BuildResult(rel, manifest.cache_version, len(entries), built.source_bytes, len(built.skipped),
                           dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))), listed)


def _install(base: str, tmp: str, target: str) -> None:
    """Put the finished cache at `target`: a rename, or an atomic swap with the old cache."""
    if fs.lstat(base, target) is not None:
        try:
            fs.exchange(base, tmp, target)
        except OSError:  # no atomic swap here: move the old cache aside first
            aside = tmp + ".old"
            fs.rename(base, target, aside)
            fs.rename(base, tmp, target)
            fs.rename(base, aside, tmp)
    else:
        fs.rename(base, tmp, target)


# --- views: text, exit codes, invalid arguments --------------------------------


def _is_error(result: object) -> bool:
    return isinstance(result, fmt.ErrorResult)


def _exit_code(result: object) -> int:
    return fmt.EXIT_CODES[result.error.code] if isinstance(result, fmt.ErrorResult) else 0


def _compact(result: object) -> str:
    """The reference's text: compact JSON and a newline."""
    return msgspec.json.encode(result).decode() + "\n"


def _pretty(result: object) -> str:
    return fmt.pretty(result).decode() + "\n"


def _inspect_text(result: object) -> str:
    """Pretty, as the reference's inspect output; errors stay compact like every error object."""
    return _compact(result) if isinstance(result, fmt.ErrorResult) else _pretty(result)


def _render_json(result: object) -> str:
    return _pretty(result).rstrip("\n")


def _render_build(r: fmt.BuildResult | fmt.ErrorResult) -> str:
    if isinstance(r, fmt.ErrorResult):
        return f"error: {r.error.message}"
    lines = [f"Built cache {r.cache}: {plural(r.document_count, 'document')} ({plural(r.source_bytes, 'byte')}), "
             f"version {r.cache_version}"]
    if r.skipped:
        why = ", ".join(f"{n} {reason}" for reason, n in r.skipped_by_reason.items())
        more = "" if r.skipped_files else " (--verbose lists them)"
        lines.append(f"{plural(r.skipped, 'file')} left out: {why}{more}")
        lines += [f"  {f.path}: {f.reason}" for f in r.skipped_files or ()]
    return "\n".join(lines)


def _advise(ws: Workspace, arguments: dict, result: object) -> str | None:
    """After an error, what to do next, naming the cache and the cache root: the error object
    keeps the contract's fixed words, so this goes to the person alone (stderr)."""
    if not isinstance(result, fmt.ErrorResult):
        return None
    code = result.error.code
    root = cache_root(ws)
    shown = os.path.relpath(root, ws.root) if root.startswith(ws.root + os.sep) else root
    name = arguments.get("cache")
    given = isinstance(name, str) and name
    named = f"Cache `{name}`" if given else "The cache"
    build = f"repoctx cache build --sources DIR --cache {shlex.quote(name) if given else 'NAME'}"
    if code == "cache_missing":
        if not os.path.isdir(root):
            return f"The cache root {shown} does not exist; build a cache there with `{build}`"
        return f"{named} does not exist under {shown}; build it with `{build}` (`repoctx cache list` lists the caches there)"
    if code == "cache_invalid":
        return (f"{named} under {shown} does not pass verification (a file was changed, removed or added since it "
                f"was built); build it again with `{build} --force`")
    if code == "io_error":
        return f"{named} under {shown} could not be read; check that its files are readable by you"
    if code == "invalid_budget":
        return (f"a budget is a whole number of tokens from 0 to {fmt.MAX_BUDGET} (2^63-1); a document costs "
                "ceil(bytes / 4) tokens, e.g. --budget 4000")
    if code == "invalid_query":
        return "the query must be text in UTF-8, e.g. --query 'deploy rollback'"
    return None


def _invalid_resolve(arguments: object) -> fmt.ErrorResult:
    a = arguments if isinstance(arguments, dict) else {}
    budget = a.get("budget")
    if type(budget) is not int or not 0 <= budget <= fmt.MAX_BUDGET:
        return fmt.error("invalid_budget")
    if not _is_text(a.get("query")):
        return fmt.error("invalid_query")
    return fmt.error("cache_missing")


def _is_text(value: object) -> bool:
    """A string that is valid Unicode text (no lone surrogates)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def _invalid_cache(arguments: object) -> fmt.ErrorResult:
    return fmt.error("cache_missing")


def _invalid_build(arguments: object) -> fmt.ErrorResult:
    return fmt.error("io_error", "Invalid arguments: --sources and --cache are required")


COMMON = dict(is_error=_is_error, lax=False)  # the engine's types are exact

COMMANDS = [
    Command(
        name="resolve",
        tool="context_resolve",
        aliases=("context.resolve",),
        summary="Resolve a query against a context cache within a token budget.",
        description="Scores every document of the cache by term frequency, orders them by score then id, "
        "and selects greedily within the budget (documents are never truncated). Deterministic: the same "
        "cache, query and budget give the same bytes.",
        params=ResolveParams,
        result=fmt.SelectionResult | fmt.ErrorResult,
        handler=_guarded(resolve),
        encode=_compact,
        on_invalid=_invalid_resolve,
        **COMMON,
        cli=CliView(render=_render_json, exit_code=_exit_code, advise=_advise), mcp=McpView(large_lists=True),
    ),
    Command(
        name="cache list",
        tool="context_list_caches",
        aliases=("context.list_caches",),
        summary="List the caches under the cache root.",
        description="Each immediate subdirectory of the cache root, sorted by name, and whether it has a "
        "manifest.json. Discovery only: nothing is parsed or validated.",
        params=ListCachesParams,
        result=fmt.ListCachesResult | fmt.ErrorResult,
        handler=_guarded(list_caches),
        encode=_compact,
        **COMMON,
        cli=CliView(render=_render_json, exit_code=_exit_code, advise=_advise),
    ),
    Command(
        name="cache inspect",
        tool=None,
        summary="Show a cache's version, document count, size and whether its manifest is valid.",
        description="Reads the cache's manifest (never document content); total_bytes sums the document "
        "files (with --total-bytes-of directory: the files directly in the cache directory, as the MCP tool). "
        "valid is false when the manifest is missing, unparseable or lacks its fields.",
        params=InspectParams,
        result=fmt.InspectResult | fmt.ErrorResult,
        handler=_guarded(inspect_cache),
        encode=_inspect_text,
        on_invalid=_invalid_cache,
        **COMMON,
        cli=CliView(render=_render_json, exit_code=_exit_code, advise=_advise),
    ),
    # The engine's MCP server counts other bytes than its CLI's fixtures: the tool is the
    # command with total_bytes_of fixed (docs/caches.md, "total_bytes").
    Command(
        name="cache inspect",
        tool="context_inspect_cache",
        aliases=("context.inspect_cache",),
        summary="Show a cache's version, document count, size and whether its manifest is valid "
        "(as `repoctx cache inspect --total-bytes-of directory`).",
        description="Reads the cache's manifest (never document content); total_bytes sums the files "
        "directly in the cache directory (not below it, no symlinks). valid is false when the manifest is "
        "missing, unparseable or lacks its fields.",
        params=InspectCacheParams,
        result=fmt.InspectResult | fmt.ErrorResult,
        handler=fixed_form(InspectParams, _guarded(inspect_cache), total_bytes_of="directory"),
        encode=_inspect_text,
        on_invalid=_invalid_cache,
        **COMMON,
        cli=None,
    ),
    Command(
        name="cache build",
        tool=None,
        summary="Build a context cache from a folder of markdown or a repository.",
        description="Writes manifest.json, index.json and documents/ under the cache root, atomically "
        "(a temporary directory, then a rename). Fails if the cache exists unless --force.",
        params=BuildParams,
        result=fmt.BuildResult | fmt.ErrorResult,
        handler=_guarded(build),
        writes=True,
        encode=_compact,
        on_invalid=_invalid_build,
        **COMMON,
        cli=CliView(render=_render_build, exit_code=_exit_code),
    ),
]


def _check_caches(ws: Workspace) -> CheckResult:
    """Every cache under the cache root passes `context_inspect_cache` (through its command)."""
    tools = {c.tool: c for c in COMMANDS}
    listing, inspect = tools["context_list_caches"], tools["context_inspect_cache"]
    if not os.path.isdir(cache_root(ws)):
        return CheckResult("skip", "No cache root configured")
    result = listing.handler(ws, listing.parse({}))
    data = msgspec.to_builtins(result)
    if listing.is_error(result) or not isinstance(data, dict):
        return CheckResult("fail", "The cache root cannot be listed", [msgspec.json.encode(data).decode()])
    names = [c.get("path") for c in data.get("caches", []) if c.get("has_manifest")]
    if not names:
        return CheckResult("skip", "No caches under the cache root")
    problems = []
    for cache in names:
        out = inspect.handler(ws, inspect.parse({"cache": cache}))
        info = msgspec.to_builtins(out)
        if inspect.is_error(out) or not (isinstance(info, dict) and info.get("valid")):
            problems.append(f"{cache}: {msgspec.json.encode(info).decode()}")
    if problems:
        return CheckResult("fail", f"{len(problems)} of {plural(len(names), 'cache')} "
                           f"{'is' if len(problems) == 1 else 'are'} invalid", problems)
    return CheckResult("pass", f"{plural(len(names), 'cache')} valid")


CHECKS = [Check("caches.integrity", "caches", "Every cache under the cache root is intact.", _check_caches)]
