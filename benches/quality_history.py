"""A repository's history as retrieval tasks, for `python -m benches quality`.

Each task is one non-merge commit that changes 1–10 non-test source files: the query is its
message (pull-request numbers and trailers stripped), the state is its parent, and the gold is
what it changed there (files, and lines counted in the parent). Everything is read from a
private local `git clone --no-checkout` under a temporary directory and walked oldest first in
that one checkout; the repository itself is only read (`GIT_OPTIONAL_LOCKS=0`), never written.
The clone holds its own objects (hard links to the repository's pack files on the same file
system, copies elsewhere), not `--shared`'s alternates: repoctx's git reader refuses a repository
whose objects are elsewhere, and the history signal would be silent.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

# The code repoctx reads (rust/lang/mod.rs, FILE_KINDS), by suffix: a task's source files (which
# have definitions read is docs/languages.md's "Lexing").
LANGUAGES = {".py": "Python", ".pyi": "Python", ".rs": "Rust", ".go": "Go", ".java": "Java", ".cs": "C#",
             ".kt": "Kotlin", ".swift": "Swift", ".php": "PHP", ".rb": "Ruby",
             ".scala": "Scala", ".dart": "Dart", ".ex": "Elixir", ".exs": "Elixir", ".lua": "Lua",
             ".hs": "Haskell", ".zig": "Zig", ".pl": "Perl", ".pm": "Perl", ".r": "R", ".R": "R",
             ".jl": "Julia", ".cr": "Crystal", ".elm": "Elm", ".ml": "OCaml", ".mli": "OCaml", ".fs": "F#",
             ".fsi": "F#", ".fsx": "F#", ".erl": "Erlang", ".hrl": "Erlang", ".clj": "Clojure", ".cljs": "Clojure",
             ".cljc": "Clojure", ".el": "Lisp", ".lisp": "Lisp", ".scm": "Lisp", ".rkt": "Lisp", ".fnl": "Lisp",
             ".rake": "Ruby", ".purs": "PureScript", ".bzl": "Starlark", ".star": "Starlark", ".pyx": "Cython",
             ".pxd": "Cython", ".mojo": "Mojo", ".gd": "GDScript"} | dict.fromkeys(
    (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"), "TypeScript/JavaScript") | dict.fromkeys(
    (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".ipp", ".inl", ".cu", ".cuh", ".ino"), "C/C++") | {
    ".m": "Objective-C", ".mm": "Objective-C", ".groovy": "Groovy", ".sol": "Solidity", ".gleam": "Gleam",
    ".nim": "Nim", ".d": "D", ".hx": "Haxe", ".v": "Verilog", ".vh": "Verilog", ".sv": "Verilog", ".svh": "Verilog",
    ".vhd": "VHDL", ".vhdl": "VHDL", ".ads": "Ada", ".adb": "Ada", ".f": "Fortran", ".f90": "Fortran",
    ".f95": "Fortran", ".f03": "Fortran", ".f08": "Fortran", ".F90": "Fortran", ".F": "Fortran", ".pas": "Pascal", ".dpr": "Pascal", ".lpr": "Pascal",
    ".vb": "Visual Basic", ".bas": "Visual Basic", ".nix": "Nix", ".vim": "Vim script", ".lean": "Lean",
    ".tcl": "Tcl", ".coffee": "CoffeeScript", ".raku": "Raku", ".rakumod": "Raku", ".odin": "Odin", ".move": "Move",
    ".asm": "Assembly", ".s": "Assembly", ".S": "Assembly", ".ps1": "PowerShell", ".psm1": "PowerShell"} | dict.fromkeys(
    (".sh", ".bash", ".zsh", ".ksh"), "Shell") | dict.fromkeys(
    (".glsl", ".vert", ".frag", ".hlsl", ".wgsl", ".metal"), "Shaders") | {
    ".vue": "Vue", ".svelte": "Svelte", ".astro": "Astro"}
SOURCE_SUFFIXES = tuple(LANGUAGES)
# Test files as repoctx tells them (rust/lang/mod.rs, is_test_path): directories by their name in
# any case, and C#'s test projects (`Foo.Tests`).
TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "testing"})
TEST_PROJECTS = (".test", ".tests")
MAX_FILES = 10
# A file larger than this, or with a NUL byte, is not a candidate (repoctx's caches skip them too).
MAX_BYTES = 1 << 20

_ENV = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}


def git(cwd: Path | str, *args: str, binary: bool = False, stdin: bytes | None = None) -> str | bytes:
    """git's stdout; never takes the optional locks (a `git status` would refresh the index)."""
    out = subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=cwd, capture_output=True,
                         env={**os.environ, **_ENV}, check=False, input=stdin)
    if out.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {out.stderr.decode(errors='replace').strip()}")
    return out.stdout if binary else out.stdout.decode(errors="replace")


def is_source(path: str) -> bool:
    return path.endswith(SOURCE_SUFFIXES)


def is_test(path: str) -> bool:
    """Under a test directory, or named as a test: test_*.py, *_test.py, *_test.go, *_spec.rb,
    conftest.py, *.test.ts, *.spec.js, PowerShell's *.Tests.ps1, …"""
    *dirs, name = path.split("/")
    if any(d.lower() in TEST_DIRS or (d.lower().endswith(TEST_PROJECTS) and d.lower() not in TEST_PROJECTS)
           for d in dirs):
        return True
    stem = name.split(".")[0]
    return (name.startswith("test_") or stem.endswith(("_test", "_spec")) or name == "conftest.py"
            or ".test." in name or ".spec." in name or ".Tests." in name)


def line_count(data: bytes) -> int:
    """Lines as git counts them: newline-terminated, plus a last line without one."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


# --- the query ----------------------------------------------------------------

PR_NUMBER = re.compile(r"[ \t]*\(#\d+(?:,\s*#\d+)*\)")
TRAILER_LINE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*:\s")
KNOWN_TRAILERS = frozenset({
    "signed-off-by", "co-authored-by", "reviewed-by", "acked-by", "tested-by", "reported-by", "suggested-by",
    "helped-by", "reviewed-on", "change-id", "cc", "ghstack-source-id", "pull-request", "differential revision",
})


def clean_message(message: str) -> str:
    """The commit message as a task: subject and body, without pull-request numbers such as
    "(#1234)" and without trailers (the last paragraph when every line of it is `Token: value`,
    and lines of well-known trailers such as Signed-off-by anywhere)."""
    paragraphs = [p for p in re.split(r"\n[ \t]*\n", message.strip()) if p.strip()]
    if len(paragraphs) > 1:
        last = paragraphs[-1].splitlines()
        if all(TRAILER_LINE.match(ln) or ln[:1] in (" ", "\t") for ln in last) and TRAILER_LINE.match(last[0]):
            paragraphs.pop()
    kept = []
    for paragraph in paragraphs:
        lines = [ln.rstrip() for ln in paragraph.splitlines()
                 if ln.split(":", 1)[0].strip().lower() not in KNOWN_TRAILERS or ":" not in ln]
        text = PR_NUMBER.sub("", "\n".join(lines)).strip()
        if text:
            kept.append(text)
    return "\n\n".join(kept)


# --- commits ------------------------------------------------------------------


@dataclass
class Task:
    sha: str
    parent: str
    date: str
    subject: str
    query: str
    gold: dict[str, list[int]]  # changed non-test source file of the parent -> its changed lines (1-based)
    added: list[str] = field(default_factory=list)  # non-test source files the commit added: in no state

    @property
    def half(self) -> str:
        return half(self.sha)


def half(sha: str) -> str:
    """The deterministic split: sha256 of the full commit id, even = tuning, odd = held-out."""
    return "tuning" if int(hashlib.sha256(sha.encode()).hexdigest(), 16) % 2 == 0 else "held-out"


def changed_sources(clone: Path, parent: str, sha: str) -> list[tuple[str, str]]:
    """(status, path) of each non-test source file the commit changes, renames as delete + add."""
    raw = git(clone, "diff-tree", "-r", "-z", "--no-commit-id", "--no-renames", "--name-status", parent, sha)
    items = raw.split("\0")
    pairs = [(items[i][:1], items[i + 1]) for i in range(0, len(items) - 1, 2)]
    return [(s, p) for s, p in pairs if is_source(p) and not is_test(p)]


HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.M)


def changed_lines(clone: Path, parent: str, sha: str, path: str) -> list[int]:
    """The lines of `path` in the parent that the commit changes: each hunk's old side of
    `git diff -U0` (Myers, indent heuristic); a pure insertion counts the line it follows (the
    first line for an insertion at the top), so every hunk names at least one line."""
    diff = git(clone, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-renames", "--diff-algorithm=myers",
               "--indent-heuristic", "--no-textconv", parent, sha, "--", path)
    size = line_count(git(clone, "cat-file", "blob", f"{parent}:{path}", binary=True))
    lines: set[int] = set()
    for m in HUNK.finditer(diff):
        start, count = int(m.group(1)), 1 if m.group(2) is None else int(m.group(2))
        lines.update(range(start, start + count) if count else [max(start, 1)])
    return sorted(n for n in lines if 1 <= n <= size)


class Unreadable(RuntimeError):
    """A state git cannot produce: a snapshot whose history lacks some blobs."""


def select(clone: Path, rev: str, n: int, max_files: int = MAX_FILES,
           unreadable: list[str] | None = None) -> list[Task]:
    """The last `n` non-merge commits reachable from `rev` that change 1..max_files non-test source
    files, at least one of which the parent has (a commit that only adds files has nothing a
    ranker could name), oldest first. Root commits have no parent state and are passed over, and
    so are commits whose changed lines cannot be read (absent blobs): their ids go to `unreadable`."""
    tasks: list[Task] = []
    for line in git(clone, "rev-list", "--no-merges", "--parents", rev).splitlines():
        sha, *parents = line.split()
        if not parents:
            continue
        changed = changed_sources(clone, parents[0], sha)
        if not 1 <= len(changed) <= max_files or all(s == "A" for s, _ in changed):
            continue
        date, subject, message = git(clone, "log", "-1", "--format=%cI%x00%s%x00%B", sha).split("\0", 2)
        try:
            gold = {p: changed_lines(clone, parents[0], sha, p) for s, p in changed if s != "A"}
        except RuntimeError:
            if unreadable is not None:
                unreadable.append(sha)
            continue
        tasks.append(Task(sha, parents[0], date, subject, clean_message(message), dict(sorted(gold.items())),
                          sorted(p for s, p in changed if s == "A")))
        if len(tasks) == n:
            break
    return tasks[::-1]


# --- the private checkout -----------------------------------------------------


ABSENT_BLOB = re.compile(r"unable to read sha1 file of (.+?) \([0-9a-f]{40}\)")


def glob_escape(path: str) -> str:
    """A path as a literal sparse-checkout pattern."""
    return re.sub(r"([*?\[\]\\!#])", r"\\\1", path)


@dataclass
class SourceFile:
    blob: str
    text: str
    lines: int


class Checkout:
    """One private clone of the repository under a temporary directory, moved from state to
    state with `git checkout --detach`, so each step changes only what the commits between
    changed and a server watching it can follow. Removed on exit."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.tmp = Path(tempfile.mkdtemp(prefix="repoctx-quality-"))
        self.path = self.tmp / "checkout"
        self.files: dict[str, SourceFile] = {}
        self.skipped: set[str] = set()
        self.absent: set[str] = set()  # files whose blobs git lacks, left out of the checkout

    def __enter__(self) -> Checkout:
        try:
            git(self.tmp, "clone", "--quiet", "--no-checkout", str(self.repo), str(self.path))
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def goto(self, sha: str) -> dict[str, SourceFile]:
        """Check out `sha` and return its source files (tests included: they are candidates
        too), each read again only when its blob changed. A file that is not source and whose
        blob git lacks (a snapshot's history) is left out of the checkout, by a sparse pattern,
        for this state and the next; Unreadable when a source file's blob is absent or git fails
        otherwise (the checkout is then in no known state)."""
        try:
            return self._goto(sha)
        except (RuntimeError, OSError) as exc:
            self.files = {}
            raise Unreadable(f"{sha[:10]}: {exc}"[:300]) from exc

    def _checkout(self, sha: str) -> None:
        while True:
            try:
                git(self.path, "checkout", "--quiet", "--force", "--detach", sha)
                return
            except RuntimeError as exc:
                absent = set(ABSENT_BLOB.findall(str(exc))) - self.absent
                if not absent or any(is_source(p) for p in absent):
                    raise
            self.absent |= absent
            patterns = ["/*", *(f"!/{glob_escape(p)}" for p in sorted(self.absent))]
            git(self.path, "sparse-checkout", "set", "--no-cone", "--", *patterns)

    def _goto(self, sha: str) -> dict[str, SourceFile]:
        self._checkout(sha)
        blobs = {}
        for entry in git(self.path, "ls-tree", "-r", "-z", "--full-tree", sha).split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            mode, kind, blob = meta.split()
            if kind == "blob" and mode != "120000" and is_source(path):
                blobs[path] = blob
        files = {}
        for path, blob in blobs.items():
            known = self.files.get(path)
            if known is not None and known.blob == blob:
                files[path] = known
                continue
            data = (self.path / path).read_bytes()
            if len(data) > MAX_BYTES or b"\0" in data:
                self.skipped.add(path)
                continue
            files[path] = SourceFile(blob, data.decode(errors="replace"), line_count(data))
        self.files = files
        return files
