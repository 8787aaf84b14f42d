"""The heads of context files (what a listing needs of each) and their memo across runs.

`repoctx status` on a large repository would spend a fifth of its time parsing thousands of
`.context.yaml` files that did not change since the last run. Their heads are kept in the
user's cache directory, keyed by each file's (mtime ns, size) as the walk saw it, so a run
parses only the files that moved. Like git's index, an entry is trusted only when the file
was last modified well before the memo was written: a file rewritten within the same clock
tick with the same size would otherwise keep its old head.
"""

from __future__ import annotations

import hashlib
import os

import msgspec
from msgspec import Struct

from repoctx import __version__
from repoctx.base.workspace import is_racy
from repoctx.formats import context_file as cf
from repoctx.scopes import gitstate


class Head(Struct, array_like=True, gc=False, tag=0):
    """What a listing needs of a valid context file; the rest is read again by query_context,
    so a serving process keeps tens of bytes per scope instead of the whole parsed file."""

    fingerprint: str
    last_updated: str
    summary: str
    commit: str | None  # the commit repoctx recorded in `evidence`, if it wrote it

    @classmethod
    def of(cls, ctx: cf.ContextFile) -> Head:
        return cls(ctx.fingerprint, ctx.last_updated, ctx.summary, gitstate.recorded_commit(ctx.evidence))


class Invalid(Struct, array_like=True, frozen=True, gc=False, tag=1):
    """Why a context file cannot be used, as reading it found; kept beside the heads so that
    every door says why without parsing the file again."""

    # How the core read it: "json" (YAML against the schema), "invalid" (not YAML, or a link
    # out), "too_large", "missing" (gone since the walk).
    read: str
    detail: str  # the reader's or the schema's words
    field: str = ""  # the schema field at fault, when one is named
    version: int | float | None = None  # the schema version found, when newer than this tool reads
    line: int = 0  # where the YAML reader refused the file (from 1); 0 when it did not
    column: int = 0  # on that line, from 1, in characters

    def at(self, path: str) -> str:
        """`path:line:column: what is wrong`, as compilers name a place (`path: …` without one)."""
        where = f":{self.line}:{self.column}" if self.line else ""
        return f"{path}{where}: {self.detail}"


# Scope -> (mtime ns, size, the file's head or why it has none).
Memo = dict[str, tuple[int, int, Head | Invalid]]
_decoder = msgspec.msgpack.Decoder(Memo)


def _memo_path(root: str) -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    key = hashlib.sha256(os.fsencode(root)).hexdigest()[:24]
    # The version in the name: another release may shape heads differently.
    return os.path.join(base, "repoctx", f"heads-{__version__}-{key}.msgpack")


def load(root: str) -> Memo:
    """The memo of `root`, or an empty one when there is none or it cannot be read."""
    try:
        with open(_memo_path(root), "rb") as fh:
            return _decoder.decode(fh.read())
    except (OSError, msgspec.DecodeError):
        return {}


def save(root: str, memo: Memo) -> None:
    """Write the memo, leaving out entries too recent to trust; a failure only costs the next
    run its speed, so it is ignored."""
    kept = {scope: entry for scope, entry in memo.items() if not is_racy(entry[0])}
    path = _memo_path(root)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(msgspec.msgpack.encode(kept))
        # Renamed whole, so a concurrent run reads the old memo or the new one; no fsync:
        # a memo lost to a crash is rebuilt by the next run.
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
