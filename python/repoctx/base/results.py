"""The control surface's result shape, shared by its commands.

Every success is `{ok: true, command, schema_version, ...}`; every failure is
`{ok: false, command, schema_version, error: {code, message}}` (plus whatever
the command found, e.g. the failed checks), and the CLI exits non-zero for it.
Bounded reads cut text at a byte limit on a UTF-8 boundary and say so.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from repoctx.base.command import Command
from repoctx.base.fs import LinkRefused

SCHEMA_VERSION = 1
DEFAULT_MAX_BYTES = 12000

# The codes a control command fails with; the message says the rest.
Code = Literal[
    "not_found",  # no such proposal or run (or none at all for `latest`)
    "invalid_argument",  # a parameter that cannot name anything
    "invalid_path",  # a path that leaves the root or is not a context file
    "precondition_failed",  # the files changed since the proposal was made
    "invalid_proposal",  # a proposal that does not apply cleanly or gives invalid files
    "validation_failed",  # checks ran and some failed
    "already_applied",
    "conflict",  # a client config already registers another server under the name
    "config_error",  # a malformed configuration file
    "read_only",
    "io_error",
    "usage",  # a command line argparse cannot take (unknown option, missing argument)
    "internal_error",  # a command raised unexpectedly (a bug or an environment it did not foresee)
]

MaxBytes = Annotated[
    int,
    Meta(ge=1, le=1 << 20, description="Cut the content at this many bytes (on a UTF-8 boundary)."),
]


class Failure(Struct):
    code: Code
    message: str


class Envelope(Struct, omit_defaults=True, kw_only=True):
    """The fields every control result starts with; each command adds its own
    (all optional, so a failure carries only what it knows)."""

    ok: bool
    command: str
    schema_version: int
    error: Failure | UnsetType = UNSET
    warnings: list[str] | UnsetType = UNSET  # unknown arguments, named (views/server.py)


E = TypeVar("E", bound=Envelope)


def success(cls: type[E], command: str, **fields: Any) -> E:
    return cls(ok=True, command=command, schema_version=SCHEMA_VERSION, **fields)


def failure(cls: type[E], command: str, code: str, message: str, **fields: Any) -> E:
    return cls(ok=False, command=command, schema_version=SCHEMA_VERSION, error=Failure(code, message), **fields)


def admits_envelope(cmd: Command) -> bool:
    """Whether the control envelope is one of the command's declared results (else a failure
    of its own is answered by its message alone)."""
    return any(isinstance(tp, type) and issubclass(tp, Envelope) for tp in cmd.result_types)


def internal_failure(command: str, exc: BaseException) -> Envelope:
    """The answer of a command that raised unexpectedly, the same in both views. It names the
    kind of failure, never the exception's text: that may hold absolute paths or code internals
    (the traceback goes to stderr instead)."""
    if isinstance(exc, LinkRefused):  # the repository's doing, not a bug: its own message
        return failure(Envelope, command, "invalid_path", exc.strerror)
    if isinstance(exc, (OSError, sqlite3.OperationalError)):  # the system's refusal (permissions, a
        # read-only mount, a file swapped or removed under the command): named, not a bug
        return failure(Envelope, command, "io_error", f"`{command}` could not finish: {_os_reason(exc)}")
    return failure(Envelope, command, "internal_error",
                   f"Internal error in `{command}` ({type(exc).__name__}); the traceback is on repoctx's stderr "
                   "(for the CLI: run again with --debug)")


def _os_reason(exc: OSError | sqlite3.OperationalError) -> str:
    """The system's words for `exc` (a file named only by a relative path: never an absolute one)."""
    if not isinstance(exc, OSError):
        return f"the session database refused: {exc}"
    reason = exc.strerror or (os.strerror(exc.errno) if exc.errno else type(exc).__name__)
    name = exc.filename if isinstance(exc.filename, str) and not os.path.isabs(exc.filename) else None
    return f"{reason} ({name})" if name else reason


def is_failure(result: Envelope) -> bool:
    return not result.ok


def with_structured_invalid(commands: list[Command]) -> list[Command]:
    """The commands, each answering arguments that fail validation with an
    `invalid_argument` failure in the envelope (instead of plain text)."""
    return [dataclasses.replace(c, on_invalid=_on_invalid(c)) for c in commands]


def _on_invalid(cmd: Command) -> Callable[[object], Envelope]:
    def on_invalid(arguments: object) -> Envelope:
        try:
            msgspec.convert(arguments if arguments is not None else {}, cmd.params)
            message = "Invalid arguments"
        except msgspec.ValidationError as exc:
            message = f"Invalid arguments: {exc}"
        result: Envelope = failure(cmd.result, cmd.name, "invalid_argument", message)
        return result

    return on_invalid


def cut_utf8(data: bytes, max_bytes: int) -> tuple[str, bool]:
    """(at most `max_bytes` bytes of `data` as text, whether it was cut).

    The cut backs up over UTF-8 continuation bytes so no character is split.
    """
    if len(data) <= max_bytes:
        return data.decode("utf-8"), False
    end = max_bytes
    while end > 0 and data[end] & 0xC0 == 0x80:
        end -= 1
    return data[:end].decode("utf-8"), True
