"""Types of the Rust core (rust/lib.rs binds, rust/py.rs shapes the results). Heavy calls
release the GIL. Results of more than one value are named, frozen classes, read by field.

Checked against the built module by `python -m mypy.stubtest repoctx._core` (scripts/test).
"""

import os
from typing import ClassVar, final

__all__ = [
    "Annotation", "BuildInfo", "BuiltCache", "CacheEntry", "CacheRefused", "CacheView", "CacheWatch", "CoreRefused",
    "DirEntry", "DirRow",
    "FILE_LABELS", "FileCount", "FileKind", "GitRepo", "GitStats", "Globs", "GoFile", "GoRequire", "KeyFile", "Language", "LeftOut", "LinkRefused", "LiveIndex",
    "MAX_SAVED_BYTES", "ModuleScan", "PanicException", "RACY_NS", "RequestId", "SKIP_DIRS", "ScopeSources", "SourceIndex", "Stat", "TASK_NOTHING_MATCHED", "TASK_SIGNALS", "Table", "TaskAnswer",
    "TaskDefinition", "TaskFile", "TaskHistory", "TaskIndex", "TaskIndexLoad", "TaskMember", "TaskPiece", "TaskRegion", "WalkFiles",
    "YamlFile", "YamlRefused", "annotate_file",
    "build_cache", "build_info", "commit_staged", "count_tokens", "file_kind", "file_kinds", "fingerprint", "fs_exchange", "fs_list",
    "fs_makedirs", "fs_open_dir", "fs_read", "fs_read_head", "fs_remove", "fs_remove_tree", "fs_rename",
    "fs_stat", "fs_write", "is_source_file", "jsonrpc_request_id", "load_cache", "outline", "parse_go", "read_yaml_many",
    "real_path", "saved_bytes_cap", "scan_modules", "stage_yaml", "to_yaml", "walk", "yaml_to_json",
]

# --- the tree (rust/tree/) ------------------------------------------------------------------

SKIP_DIRS: list[str]
# The one racy window (tree/os.rs): what changed this recently is not trusted on its stat alone.
RACY_NS: int
"""Directory names no walk enters (.git, node_modules, …)."""

@final
class DirRow:
    """One directory of the walk table. Compares equal to a row with the same fields."""

    @property
    def scope(self) -> str:
        """"." for the root, else the path relative to it ("src/auth")."""
    @property
    def fingerprint(self) -> str:
        """dotcontext's 8-hex stat fingerprint of the directory."""
    @property
    def source_bytes(self) -> int: ...
    @property
    def files(self) -> int: ...
    @property
    def has_context(self) -> bool: ...
    @property
    def included(self) -> bool:
        """dotcontext's scan keeps the directory: it has source files or a kept child."""
    @property
    def eligible(self) -> bool:
        """Included and over the `min_tokens` threshold (or an ancestor of one, or the root)."""
    @property
    def context_mtime_ns(self) -> int:
        """mtime (ns) of `.context.yaml` (0 without one): a parsed copy holds while it and the size do."""
    @property
    def context_size(self) -> int: ...
    def __eq__(self, value: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

@final
class LeftOut:
    """What a scan or a build left out, and why: a directory of the walk (its subtree with it;
    a name that is not UTF-8 written with \\xNN), or a file a repository cache build skipped.
    Compares equal to one with the same fields; str() is "path: reason"."""

    @property
    def path(self) -> str: ...
    @property
    def reason(self) -> str: ...
    def __eq__(self, value: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

@final
class Table:
    """The directory table of a tree: a cold walk's, or a live index's as of its last refresh."""

    @property
    def rows(self) -> list[DirRow]:
        """The scopes' rows, sorted by the scope's bytes."""
    @property
    def skipped(self) -> int:
        """Included directories under the `min_tokens` threshold."""
    @property
    def left_out(self) -> list[LeftOut]:
        """Directories left out with their subtrees: unreadable ones, and those whose names are
        not UTF-8 (they cannot be scopes)."""
    @property
    def generation(self) -> int:
        """A live index's generation (bumped by every change); 0 for a walk."""
    @property
    def changed_at(self) -> list[int] | None:
        """A live index's generation at which each row (beside `rows`) last changed; None for a walk."""
    @property
    def unscoped(self) -> list[DirRow]:
        """The rows of the directories that are no scope (hidden, `build`, or beneath one), whose
        files only task context reads; sorted by their bytes."""
    @property
    def files(self) -> WalkFiles | None:
        """Each directory's files as the walk listed them, when it was asked to keep them."""
    @property
    def unscoped_changed_at(self) -> list[int] | None:
        """As `changed_at`, beside `unscoped`."""

def walk(
    root: str, extra_ignore: list[str], max_depth: int, min_tokens: int, keep_files: bool = False,
    count: FileCount | None = None,
) -> Table:
    """Scan `root` in parallel into its directory table; with `keep_files`, keeping each directory's
    files as it listed them (`Table.files`) and adding its count of files to `count` as it goes
    (ValueError without `keep_files`; closing it is the caller's). Raises OSError when the root
    cannot be read."""

@final
class FileCount:
    """A walk's running count of files, for a load of the saved task index beside it
    (`TaskIndex.load`), which waits until the count holds the saved file's size."""

    def __new__(cls) -> FileCount: ...
    def close(self, files: int | None) -> None:
        """The walk is over and found `files` files (None: it failed): a load waiting on the count
        goes on (and leaves a file the count does not hold for `settle`, which refuses it)."""

@final
class WalkFiles:
    """What a walk asked to keep them kept of each directory's files, for a task index to take once
    (`TaskIndexLoad.settle`, `TaskIndex(…, files=…)`) rather than list the tree again."""

@final
class LiveIndex:
    """The walk table kept in memory and kept true by the OS's file-system events (inotify,
    FSEvents, ReadDirectoryChangesW); where there are none, with watch=False, or past the
    watch limit, every refresh rescans."""

    def __new__(cls, root: str, extra_ignore: list[str], max_depth: int, min_tokens: int, watch: bool = True) -> LiveIndex: ...
    def refresh(self) -> int:
        """Apply the changes queued so far; returns the table's generation."""
    def table(self) -> Table:
        """The table as of the last refresh: the same object while nothing changed; after a
        change a new one, which keeps the row objects of the rows that did not change."""
    @property
    def watching(self) -> bool: ...
    @property
    def watching_by(self) -> str:
        """"inotify", "fsevents" or "windows" (the OS's events), "polling" (none to be had:
        every refresh rescans) or "none" (watch=False)."""
    @property
    def watch_reason(self) -> str:
        """Why that watching is in force, in a sentence."""
    @property
    def rescans(self) -> int: ...

def fingerprint(dir: str) -> str:
    """dotcontext's 8-hex stat fingerprint of one directory; raises OSError."""

def is_source_file(name: str) -> bool:
    """Whether dotcontext counts the file name as source for its token estimate."""

def real_path(path: str) -> str | None:
    """The path with every symlink resolved (realpath(3)); None when that fails."""

# The confined file-system layer (rust/tree/fs.rs); wrapped by repoctx/base/fs.py, which says
# the rules. Each takes the root (absolute) and a path relative to it; errors are OSErrors with
# errno set.

class LinkRefused(OSError):
    """A link in the repository leads outside it: not followed. strerror names the link
    relative to the root."""

class PanicException(BaseException):
    """A panic of the core (pyo3_runtime.PanicException): a BaseException, which the handlers
    that answer whatever happens catch by name (repoctx/base/failures.py)."""

class CoreRefused(Exception):
    """What the core refuses to read or build: `message` says why to a person; each subclass
    names its further facts as fields (set on each instance)."""

    message: str

class CacheRefused(CoreRefused):
    """A cache the contract refuses: `code` (one of the contract's) and `message`."""

    code: str

class YamlRefused(CoreRefused):
    """YAML the bounded reader refuses: `reason` (also `message`), `line` and `column` (from 1),
    and whether it breaks YAML's `syntax` (else a bound, or a form the reader does not take)."""

    reason: str
    line: int
    column: int
    syntax: bool

@final
class DirEntry:
    """An entry of a directory, as the directory records it (links not followed)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str:
        """"f" file, "d" directory, "l" link, "o" other."""

@final
class Stat:
    """A stat through the confined layer; times in nanoseconds."""

    @property
    def mode(self) -> int: ...
    @property
    def ino(self) -> int: ...
    @property
    def dev(self) -> int: ...
    @property
    def nlink(self) -> int: ...
    @property
    def uid(self) -> int: ...
    @property
    def gid(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def atime_ns(self) -> int: ...
    @property
    def mtime_ns(self) -> int: ...
    @property
    def ctime_ns(self) -> int: ...

def fs_read(root: str, rel: str, max_bytes: int) -> bytes: ...
def fs_read_head(root: str, rel: str, n: int) -> bytes: ...
def fs_write(root: str, rel: str, data: bytes) -> None: ...
def fs_makedirs(root: str, rel: str) -> None: ...
def fs_open_dir(root: str, rel: str) -> int: ...
def fs_list(root: str, rel: str) -> list[DirEntry]: ...
def fs_stat(root: str, rel: str, follow: bool) -> Stat | None: ...
def fs_remove(root: str, rel: str) -> None: ...
def fs_remove_tree(root: str, rel: str) -> None: ...
def fs_rename(root: str, src: str, dst: str) -> None: ...
def fs_exchange(root: str, a: str, b: str) -> None: ...

# --- formats (rust/formats/) ----------------------------------------------------------------

@final
class YamlFile:
    """One file read_yaml_many was asked for."""

    @property
    def kind(self) -> str:
        """"json", "missing", "too_large", "invalid" or "refused"."""
    @property
    def text(self) -> str:
        """For "json" the document as JSON; "invalid": why it was not read; "refused": JSON
        {"reason", "line", "column"} of the YAML the reader refused; else ""."""

def read_yaml_many(root: str, rels: list[str], max_bytes: int) -> list[YamlFile]:
    """Parse YAML files beneath `root` (through the confined layer: a link out is "invalid",
    named) in parallel. Raises OSError when the root cannot be opened."""

def yaml_to_json(data: bytes) -> str:
    """One YAML document as JSON text, bounded in depth and alias expansion
    (rust/formats/yamlread.rs); a refused one raises YamlRefused (reason, line, column, syntax)."""

def to_yaml(json: bytes) -> str:
    """YAML text for a JSON object: keys in order, strings double-quoted; ValueError on bad JSON."""

def stage_yaml(root: str, items: list[tuple[str, bytes]], raw: bool = False) -> list[str]:
    """Write each (path under `root`, JSON) as YAML (raw: each (path, text) as is) to a new
    temporary file beside it, through the confined layer; returns the temporary paths. A file
    whose first line ends with CRLF keeps CRLF on every line. OSError (LinkRefused for a link
    out), with none left behind, on failure."""

def commit_staged(root: str, pairs: list[tuple[str, str]]) -> None:
    """Flush staged (temporary, final) pairs with one syncfs, rename each into place in order
    beneath `root`, flush again."""

@final
class RequestId:
    """What jsonrpc_request_id read of a line."""

    @property
    def is_object(self) -> bool:
        """Whether the line is one JSON object."""
    @property
    def id(self) -> int | str | None:
        """Its integer or string `id` where one can be read, even from a line cut short or
        nested past any parser's depth."""
    @property
    def has_id(self) -> bool:
        """Whether it has a top-level `id` key, whatever its value (an id that is not an integer
        or a string is invalid)."""

def jsonrpc_request_id(line: bytes) -> RequestId:
    """What a JSON-RPC line is (rust/formats/jsonrpc.rs)."""

@final
class GoRequire:
    """A `require` of a go.mod. Compares equal to one with the same fields."""

    @property
    def path(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def indirect(self) -> bool:
        """`// indirect` (or `// indirect; why`) on its line, as Go reads it."""
    def __eq__(self, value: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

@final
class GoFile:
    """What a go.mod or go.work declares."""

    @property
    def module(self) -> str:
        """The last `module` directive's path; "" without one."""
    @property
    def go(self) -> str | None:
        """The last `go` directive's version."""
    @property
    def requires(self) -> list[GoRequire]:
        """Every `require` with a path and a version, in order."""
    @property
    def uses(self) -> list[str]:
        """The directories of every `use` (go.work), as written, in order."""

def parse_go(text: str) -> GoFile:
    """What a go.mod or go.work declares, read with Go's grammar (rust/formats/gomod.rs, the one
    parser of their syntax): directives and blocks, `//` comments, quoted and back-quoted
    arguments, a leading byte-order mark dropped; lenient (what does not parse is skipped line
    by line). A lone surrogate in `text` is read as U+FFFD."""

# --- languages (rust/lang/) -----------------------------------------------------------------

@final
class FileKind:
    """One row of the one table of file kinds (docs/languages.md)."""

    @property
    def key(self) -> str:
        """A lowercase extension without its dot ("py"), or a whole file name ("Cargo.toml")."""
    @property
    def label(self) -> str:
        """What a file of this kind is ("Python module"), when nothing more is known."""
    @property
    def language(self) -> str:
        """The language or format people name it by ("Python", "C++", "YAML"), "" for none."""
    @property
    def code(self) -> bool:
        """A programming language: modules are made of it and it names a project's language."""
    @property
    def imports(self) -> str:
        """The import grammar its imports are read by: "python", "js", "rust", "go" or ""."""

def file_kinds() -> list[FileKind]:
    """The one table of file kinds, in the core's order."""

def file_kind(name: str) -> FileKind:
    """The row a file name (no directory) falls in: by its whole name, else its extension
    (label "Source file", no language, when the table has neither)."""

def outline(path: str, text: str) -> str:
    """The outline of `text`, the content of `path` (`/`-separated), as JSON: a list of
    definitions, each {kind, name, start, end (1-based, inclusive), signature, members}."""

# --- scopes (rust/scopes/sources.rs) --------------------------------------------------------

FILE_LABELS: list[str]
"""Every label a file purpose can be when nothing more specific is known (e.g. "Python module")."""

@final
class Language:
    """A language of the tree and how many of its files."""

    @property
    def name(self) -> str: ...
    @property
    def files(self) -> int: ...

@final
class ScopeSources:
    """What `.context.yaml` derives from the sources: built once over the directories of a walk
    table, then asked for the facts of scopes, read in parallel."""

    def __new__(cls, root: str, dirs: list[str], extra_ignore: list[str] = ..., manifests: list[str] = ...) -> ScopeSources:
        """`extra_ignore`: the config's patterns; with .contextignore, nested .gitignore and
        .git/info/exclude they keep ignored files out of every listing. `manifests`: the file
        names a scope's facts list as its manifests (none when not given)."""
    def source_files(self, scopes: list[str]) -> list[list[str]]:
        """For each scope, the files its context file lists: not hidden, source, not ignored."""
    def extract(self, scopes: list[str]) -> str:
        """One JSON array, an object per scope in order: files (name, purpose, test_file),
        generic, exports, interfaces, internal, external, manifests, tests."""
    def missing_exports(self, items: list[tuple[str, list[str]]]) -> list[list[str]]:
        """For each (scope, names): the names that no file of the scope exports."""
    @property
    def languages(self) -> list[Language]:
        """Over the whole table, most files first."""

# --- caches (rust/caches/) ------------------------------------------------------------------

def count_tokens(encoding: str, texts: list[str]) -> list[int]:
    """BPE token counts ("o200k" or "cl100k", ranks compiled in) of each text, in parallel."""

@final
class CacheWatch:
    """An inotify watch on a cache's directories, begun before the cache is read; handed to
    load_cache. Inert where watching is impossible (without inotify, which alone reports
    every write, a write through a mapping included)."""

    def __new__(cls, dirs: list[str]) -> CacheWatch: ...

@final
class CacheView:
    """A verified context-engine cache held in memory: its documents (sorted by id), their
    word index, and how to tell that none of its files changed since they were read."""

    @staticmethod
    def from_documents(docs: list[tuple[str, str, str]]) -> CacheView:
        """A view of (id, version, content) documents with no files to watch."""
    def fresh(self) -> bool:
        """Whether nothing changed: the cache's own paths keep their stat keys and the watch saw
        no event (without a watch: every document keeps its stat key; lstat, in parallel)."""
    @property
    def watching(self) -> bool:
        """Whether a watch follows the documents."""
    @property
    def newest_change_ns(self) -> int:
        """The newest ctime (ns) among the files read."""
    def resolve(self, query: str, budget: int) -> str:
        """The v0 SelectionResult as compact JSON (serde_json bytes, f32 scores in shortest form)."""
    def __len__(self) -> int: ...

def load_cache(
    docs_dir: str, docs_fd: int | None, entries: list[tuple[str, str, str]], stats: dict[str, os.stat_result],
    watch: CacheWatch,
) -> CacheView:
    """Read and verify, in parallel, the documents a manifest lists as (id, version, file name in
    docs_dir), each opened through `docs_fd` (a descriptor of docs_dir the caller keeps; None on Windows,
    where docs_dir is opened by its path): each must parse, carry that id and version, and hash to it. `stats` are the cache's
    own paths with their lstat from before anything was read (the view keeps dev, inode, size,
    mtime and ctime); the view takes over `watch`. Raises CacheRefused (code, message) or OSError."""

@final
class CacheEntry:
    """One document of a built cache, as its manifest lists it."""

    @property
    def id(self) -> str: ...
    @property
    def version(self) -> str:
        """"sha256:<hex>" of the content."""
    @property
    def file(self) -> str:
        """"documents/<name>.json", relative to the cache."""

@final
class BuiltCache:
    """What build_cache wrote."""

    @property
    def entries(self) -> list[CacheEntry]:
        """Sorted by id."""
    @property
    def source_bytes(self) -> int:
        """Content bytes of the documents kept."""
    @property
    def skipped(self) -> list[LeftOut]:
        """The files a repository build left out, sorted by path."""

def build_cache(sources: str, root: str, rel: str, repository: bool) -> BuiltCache:
    """Read, hash and write the documents of a cache into `documents/` (created) of the directory
    `rel` beneath `root`, through the confined layer: .md files, or with repository=True the text
    files a repository keeps (.gitignore honoured; hidden, secret-looking, binary, over 1 MiB and
    duplicate-content files skipped). Raises CacheRefused (code, message), LinkRefused or OSError."""

# --- artifacts (rust/artifacts/) ------------------------------------------------------------

@final
class Annotation:
    """One annotation found in a source file."""

    @property
    def path(self) -> str:
        """The file, relative to the root."""
    @property
    def line(self) -> int:
        """1-based."""
    @property
    def kind(self) -> str:
        """spec, decision, norm or test."""
    @property
    def target(self) -> str:
        """The id with its optional `.anchor` or `/test-name`, as written."""
    @property
    def symbol_kind(self) -> str:
        """"function", "class", "struct", … of the symbol the annotation is in or above, or ""."""
    @property
    def symbol(self) -> str: ...

def annotate_file(path: str, rel: str, prefix: str) -> list[Annotation]:
    """The annotations of one file, read now (`rel` names it in the results and picks its comment syntax)."""

@final
class Globs:
    """Glob patterns compiled once: `*` and `?` within a segment, `**` across, a trailing `/` for
    everything below, `./` dropped. Patterns that do not parse never match."""

    def __new__(cls, patterns: list[str]) -> Globs: ...
    def matches(self, path: str) -> list[int]:
        """Indices of the patterns matching `path`, ascending."""
    @property
    def invalid(self) -> list[int]: ...
    def __len__(self) -> int: ...

@final
class SourceIndex:
    """Every file under `scan_paths` (gitignore-aware, in parallel) and the annotations of those
    with a known comment syntax (scanned with `prefix`, e.g. "@"). Raises OSError."""

    def __new__(cls, root: str, prefix: str, scan_paths: list[str]) -> SourceIndex: ...
    def is_current(self, query: Globs | None = None) -> bool:
        """No directory (or ignore file) a query can see changed since the walk: those under its
        literal directories and above them; all of them when None. Racy stamps never count."""
    @property
    def file_count(self) -> int: ...
    def annotations(self, query: Globs | None = None) -> list[Annotation]:
        """Annotations of the files matching `query` (all when None), by path and line; each of those
        files is stat'ed and rescanned when it changed."""
    def match_counts(self, globs: Globs) -> list[int]:
        """For each pattern, how many files it matches."""
    def overlaps(self, query: Globs, globs: Globs) -> list[bool]:
        """For each pattern, whether some file matches both it and `query`."""

# --- git's view (rust/git/view.rs) -------------------------------------------------------

@final
class GitStats:
    """What a GitRepo has done so far (counts since it was made)."""

    @property
    def opens(self) -> int: ...
    @property
    def index_reads(self) -> int: ...
    @property
    def trees_read(self) -> int: ...
    @property
    def files_hashed(self) -> int: ...
    @property
    def hashes_reused(self) -> int: ...
    @property
    def ignore_files_read(self) -> int: ...

@final
class GitRepo:
    """git's view of the repository holding `root`, read in process (rust/git/view.rs): the
    index (read again when its stat changes), commits and trees from loose objects and packs
    (kept by id), worktree files hashed as blobs (kept by stat key). Each answer is what `git
    diff --name-only --no-renames COMMIT` and `git ls-files --others --exclude-standard` would
    give; None where git cannot tell (no repository, no commit, an unknown commit, anything
    unsound or unreadable). Opens nothing until asked; never raises."""

    def __new__(cls, root: str) -> GitRepo: ...
    def head(self) -> str | None:
        """The commit checked out (full hex), None outside a repository or before the first commit."""
    def changed_dirs(self, commit: str, scopes: list[str]) -> set[str] | None:
        """The directories ("." for the root) among or under `scopes` holding a file that
        differs from `commit` (a full hex id) or that git neither tracks nor ignores."""
    def unchanged(self, commit: str, scopes: list[str]) -> set[str] | None:
        """The scopes among `scopes` whose own files (those directly in them) are as at `commit`."""
    @property
    def stats(self) -> GitStats: ...

# --- project (rust/project/modscan.rs) ------------------------------------------------------

@final
class KeyFile:
    """A file of a module that says what it is."""

    @property
    def path(self) -> str:
        """Relative to the root."""
    @property
    def role(self) -> str:
        """entry, config, core or test."""

@final
class ModuleScan:
    """What scan_modules found in one module directory."""

    @property
    def code_files(self) -> int:
        """Source files of a programming language (not docs or data)."""
    @property
    def key_files(self) -> list[KeyFile]:
        """In the order of their roles: entry, config, core, test."""
    @property
    def imports(self) -> list[str]:
        """Sorted, unique: "py:a.b", "js:spec", "rs:crate", "go:path", or "mod:N" for a relative
        import that lands in the module dirs[N]."""
    @property
    def ignored(self) -> bool:
        """The directory, or one above it, is ignored by the root's gitignore rules."""

def scan_modules(root: str, dirs: list[str]) -> list[ModuleScan]:
    """For each module directory (relative, "" for the root), what it holds. Modules nested in
    another are left to themselves."""

# --- task context (rust/tasks/) -------------------------------------------------------------

TASK_SIGNALS: list[str]
"""The signals of task context, by the names `TaskIndex.query(signals_off=…)` takes."""

TASK_NOTHING_MATCHED: str
"""The `why` of every ranked file when no file matched the task and the code files are ranked
by how lately they changed."""

@final
class TaskIndexLoad:
    """A saved task index adopted before the walk (`TaskIndex.load`)."""

    def settle(
        self, dirs: list[str], saved_cap: int, history: TaskHistory | None = None, files: WalkFiles | None = None,
    ) -> TaskIndex:
        """The index of `dirs`, as `TaskIndex(root, dirs, …, saved_at=(path, saved_cap))` builds it: a
        saved file larger than `saved_cap` is refused (unread, when `load` left it). With `history`,
        git's history made beside the load: the index takes it (its first question does not read
        it). With `files`, the walk's listing of `dirs` (taken: once), which is then not listed
        again. ValueError the second time."""

@final
class TaskHistory:
    """git's history of `root` as a task index's question reads it (rust/tasks/history.rs), made
    while a load adopts the saved index, for `TaskIndexLoad.settle`: from `saved` (what an earlier
    `TaskIndex.save_history()` returned; checked) when it was read at HEAD, else from git."""

    def __new__(cls, root: str, saved: bytes | None = None) -> TaskHistory: ...
    @property
    def refused(self) -> str | None:
        """Why `saved` cannot be used (it is checked), or None."""

# What a saved task index is read up to, whatever the tree (rust/tasks/store.rs).
MAX_SAVED_BYTES: int

def saved_bytes_cap(files: int) -> int:
    """The most bytes a saved task index of a tree of `files` files is read up to: 4 MiB and 16 KiB
    a file, never over MAX_SAVED_BYTES (a larger file is refused by its size, unread)."""

@final
class TaskIndex:
    """The task index of a tree (rust/tasks/index.rs): the terms, definitions, imports and
    annotations of every file in `dirs` (the walk table's scopes), the written context
    (.context.yaml, .contextia/, project.yaml) and git's history. `prefix` is the annotation
    prefix ("@"). `saved` is what an earlier `save()` returned (rust/tasks/store.rs), or
    `saved_at` (path from the root, most bytes) a file holding it, read a piece at a time
    through the confined layer (none there, not a regular file or a link out: as none; larger:
    refused unread): the files whose stat key is the one saved are taken from it rather than
    read; bytes that are not a save of this build for this root and these options are ignored
    (`refused` says why). `files`: the walk's listing of `dirs` (`walk(…, keep_files=True)`,
    taken: once), which is then not listed again. Raises OSError when the root cannot be read."""

    def __new__(
        cls, root: str, dirs: list[str], extra_ignore: list[str], prefix: str = ..., contextia: str | None = None,
        saved: bytes | None = None, saved_at: tuple[str, int] | None = None, files: WalkFiles | None = None,
    ) -> TaskIndex: ...
    @staticmethod
    def load(
        root: str, extra_ignore: list[str], prefix: str, contextia: str | None, saved_at: tuple[str, FileCount],
    ) -> TaskIndexLoad:
        """The first half of `TaskIndex(root, dirs, …, saved_at=…)`, before the walk has found `dirs`
        (a cold process runs both at once): the saved file at `saved_at`'s path adopted once the
        walk's count holds its size (`saved_bytes_cap`), or left for `settle` when the walk ends
        short of it. Raises OSError when the root cannot be read."""
    def update(self, changed: list[str], all: list[str] | None = None) -> None:
        """List the directories in `changed` again and read their files whose stat changed;
        with `all` (every directory of the table now), drop the gone ones and index the new ones.
        OSError (EFBIG) when the index would pass 4 GiB of lists or paths: it is then unusable."""
    def query(
        self, task: str, budget: int, paths: list[str], signals_off: list[str], limit: int, tokenizer: str,
        outline: bool = False,
    ) -> TaskAnswer:
        """The ranked files and the bundle; with `outline`, each listed file's outline within half the
        budget. ValueError for an unknown tokenizer."""
    @property
    def file_count(self) -> int: ...
    @property
    def heap_bytes(self) -> int:
        """The index's own count of the bytes it holds."""
    @property
    def heap_parts(self) -> list[tuple[str, int]]:
        """`heap_bytes` by structure: (what, bytes) pairs."""
    def save(self) -> bytes:
        """What the index keeps of each file, for a later `TaskIndex(saved=…)`; `changed` is 0 after."""
    def save_to(self, rel: str, most: int) -> bool:
        """`save()` written to file `rel` beneath the root as it is encoded, when it is at most `most`
        bytes (whether it was): its bytes are never all held. A save refused or failed leaves the
        file as it was. OSError as `fs.write_atomic`'s."""
    @property
    def changed(self) -> int:
        """How many files differ from the last saved bytes (read, dropped, or saved but changed
        or gone since); every file held after a build without usable saved bytes."""
    @property
    def loaded(self) -> int:
        """Files the build took from the saved bytes rather than read."""
    @property
    def refused(self) -> str | None:
        """Why the saved bytes given to the build were not used (None: used, or none given)."""
    def offer_history(self, saved: bytes) -> str | None:
        """Offer what an earlier `save_history()` returned (rust/tasks/history_store.rs): the next
        question takes git's history from it instead of walking git when HEAD is the commit it
        was read at. Why the bytes cannot be used (they are checked), or None."""
    @property
    def history_unsaved(self) -> bool:
        """Whether a question read git's history from git since it was last saved."""
    def save_history(self) -> bytes | None:
        """That read, for a later `offer_history`, once; None when there is none."""

@final
class TaskAnswer:
    """The answer of task context (rust/tasks/rank.rs `Answer`, its one declaration): the `task_context`
    tool's result. Compares equal to one with the same fields."""

    JSON_SCHEMA: ClassVar[str]
    """Its JSON Schema, as text: the tool's output schema."""
    @property
    def task(self) -> str: ...
    @property
    def budget(self) -> int: ...
    @property
    def tokens(self) -> int:
        """The bundle's tokens: the sum of its pieces' counts (with `outline`, and of the outlines' counts
        as compact JSON), never over the budget."""
    @property
    def files(self) -> list[TaskFile]:
        """Best first."""
    @property
    def bundle(self) -> list[TaskPiece]: ...
    def json(self) -> str:
        """Compact JSON, fields in this order."""
    def __eq__(self, value: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

@final
class TaskFile:
    """A ranked file: its score, why (the strongest reasons, `; `-separated) and its best regions."""

    @property
    def path(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def why(self) -> str: ...
    @property
    def regions(self) -> list[TaskRegion]: ...
    @property
    def outline(self) -> list[TaskDefinition] | None:
        """Only with `outline`: the file's definitions and their members; None when not asked for or
        when it did not fit in the budget's share (absent from the JSON then)."""
    def __eq__(self, value: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

@final
class TaskDefinition:
    """A definition of a ranked file's outline (rust/tasks/outlines.rs), as `file_outline` gives it."""

    @property
    def kind(self) -> str:
        """function, class, struct, enum, trait, impl, interface, module, …"""
    @property
    def name(self) -> str: ...
    @property
    def start(self) -> int:
        """First line, 1-based."""
    @property
    def end(self) -> int:
        """Last line, inclusive."""
    @property
    def signature(self) -> str:
        """The first line, trimmed (cut after 200 characters with …)."""
    @property
    def members(self) -> list[TaskMember]:
        """The definitions directly inside it, in line order."""
    def __eq__(self, value: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

@final
class TaskMember:
    """A definition directly inside one of an outline (a method under its class or impl)."""

    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def signature(self) -> str: ...
    def __eq__(self, value: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

@final
class TaskRegion:
    """Lines of a ranked file."""

    @property
    def start(self) -> int:
        """First line, 1-based."""
    @property
    def end(self) -> int:
        """Last line, inclusive."""
    @property
    def symbol(self) -> str:
        """The definition's name ("" for lines outside definitions)."""
    @property
    def kind(self) -> str:
        """function, class, struct, enum, trait, impl, interface, module, or lines."""
    def __eq__(self, value: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

@final
class TaskPiece:
    """A piece of the bundle: lines start..end of the file, as they are."""

    @property
    def path(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def text(self) -> str: ...
    def __eq__(self, value: object, /) -> bool: ...
    __hash__: ClassVar[None]  # type: ignore[assignment]

# --- the build ------------------------------------------------------------------------------

@final
class BuildInfo:
    """How the core was built."""

    @property
    def version(self) -> str: ...
    @property
    def profile(self) -> str:
        """"debug" or "release"."""
    @property
    def target(self) -> str:
        """"<arch>-<os>"."""

def build_info() -> BuildInfo: ...
