"""mcp_context's budget, as properties over generated projects: the bundle never
exceeds the budget, more budget never gives less, parts are shortened in the
documented order and left out only when everything is at meta, the bundle says
what it shortened, and the same files always give the same bytes."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repoctx.artifacts import bundle
from repoctx.artifacts import tools as artifacts
from repoctx.base import tokens
from repoctx.base.workspace import Workspace

RANK = {None: 0, "meta": 1, "summary": 2, "full": 3}
WORDS = ["token", "session", "refresh", "provider", "rotation", "window", "limit", "user", "audit", "key"]


def _body(sizes: list[int]) -> str:
    sections = [" ".join(WORDS[(i + j) % len(WORDS)] for j in range(n + 1)) for i, n in enumerate(sizes)]
    return sections[0] + "".join(f"\n\n## Part {i}\n\n{s}" for i, s in enumerate(sections[1:], 1))


bodies = st.lists(st.integers(0, 120), min_size=1, max_size=4).map(_body)


@st.composite
def projects(draw) -> dict[str, str]:
    """Files of a project (relative to .contextia/) whose TASK-001 reaches every artifact."""
    files = {"system/identity.md": "# Project\n\n" + draw(bodies)}
    specs = [f"SPEC-{i:03d}" for i in range(1, draw(st.integers(0, 4)) + 1)]
    decisions = [f"DEC-{i:03d}" for i in range(1, draw(st.integers(0, 3)) + 1)]
    norms = [f"NORM-{i:03d}" for i in range(1, draw(st.integers(0, 3)) + 1)]
    dirs = {"SPEC": "system/specs", "DEC": "system/rationale", "NORM": "system/norms"}
    status = {"SPEC": "approved", "DEC": "accepted", "NORM": "active"}
    # Specs link on to the decisions and norms, so some are reached breadth first at depth 2.
    for i, a in enumerate(specs + decisions + norms):
        prefix = a.split("-")[0]
        links = (decisions + norms)[i % 2::2] if prefix == "SPEC" else []
        files[f"{dirs[prefix]}/{a}.md"] = (f"---\nid: {a}\ntitle: Title of {a}\nstatus: {status[prefix]}\n"
                                           f"links: [{', '.join(links)}]\n---\n\n{draw(bodies)}\n")
    task_links = specs + decisions[: draw(st.integers(0, len(decisions)))]
    files["work/tasks/TASK-001.md"] = (f"---\nid: TASK-001\ntitle: The task\nstatus: in_progress\nkind: feature\n"
                                       f"links: [{', '.join(task_links)}]\n---\n\n{draw(bodies)}\n")
    for n in range(draw(st.integers(0, 2))):
        base = f"work/logs/TASK-001/2026-01-0{n + 1}T10-00-00Z"
        files[f"{base}/session.yaml"] = (f"task: TASK-001\nstarted: '2026-01-0{n + 1}T10:00:00Z'\nstatus: closed\n"
                                         "closed: '2026-01-01T11:00:00Z'\nentries: 2\nduration_minutes: 60\n")
        for e in (1, 2):
            files[f"{base}/00{e}.md"] = f"---\nwritten: '2026-01-0{n + 1}T10:0{e}:00Z'\n---\n\n{draw(bodies)}\n"
    return files


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / ".contextia" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _context(root: Path, depth: str, budget: int) -> artifacts.ContextResult:
    return artifacts.context(Workspace.open(root), artifacts.ContextParams("TASK-001", depth, budget))


def _depths(r: artifacts.ContextResult) -> dict[str, str | None]:
    return {p.id: p.depth for p in r.parts}


def _check_one(r: artifacts.ContextResult, budget: int) -> None:
    assert r.tokens == tokens.bytes4(r.text) <= budget
    parts = {p.id: p for p in r.parts}
    dropped = [p for p in r.parts if p.depth is None]
    if dropped:  # leaving out starts only once everything left is at meta
        assert all(p.depth == "meta" for p in r.parts if p.depth is not None), r.parts
    order = list(bundle.DEGRADE_ORDER)
    lowered_groups = [order.index(p.group) for p in r.parts if RANK[p.depth] < RANK[p.requested]]
    if lowered_groups:  # every group before the last one touched is at meta or left out
        last = max(lowered_groups)
        assert all(RANK[p.depth] <= RANK["meta"] for p in r.parts if order.index(p.group) < last), r.parts
    assert r.shortened == [f"{p.id} ({p.requested} → {p.depth})" for p in r.parts
                           if p.depth is not None and p.depth != p.requested]
    assert r.left_out == [p.id for p in dropped]
    for line, items in (("shortened: ", r.shortened), ("left out: ", r.left_out)):
        assert (f"\n{line}{', '.join(items)}" in r.text) == bool(items)
    assert set(parts) >= {"TASK-001"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=projects(), depth=st.sampled_from(["meta", "summary", "full"]),
       budgets=st.lists(st.integers(1, 3000), min_size=2, max_size=6, unique=True))
def test_budget_is_never_exceeded_and_more_budget_never_gives_less(files, depth, budgets):
    with tempfile.TemporaryDirectory() as tmp:
        root = _write(Path(tmp) / "p", files)
        results = [(b, _context(root, depth, b)) for b in sorted(budgets)]
        for b, r in results:
            if not r.error:
                _check_one(r, b)
        for (b1, r1), (b2, r2) in itertools.pairwise(results):
            if not r1.error:
                assert not r2.error, (b1, b2, r2.error)
                assert r2.tokens >= r1.tokens
                d1, d2 = _depths(r1), _depths(r2)
                assert all(RANK[d2[k]] >= RANK[d1[k]] for k in d1), (b1, b2)
            elif not r2.error:
                assert "too small" in r1.error
        # Enough budget for everything: nothing shortened.
        full = _context(root, depth, 10**6)
        assert not full.shortened and not full.left_out


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=projects(), budget=st.integers(1, 3000))
def test_the_same_files_give_the_same_bundle(files, budget):
    with tempfile.TemporaryDirectory() as tmp:
        one = _write(Path(tmp) / "one", files)
        two = Path(tmp) / "elsewhere" / "two"
        shutil.copytree(one, two)
        a, b, c = _context(one, "summary", budget), _context(one, "summary", budget), _context(two, "summary", budget)
        assert a.text == b.text == c.text and a.error == b.error == c.error


def test_norms_give_way_before_specs_and_the_task_last(tmp_path):
    files = {
        "system/specs/SPEC-001.md": "---\nid: SPEC-001\ntitle: S\nstatus: approved\nlinks: [NORM-001]\n---\n\n"
        + "spec words " * 200,
        "system/norms/NORM-001.md": "---\nid: NORM-001\ntitle: N\nstatus: active\n---\n\n" + "norm words " * 200,
        "work/tasks/TASK-001.md": "---\nid: TASK-001\ntitle: T\nstatus: in_progress\nkind: bug\nlinks: [SPEC-001]\n"
        "---\n\n" + "task words " * 200,
    }
    root = _write(tmp_path, files)
    states = []  # each distinct (task, spec, norm) depths, from a large budget down to 1
    for budget in range(_context(root, "full", 10**6).tokens + 10, 0, -1):
        r = _context(root, "full", budget)
        state = "too small" if r.error else tuple(_depths(r)[k] for k in ("TASK-001", "SPEC-001", "NORM-001"))
        if not states or states[-1] != state:
            states.append(state)
    assert states == [
        ("full", "full", "full"),
        ("full", "full", "meta"),  # norms first
        ("full", "meta", "meta"),  # then specs (one section: summary is the full text, so straight to meta)
        ("meta", "meta", "meta"),  # the task last
        ("meta", "meta", None),  # leaving out only once all is at meta, in the same order
        ("meta", None, None),
        "too small",  # the task is never left out: a bundle without it would be a success with nothing
    ]
    tight = _context(root, "full", 70)
    assert "shortened: TASK-001 (full → meta), SPEC-001 (full → meta)\nleft out: NORM-001" in tight.text
