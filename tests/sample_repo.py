"""A small repository with data for every surface, shared by the parity and
black-box tests. Each surface adds what it needs to `build_sample_repo` and an
example call to EXAMPLES."""

from __future__ import annotations

from pathlib import Path

import msgspec

from repoctx import _core

CONTEXT = """\
version: 1
last_updated: "2026-02-13T10:00:00Z"
fingerprint: "{fingerprint}"
scope: "{scope}"
summary: "{summary}"
maintenance: "Keep this file current when the directory changes."
decisions:
  - what: "Fingerprint uses stat() only"
    why: "Performance"
"""


def write_context(root: Path, scope: str, summary: str, fingerprint: str | None = None) -> Path:
    directory = root / scope
    fp = fingerprint or _core.fingerprint(str(directory))
    path = directory / ".context.yaml"
    path.write_text(CONTEXT.format(fingerprint=fp, scope=scope, summary=summary))
    return path


PROJECT_YAML = """\
version: 1
project:
  name: sample
  type: library
  path: .
tech:
  stack: [Python]
  runtime: Python >=3.11
  package_manager: pip
architecture:
  pattern: modular
  description: An engine and its helpers.
modules:
  core:
    description: The engine.
    path: src/core
    key_files:
      - path: src/core/engine.py
        role: core
    patterns: [run() returns plain values]
  docs:
    description: How to use it.
    path: docs
metadata:
  created: "2026-02-13T10:00:00Z"
  updated: "2026-02-13T10:00:00Z"
  last_scan: "2026-02-13T10:00:00Z"
"""


def build_sample_repo(root: Path) -> Path:
    (root / "src/core").mkdir(parents=True)
    (root / "src/core/engine.py").write_text('"""The engine."""\n\ndef run():\n    return 1\n' * 300)
    (root / "src/util.py").write_text("# @spec SPEC-001\n" + "def helper():\n    pass\n" * 800)
    (root / "docs").mkdir()
    (root / "docs/guide.md").write_text("# Guide\n\nHow to use it.\n" * 700)
    (root / ".context.config.yaml").write_text("provider: anthropic\nmin_tokens: 1024\n")
    (root / "README.md").write_text("# Sample\n")
    write_context(root, ".", "The sample repository.")
    write_context(root, "src/core", "Core engine.")
    write_context(root, "src", "Sources.", fingerprint="00000000")  # stale on purpose
    (root / ".repoctx").mkdir()
    (root / ".repoctx/project.yaml").write_text(PROJECT_YAML)
    add_cache(root)
    # Serve every surface's tools, whichever have data here (the default is only those that do).
    (root / ".repoctx/config.yaml").write_text("profile: all\nkeep_runs: 20\n")
    add_control_data(root)
    add_artifacts(root)
    return root


ARTIFACTS = {
    "config.yaml": "project: sample\n",
    "system/identity.md": "# Sample\n\nAn engine and its helpers, served to agents by repoctx.\n",
    "system/specs/SPEC-001.md": "---\nid: SPEC-001\ntitle: Engine helpers\nstatus: approved\ntags: [engine]\n"
    "links: [DEC-001, NORM-001]\npaths: [src/*.py]\n---\n\nHelpers return plain values so the engine stays "
    "pure.\n\n## Details\n\n- helper() never raises.\n",
    "system/rationale/DEC-001.md": "---\nid: DEC-001\ntitle: Plain values over objects\nstatus: accepted\n---\n\n"
    "Plain values serialise for free.\n",
    "system/norms/NORM-001.md": "---\nid: NORM-001\ntitle: No I/O in helpers\nstatus: active\n---\n\n"
    "Helpers do no I/O.\n",
    "work/tasks/TASK-001.md": "---\nid: TASK-001\ntitle: Wire helpers into the engine\nstatus: in_progress\n"
    "kind: feature\nlinks: [SPEC-001]\nassigned: agent\n---\n\n## Objective\n\nCall helper() from run().\n",
    "work/tasks/TASK-002.md": "---\nid: TASK-002\ntitle: Fix the guide's typos\nstatus: backlog\nkind: bug\n---\n",
    "work/logs/TASK-001/2026-02-28T14-30-00Z/session.yaml": "task: TASK-001\nstarted: '2026-02-28T14:30:00Z'\n"
    "status: closed\nclosed: '2026-02-28T15:15:00Z'\nentries: 1\nduration_minutes: 45\n",
    "work/logs/TASK-001/2026-02-28T14-30-00Z/001.md": "---\nwritten: '2026-02-28T14:30:00Z'\n---\n\n"
    "## Summary\nRead the engine; helper() is unused.\n",
}


def add_artifacts(root: Path) -> None:
    """A Contextia project: a spec, decision, norm, two tasks, a closed session log; src/util.py is annotated."""
    for rel, text in ARTIFACTS.items():
        path = root / ".contextia" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def add_control_data(root: Path) -> None:
    """A pending proposal and a recorded run, as an agent and `validate --run` leave them."""
    import time

    from repoctx.base.workspace import Workspace
    from repoctx.control import proposals, runs
    from repoctx.formats.run import Step

    ws = Workspace.open(root)
    made = proposals.propose(ws, proposals.ProposeParams(
        title="Say what the docs cover",
        rationale="The guide explains usage; the docs scope has no context yet.",
        operations=[msgspec.convert({"op": "write", "path": "docs/.context.yaml", "content": CONTEXT.format(
            fingerprint="00000000", scope="docs", summary="How to use the sample — ünïcödé guide.")},
            proposals.Operation)],
    ))
    assert made.ok, made
    step = Step(name="scopes.context_files", surface="scopes", status="warn",
                message="3 context files valid, 1 stale", duration_ms=1.5, problems=["src/.context.yaml: stale"])
    runs.record(ws, "validate", [step], time.time(), 2.0)


def add_cache(root: Path) -> None:
    """A context cache of the docs under the default cache root: .repoctx/caches/docs."""
    from repoctx.base.workspace import Workspace
    from repoctx.caches import engine as caches

    built = caches.build(Workspace.open(root), caches.BuildParams(sources=str(root / "docs"), cache="docs"))
    assert built.document_count == 1, built


# Tool name -> arguments for one call that exercises it on the sample repository.
EXAMPLES: dict[str, dict] = {
    "list_contexts": {},
    "check_freshness": {"scope": "src/core"},
    "query_context": {"scope": "src/core", "filter": ["summary", "decisions"]},
    "update_context": {"scope": "src/core", "fields": {"todos": ["Cache parsed jobs"]}},
    "context_resolve": {"cache": "docs", "query": "Guide usage", "budget": 8000},
    "context_list_caches": {},
    "context_inspect_cache": {"cache": "docs"},
    "add_discovery": {"module": "core", "type": "pattern", "content": "Keep run() free of I/O"},
    "ctxt_self_report": {},
    "ctxt_schema": {},
    "ctxt_capabilities": {},
    "ctxt_validate_run": {"run": True},
    "propose_change": {
        "title": "Name the engine's entry point",
        "rationale": "Agents keep asking where execution starts.",
        "operations": [{"op": "replace", "path": "src/core/.context.yaml",
                        "old": 'summary: "Core engine."', "new": 'summary: "Core engine; run() is the entry point."'}],
    },
    "ctxt_proposals_list": {},
    "ctxt_proposals_inspect_latest": {},
    "ctxt_proposals_inspect_latest_by_id": {},
    "ctxt_proposals_validate_latest": {},
    "ctxt_proposals_validate_latest_by_id": {},
    "ctxt_agent_discover": {},
    "ctxt_runs_list": {},
    "ctxt_runs_read_latest": {},
    "mcp_show": {"artifact_id": "SPEC-001", "format": "full"},
    "mcp_search": {"query": "helper engine", "limit": 5},
    "mcp_list": {"type": "spec", "status": "approved"},
    "mcp_trace": {"path": "src/util.py"},
    "mcp_find_by_path": {"file_path": "src/*.py"},
    "mcp_context": {"task_id": "TASK-001", "depth": "summary", "budget": 2000},
    "mcp_check": {"baseline": "all"},
    "mcp_show_task": {"task_id": "TASK-001"},
    "mcp_list_tasks": {"status": "in_progress"},
    "mcp_read_log": {"task_id": "TASK-001", "latest": False, "n": 2},
    "mcp_write_log": {"task_id": "TASK-001", "body": "Wired helper() into run()."},
    "mcp_close_log": {"task_id": "TASK-002"},  # no open session: the same error both ways
    "task_context": {"task": "Call helper() from the engine's run()", "budget": 600, "paths": ["src/core/engine.py"],
                     "signals_off": ["history"], "limit": 5},
    "file_outline": {"path": "src/core/engine.py"},
}
