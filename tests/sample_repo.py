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
    (root / "src/util.py").write_text("def helper():\n    pass\n" * 800)
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
    return root


def add_control_data(root: Path) -> None:
    """A pending proposal and a recorded run, as an agent and `validate --run` leave them."""
    import time

    from repoctx import proposals, runs
    from repoctx.formats.run import Step
    from repoctx.workspace import Workspace

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
    from repoctx import caches
    from repoctx.workspace import Workspace

    built = caches.build(Workspace.open(root), caches.BuildParams(sources=str(root / "docs"), cache="docs"))
    assert built.document_count == 1, built


# Tool name -> arguments for one call that exercises it on the sample repository.
EXAMPLES: dict[str, dict] = {
    "list_contexts": {},
    "check_freshness": {"scope": "src/core"},
    "query_context": {"scope": "src/core", "filter": ["summary", "decisions"]},
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
    "ctxt_proposals_inspect_latest": {"max_bytes": 12000},
    "ctxt_proposals_inspect_latest_by_id": {"id": "latest", "max_bytes": 300},
    "ctxt_proposals_validate_latest": {},
    "ctxt_proposals_validate_latest_by_id": {"id": "latest"},
    "ctxt_agent_discover": {},
    "ctxt_runs_list": {},
    "ctxt_runs_read_latest": {"max_bytes": 12000},
}
