"""Types of the Rust core (rust/lib.rs). Heavy calls release the GIL."""

SKIP_DIRS: list[str]

Row = tuple[str, str, int, int, bool, bool, bool]

def walk(root: str, extra_ignore: list[str], max_depth: int, min_tokens: int) -> tuple[list[Row], int, list[str]]:
    """Scan `root` in parallel into directory rows sorted by scope bytes.

    Each row is (scope, fingerprint, source_bytes, files, has_context, included, eligible).
    Also returns the number of included directories skipped by `min_tokens`, and the
    scopes of directories that could not be read. Raises OSError when the root cannot be read.
    """

def fingerprint(dir: str) -> str:
    """dotcontext's 8-hex stat fingerprint of one directory; raises OSError."""

def is_source_file(name: str) -> bool:
    """Whether dotcontext counts the file name as source for its token estimate."""

def read_yaml_many(paths: list[str], max_bytes: int) -> list[tuple[str, str]]:
    """Parse YAML files in parallel: ("json", text) | ("missing", "") | ("too_large", "") | ("invalid", reason)."""
