"""Types of the Rust core (rust/lib.rs). Heavy calls release the GIL."""

SKIP_DIRS: list[str]

Row = tuple[str, str, int, int, bool, bool, bool, int, int]
LeftOut = tuple[str, str]  # (path, with bytes that are not UTF-8 written \xNN; why it was left out)

def walk(root: str, extra_ignore: list[str], max_depth: int, min_tokens: int) -> tuple[list[Row], int, list[LeftOut]]:
    """Scan `root` in parallel into directory rows sorted by scope bytes.

    Each row is (scope, fingerprint, source_bytes, files, has_context, included, eligible,
    context_mtime_ns, context_size).
    Also returns the number of included directories skipped by `min_tokens`, and the
    directories left out with their subtrees: unreadable ones, and those whose names are
    not UTF-8 (they cannot be scopes). Raises OSError when the root cannot be read.
    """

class LiveIndex:
    """The walk table kept in memory and kept true by inotify (Linux); elsewhere, or with
    watch=False, or past the watch limit, every refresh rescans."""

    def __init__(self, root: str, extra_ignore: list[str], max_depth: int, min_tokens: int, watch: bool = True) -> None: ...
    def refresh(self) -> int:
        """Apply the changes queued so far; returns the table's generation."""
    def table(self) -> tuple[list[Row], int, list[LeftOut], int, list[int]]:
        """(rows, skipped, unreadable, generation, the generation at which each row last
        changed) as of the last refresh."""
    def changes_since(self, since: int) -> tuple[list[tuple[int, Row]] | None, int, list[LeftOut], int]:
        """((position, row) of each row changed after generation `since`, or None when rows
        came or went since: call table()), skipped, unreadable, generation."""
    @property
    def watching(self) -> bool: ...
    @property
    def rescans(self) -> int: ...

def count_tokens(encoding: str, texts: list[str]) -> list[int]:
    """BPE token counts ("o200k" or "cl100k", ranks compiled in) of each text, in parallel."""

def fingerprint(dir: str) -> str:
    """dotcontext's 8-hex stat fingerprint of one directory; raises OSError."""

def build_info() -> list[tuple[str, str]]:
    """How the core was built: ("version", …), ("profile", "debug"|"release"), ("target", "<arch>-<os>")."""

def is_source_file(name: str) -> bool:
    """Whether dotcontext counts the file name as source for its token estimate."""

def read_yaml_many(root: str, rels: list[str], max_bytes: int) -> list[tuple[str, str]]:
    """Parse YAML files beneath `root` (through the confined layer: a link out is "invalid",
    named) in parallel: ("json", text) | ("missing", "") | ("too_large", "") | ("invalid", why it was
    not read) | ("refused", JSON {"reason", "line", "column"} of YAML the reader refused)."""

def jsonrpc_request_id(line: bytes) -> tuple[bool, int | str | None]:
    """(whether a JSON-RPC line is one JSON object, its integer or string `id` where one can be
    read, even from a line cut short or nested past any parser's depth) (rust/jsonrpc.rs)."""

def yaml_to_json(data: bytes) -> str:
    """One YAML document as JSON text, bounded in depth and alias expansion (rust/yamlread.rs);
    a refused one raises ValueError(reason, line, column, syntax)."""

def scan_modules(root: str, dirs: list[str]) -> list[tuple[int, list[tuple[str, str]], list[str], bool]]:
    """For each module directory (relative, "" for the root): (code files, key files as
    (repo-relative path, role) with role entry|config|core|test, sorted unique import specifiers
    "py:a.b" | "js:spec" | "rs:crate" | "go:path" | "mod:N" (a relative import landing in
    dirs[N]), whether the root's gitignore ignores the directory). Modules nested in another
    are left to themselves."""

StatKey = tuple[int, int, int, int, int]  # (dev, inode, size, mtime ns, ctime ns)

class CacheWatch:
    """An inotify watch on a cache's directories, begun before the cache is read; handed to
    load_cache. Inert where watching is impossible."""

    def __init__(self, dirs: list[str]) -> None: ...

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
    docs_dir: str, entries: list[tuple[str, str, str]], meta: list[tuple[str, StatKey]], watch: CacheWatch
) -> CacheView:
    """Read and verify, in parallel, the documents a manifest lists as (id, version, file name in
    docs_dir): each must parse, carry that id and version, and hash to it. `meta` are the cache's
    own paths with the stat keys they had before anything was read; the view takes over `watch`.
    Raises ValueError(code, message) or OSError."""

def build_cache(
    sources: str, root: str, rel: str, repository: bool
) -> tuple[list[tuple[str, str, str]], int, list[tuple[str, str]]]:
    """Read, hash and write the documents of a cache into `documents/` (created) of the directory
    `rel` beneath `root`, through the confined layer: .md files, or with repository=True the text
    files a repository keeps (.gitignore honoured; hidden, secret-looking, binary, over 1 MiB and
    duplicate-content files skipped). Returns ((id, version, file) sorted by id, content bytes,
    (path, why) of each file skipped, sorted by path). Raises ValueError(code, message),
    LinkRefused or OSError."""

# (path, line, kind, target, symbol_kind, symbol): kind is spec|decision|norm|test, target the id with
# its optional `.anchor` or `/test-name`, symbol_kind "function", "class", "struct", … or "".
AnnotationRow = tuple[str, int, str, str, str, str]

def annotate_file(path: str, rel: str, prefix: str) -> list[AnnotationRow]:
    """The annotations of one file, read now (`rel` names it in the rows and picks its comment syntax)."""

class Globs:
    """Glob patterns compiled once: `*` and `?` within a segment, `**` across, a trailing `/` for
    everything below, `./` dropped. Patterns that do not parse never match."""

    def __init__(self, patterns: list[str]) -> None: ...
    def matches(self, path: str) -> list[int]:
        """Indices of the patterns matching `path`, ascending."""
    @property
    def invalid(self) -> list[int]: ...
    def __len__(self) -> int: ...

class SourceIndex:
    """Every file under `scan_paths` (gitignore-aware, in parallel) and the annotations of those
    with a known comment syntax (scanned with `prefix`, e.g. "@"). Raises OSError."""

    def __init__(self, root: str, prefix: str, scan_paths: list[str]) -> None: ...
    def is_current(self, query: Globs | None = None) -> bool:
        """No directory (or ignore file) a query can see changed since the walk: those under its
        literal directories and above them; all of them when None. Racy stamps never count."""
    @property
    def file_count(self) -> int: ...
    def annotations(self, query: Globs | None = None) -> list[AnnotationRow]:
        """Annotations of the files matching `query` (all when None), by path and line; each of those
        files is stat'ed and rescanned when it changed."""
    def match_counts(self, globs: Globs) -> list[int]:
        """For each pattern, how many files it matches."""
    def overlaps(self, query: Globs, globs: Globs) -> list[bool]:
        """For each pattern, whether some file matches both it and `query`."""

FILE_LABELS: list[str]
"""Every label a file purpose can be when nothing more specific is known (e.g. "Python module")."""

class ScopeSources:
    """What `.context.yaml` derives from the sources (rust/extract.rs): built once over the
    directories of a walk table, then asked for the facts of scopes, read in parallel."""

    def __init__(self, root: str, dirs: list[str], extra_ignore: list[str] = ...) -> None:
        """`extra_ignore`: the config's patterns; with .contextignore, nested .gitignore and
        .git/info/exclude they keep ignored files out of every listing."""
    def source_files(self, scopes: list[str]) -> list[list[str]]:
        """For each scope, the files its context file lists: not hidden, source, not ignored."""
    def extract(self, scopes: list[str]) -> str:
        """One JSON array, an object per scope in order: files (name, purpose, test_file),
        generic, exports, interfaces, internal, external, manifests, tests."""
    def missing_exports(self, items: list[tuple[str, list[str]]]) -> list[list[str]]:
        """For each (scope, names): the names that no file of the scope exports."""
    @property
    def languages(self) -> list[tuple[str, int]]:
        """(language, files) over the whole table, most files first."""

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

class GitRepo:
    """git's view of the repository holding `root`, read in process (rust/gitview.rs): the
    index (read again when its stat changes), commits and trees from loose objects and packs
    (kept by id), worktree files hashed as blobs (kept by stat key). Each answer is what `git
    diff --name-only --no-renames COMMIT` and `git ls-files --others --exclude-standard` would
    give; None where git cannot tell (no repository, no commit, an unknown commit, anything
    unsound or unreadable). Opens nothing until asked; never raises."""

    def __init__(self, root: str) -> None: ...
    def head(self) -> str | None:
        """The commit checked out (full hex), None outside a repository or before the first commit."""
    def changed_dirs(self, commit: str, scopes: list[str]) -> set[str] | None:
        """The directories ("." for the root) among or under `scopes` holding a file that
        differs from `commit` (a full hex id) or that git neither tracks nor ignores."""
    def unchanged(self, commit: str, scopes: list[str]) -> set[str] | None:
        """The scopes among `scopes` whose own files (those directly in them) are as at `commit`."""
    @property
    def stats(self) -> GitStats: ...

def to_yaml(json: bytes) -> str:
    """YAML text for a JSON object: keys in order, strings double-quoted; ValueError on bad JSON."""

def stage_yaml(root: str, items: list[tuple[str, bytes]], raw: bool = False) -> list[str]:
    """Write each (path under `root`, JSON) as YAML (raw: each (path, text) as is) to a new
    temporary file beside it, through the confined layer; returns the temporary paths.
    OSError (LinkRefused for a link out), with none left behind, on failure."""

def commit_staged(root: str, pairs: list[tuple[str, str]]) -> None:
    """Flush staged (temporary, final) pairs with one syncfs, rename each into place in order
    beneath `root`, flush again."""

class LinkRefused(OSError):
    """A link in the repository leads outside it: not followed. strerror names the link
    relative to the root."""

# The confined file-system layer (rust/fs.rs); wrapped by repoctx/fs.py, which says the rules.
# Each takes the root (absolute) and a path relative to it; errors are OSErrors with errno set.
StatTuple = tuple[int, int, int, int, int, int, int, int, int, int]  # mode, ino, dev, nlink, uid, gid, size, atime/mtime/ctime ns

def fs_read(root: str, rel: str, max_bytes: int) -> bytes: ...
def fs_read_head(root: str, rel: str, n: int) -> bytes: ...
def fs_write(root: str, rel: str, data: bytes) -> None: ...
def fs_makedirs(root: str, rel: str) -> None: ...
def fs_open_dir(root: str, rel: str) -> int: ...
def fs_list(root: str, rel: str) -> list[tuple[str, str]]: ...
def fs_stat(root: str, rel: str, follow: bool) -> StatTuple | None: ...
def fs_remove(root: str, rel: str) -> None: ...
def fs_remove_tree(root: str, rel: str) -> None: ...
def fs_rename(root: str, src: str, dst: str) -> None: ...
def fs_exchange(root: str, a: str, b: str) -> None: ...
