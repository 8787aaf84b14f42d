"""file_outline (`repoctx outline PATH [--json]`): one file's shape before its text, its
definitions with their line ranges and signature lines, and their members (methods under a
class or an impl).

The definitions are the core's (rust/lang/outline.rs over rust/lang/spans.rs), the same ones
task context cuts files into regions along: found for Python, Rust, Go, TypeScript/JavaScript
and Java; a file of another kind has an empty outline. The file is read through the confined
layer (base/fs.py): a path outside the root, into `.git`, or through a link that leads out is
refused like at every other door.
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Struct

from repoctx import _core
from repoctx.base import fs
from repoctx.base.command import CliView, Command
from repoctx.base.workspace import PathEscape, Workspace

# A larger file is not outlined (as task context, whose index reads files up to this size).
MAX_FILE_BYTES = 4 << 20


class OutlineParams(Struct):
    path: Annotated[str, Meta(description="The file, relative to the repository root")]


class Member(Struct):
    kind: str  # function, class, struct, enum, trait, impl, interface, module, …
    name: str
    start: int  # first line, 1-based
    end: int  # last line, inclusive
    signature: str  # the first line, trimmed (cut after 200 characters with …)


class Definition(Struct):
    kind: str
    name: str
    start: int
    end: int
    signature: str
    members: list[Member]  # definitions directly inside it, in line order


class OutlineResult(Struct):
    path: str  # relative to the root, `/`-separated
    language: str  # as the language table names it ("" for an unknown kind)
    lines: int
    definitions: list[Definition]


class ErrorDetail(Struct):
    code: str  # invalid_path, not_found, not_a_file, too_large, io_error
    message: str


class OutlineError(Struct):
    error: ErrorDetail


def _fail(code: str, message: str) -> OutlineError:
    return OutlineError(ErrorDetail(code, message))


def definitions(rel: str, text: str) -> list[Definition]:
    """The outline of `text`, the content of `rel`."""
    return msgspec.json.decode(_core.outline(rel, text), type=list[Definition])


def line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def file_outline(ws: Workspace, p: OutlineParams) -> OutlineResult | OutlineError:
    try:
        rel, _ = ws.resolve(p.path)
    except PathEscape:
        return _fail("invalid_path", f"Path {p.path!r} is outside the repository")
    try:
        text = fs.read_text(ws.root, rel, MAX_FILE_BYTES)
    except fs.LinkRefused:
        return _fail("invalid_path", f"Path {p.path!r} leads out of the repository through a link")
    except FileNotFoundError:
        return _fail("not_found", f"No file {p.path!r} in the repository")
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            return _fail("too_large", f"{p.path!r} is larger than {MAX_FILE_BYTES} bytes; not outlined")
        if exc.errno in (errno.EISDIR, errno.EINVAL):
            return _fail("not_a_file", f"{p.path!r} is not a regular file")
        return _fail("io_error", f"{p.path!r} cannot be read: {exc}")
    language = _core.file_kind(rel.rsplit("/", 1)[-1]).language
    return OutlineResult(rel, language, line_count(text), definitions(rel, text))


def _render(r: OutlineResult | OutlineError) -> str:
    if isinstance(r, OutlineError):
        return f"{r.error.code}: {r.error.message}"
    head = f"{r.path}  ({r.language or 'unknown kind'}, {r.lines} lines)"
    if not r.definitions:
        return f"{head}\nNo definitions found."
    return "\n".join([head, *outline_lines(r.definitions)])


def outline_lines(definitions: Sequence[Any], indent: str = "") -> list[str]:
    """The text view of an outline, here and in task_context's: a line per definition (its
    lines, kind, name and signature), its members indented under it."""
    lines = []
    for d in definitions:
        lines.append(f"{indent}{d.start:>5}-{d.end:<5} {d.kind} {d.name}: {d.signature}")
        lines.extend(f"{indent}{m.start:>7}-{m.end:<5} {m.kind} {m.name}: {m.signature}" for m in d.members)
    return lines


COMMANDS = [
    Command(
        name="outline",
        tool="file_outline",
        summary="One file's outline: its definitions with line ranges and signature lines, and their members.",
        description="Give a path relative to the repository root. The answer lists the file's top-level "
        "definitions (functions, classes, structs, impls, …) in line order, each with its kind, name, first and "
        "last line (1-based) and signature line, and its members (methods under a class or impl). Definitions "
        "are found for Python, Rust, Go, TypeScript/JavaScript, Java, C#, C/C++, Dart, Kotlin, Swift, PHP, Ruby, "
        "Scala, Elixir, Lua, Haskell, Zig, Perl, R, Julia, OCaml, F#, Erlang, the Lisps, Pascal, Ada, VHDL, "
        "Verilog, Fortran, Visual Basic, Vim script, Lean, CoffeeScript, GDScript, shell, PowerShell and the "
        "scripts of Vue, Svelte and Astro components; other files have none. Read a "
        "file's shape before its text, then ask for the lines you need.",
        params=OutlineParams,
        result=OutlineResult | OutlineError,
        handler=file_outline,
        is_error=lambda r: isinstance(r, OutlineError),
        cli=CliView(positional=("path",), render=_render),
    ),
]
