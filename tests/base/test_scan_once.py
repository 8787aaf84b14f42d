"""Within one reading (`one_reading`, the report's questions) each walk of the tree is made once,
and a walk that keeps each directory's files (the task index's cold load takes them rather than
list the tree again) is never answered by one that did not keep them."""

from __future__ import annotations

from repoctx.base import index
from repoctx.base.workspace import Workspace, one_reading
from sample_repo import build_sample_repo


def test_a_walk_keeping_its_files_is_not_answered_by_one_that_did_not(tmp_path):
    ws = Workspace.open(build_sample_repo(tmp_path / "repo"))
    cfg = ws.scan_config()
    with one_reading():
        plain = index.scan(ws, cfg)
        kept = index.scan(ws, cfg, keep_files=True)
        assert plain.files is None
        assert kept.files is not None
        assert [r.scope for r in kept.rows] == [r.scope for r in plain.rows]
        assert index.scan(ws, cfg) is plain
        assert index.scan(ws, cfg, keep_files=True) is kept
