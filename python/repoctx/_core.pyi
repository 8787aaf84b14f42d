"""Types of the Rust core (rust/lib.rs). Heavy calls release the GIL."""

SKIP_DIRS: list[str]

Row = tuple[str, str, int, int, bool, bool, bool, int, int]

def walk(root: str, extra_ignore: list[str], max_depth: int, min_tokens: int) -> tuple[list[Row], int, list[str]]:
    """Scan `root` in parallel into directory rows sorted by scope bytes.

    Each row is (scope, fingerprint, source_bytes, files, has_context, included, eligible,
    context_mtime_ns, context_size).
    Also returns the number of included directories skipped by `min_tokens`, and the
    scopes of directories that could not be read. Raises OSError when the root cannot be read.
    """

class LiveIndex:
    """The walk table kept in memory and kept true by inotify (Linux); elsewhere, or with
    watch=False, or past the watch limit, every refresh rescans."""

    def __init__(self, root: str, extra_ignore: list[str], max_depth: int, min_tokens: int, watch: bool = True) -> None: ...
    def refresh(self) -> int:
        """Apply the changes queued so far; returns the table's generation."""
    def table(self) -> tuple[list[Row], int, list[str], int]:
        """(rows, skipped, unreadable, generation) as of the last refresh."""
    @property
    def watching(self) -> bool: ...
    @property
    def rescans(self) -> int: ...

def fingerprint(dir: str) -> str:
    """dotcontext's 8-hex stat fingerprint of one directory; raises OSError."""

def build_info() -> list[tuple[str, str]]:
    """How the core was built: ("version", …), ("profile", "debug"|"release"), ("target", "<arch>-<os>")."""

def is_source_file(name: str) -> bool:
    """Whether dotcontext counts the file name as source for its token estimate."""

def read_yaml_many(paths: list[str], max_bytes: int) -> list[tuple[str, str]]:
    """Parse YAML files in parallel: ("json", text) | ("missing", "") | ("too_large", "") | ("invalid", reason)."""

def scan_modules(root: str, dirs: list[str]) -> list[tuple[int, list[tuple[str, str]], list[str], bool]]:
    """For each module directory (relative, "" for the root): (code files, key files as
    (repo-relative path, role) with role entry|config|core|test, sorted unique import specifiers
    "py:a.b" | "js:spec" | "rs:crate" | "go:path" | "mod:N" (a relative import landing in
    dirs[N]), whether the root's gitignore ignores the directory). Modules nested in another
    are left to themselves."""
