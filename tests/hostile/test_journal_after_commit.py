"""After the commit point (issue 32, item 9): an I/O error injected into any rename, removal or
directory sync of `proposals apply` once its journal says `C` left the proposal half applied,
marked applied, with no journal. Now the journal stays until every step is done: the apply
answers with the error, and the next command (workspace.settle, as every command and request
runs first) finishes it: every file new, the proposal applied, no journal, no staged file."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import msgspec

from repoctx.base import journal
from repoctx.base.workspace import Workspace, settle
from repoctx.control import proposals
from sample_repo import build_sample_repo

FILES = ["src/core/.context.yaml", "src/.context.yaml", "docs/.context.yaml"]


def _propose(ws: Workspace) -> str:
    """A proposal changing two context files and making a third."""
    ops = [{"op": "replace", "path": rel, "old": "summary: ", "new": "summary: Changed. "} for rel in FILES[:2]]
    ops.append({"op": "write", "path": FILES[2], "content": Path(ws.root, FILES[0]).read_text()})
    made = proposals.propose(ws, proposals.ProposeParams(
        title="three files", rationale="r", operations=[msgspec.convert(o, proposals.Operation) for o in ops]))
    assert made.ok, made
    return made.proposal.id


class Injector:
    """Counts the steps after the commit point (os.replace, os.unlink, os.fsync: what the
    journal does there) and fails step number `fail_at` with an I/O error."""

    def __init__(self, monkeypatch, fail_at: int | None = None) -> None:
        self.steps: list[str] = []
        self.committed, self.fail_at = False, fail_at
        real_write = os.write

        def write(fd, data):  # the commit point: the state byte written over the journal's first
            self.committed |= bytes(data) == journal.COMMITTED
            return real_write(fd, data)

        monkeypatch.setattr(os, "write", write)
        for name in ("replace", "unlink", "fsync"):
            monkeypatch.setattr(os, name, self._step(name, getattr(os, name)))

    def _step(self, name, real):
        def step(*args, **kwargs):
            if self.committed:
                self.steps.append(name)
                if len(self.steps) - 1 == self.fail_at:
                    raise OSError(errno.EIO, "Input/output error (injected)")
            return real(*args, **kwargs)

        return step


def _applied(ws: Workspace) -> dict[str, bytes]:
    """What the three files hold once the proposal is applied, from what they hold before."""
    old = {rel: Path(ws.root, rel).read_bytes() for rel in FILES[:2]}
    return {**{rel: text.replace(b"summary: ", b"summary: Changed. ", 1) for rel, text in old.items()},
            FILES[2]: old[FILES[0]]}


def _apply(ws: Workspace, pid: str):
    return proposals.apply(ws, proposals.ApplyParams(id=pid))


def test_an_error_at_any_step_after_the_commit_point_is_finished_by_the_next_command(tmp_path, monkeypatch):
    clean = Workspace.open(build_sample_repo(tmp_path / "clean"))
    pid, want = _propose(clean), _applied(clean)
    with monkeypatch.context() as m:
        steps = Injector(m).steps
        assert _apply(clean, pid).ok
    assert {rel: Path(clean.root, rel).read_bytes() for rel in FILES} == want
    assert steps.count("replace") == len(FILES) + 1, steps  # each file and the proposal's record
    failed = 0
    for k in range(len(steps)):
        ws = Workspace.open(build_sample_repo(tmp_path / f"r{k}"))
        pid, want = _propose(ws), _applied(ws)
        with monkeypatch.context() as m:
            Injector(m, fail_at=k)
            result = _apply(ws, pid)
        if not result.ok:
            failed += 1
            assert result.error.code == "io_error", result
            assert "the next command finishes it" in result.error.message, result.error.message
            assert journal.pending(ws.root), k  # the journal stays until every step is done
        settle(ws.root)  # what the next command does first
        assert not journal.pending(ws.root), k
        assert {rel: Path(ws.root, rel).read_bytes() for rel in FILES} == want, k
        listed = proposals.proposals_list(ws, proposals.ListParams())
        assert [p.status for p in listed.proposals if p.id == pid] == ["applied"], k
        assert not list(Path(ws.root).rglob(".repoctx-txn-*")), k
    print(f"{len(steps)} steps after the commit point, each failed once: {failed} applies answered the error, "
          f"0 half applied after the next command")
    assert failed >= len(FILES) + 1
