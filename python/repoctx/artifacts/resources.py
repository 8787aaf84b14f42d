"""The Contextia resources (`contextia://identity`, `contextia://index`) and prompts
(`start_feature_task`, `start_bug_fix`, `end_session`)."""

from __future__ import annotations

import os

from repoctx.artifacts import store
from repoctx.artifacts.store import NoProject, Problem, find_artifact, load
from repoctx.base.command import Prompt, Resource, ResourceError
from repoctx.base.workspace import Workspace
from repoctx.formats import artifact as fa


def read_identity(ws: Workspace, _fields: dict[str, str]) -> str:
    try:
        project = store.open_project(ws)
    except NoProject as exc:
        raise ResourceError(-32002, str(exc)) from None
    if not project.identity:
        raise ResourceError(-32002, f"No project identity: write {fa.CONTEXTIA_DIR}/{fa.IDENTITY_FILE}")
    return project.identity + "\n"


def read_index(ws: Workspace, _fields: dict[str, str]) -> str:
    try:
        project = store.open_project(ws)
    except NoProject as exc:
        raise ResourceError(-32002, str(exc)) from None
    name = project.config.project or os.path.basename(project.root)
    lines = [f"# Contextia index: {name}"]
    for t in fa.TYPES.values():
        items = project.of_type(t.name)
        lines += ["", f"{t.plural} ({len(items)}):"]
        for a in items:
            facts = f"{a.meta.kind}, {a.meta.status}" if a.meta.kind else a.meta.status
            lines.append(f"- {a.id}: {a.meta.title} [{facts}]")
    if project.unreadable:
        lines += ["", f"unreadable ({len(project.unreadable)}):"] + [f"- {u.message}" for u in project.unreadable]
    return "\n".join(lines) + "\n"


def _task_line(ws: Workspace, task_id: str) -> str:
    try:
        a = find_artifact(load(ws), task_id, "task")
    except Problem as exc:
        return f"(Note: {exc})"
    return f"The task is {a.id}: {a.meta.title} ({a.meta.status})."


def _start_prompt(kind: str):
    def render(ws: Workspace, args: dict[str, str]) -> str:
        task_id = args.get("task_id", "")
        steps = [
            f"You are starting work on {kind} task {task_id}. {_task_line(ws, task_id)}",
            f"1. Call mcp_context(task_id=\"{task_id}\") and read the bundle: the task, its specs, decisions, "
            "norms and the prior session logs.",
            "2. Before changing a file, call mcp_trace(path) to see which specs and decisions govern it.",
        ]
        if kind == "bug":
            steps += ["3. Reproduce the bug with a failing test first; mark it `@test SPEC-xxx/<name>` when a spec "
                      "covers the behaviour.",
                      "4. Fix the cause, not the symptom; keep the annotations (`@spec`, `@decision`) next to the code "
                      "they describe."]
        else:
            steps += ["3. Implement against the acceptance criteria; annotate the code you write with "
                      "`@spec SPEC-xxx` (and `@decision`/`@norm` where they shaped it).",
                      "4. Add tests marked `@test SPEC-xxx/<name>`."]
        steps.append(f"5. Record progress, decisions and open questions with mcp_write_log(task_id=\"{task_id}\", "
                     "body=...) as you go.")
        return "\n".join(steps)

    return render


def _end_prompt(ws: Workspace, args: dict[str, str]) -> str:
    task_id = args.get("task_id", "")
    return "\n".join([
        f"You are ending the work session on {task_id}. {_task_line(ws, task_id)}",
        f"1. Write a last entry with mcp_write_log(task_id=\"{task_id}\", body=...) with sections "
        "## Summary, ## Decisions, ## Open questions and ## Files changed.",
        "2. Run mcp_check(baseline=\"annotations\") and fix any annotation that names a missing id.",
        f"3. Close the session with mcp_close_log(task_id=\"{task_id}\").",
    ])


TASK_ARG = (("task_id", "The task identifier, e.g. TASK-042", True),)

PROMPTS = [
    Prompt("start_feature_task", "Start work on a feature task: load its context, then implement and log.",
           TASK_ARG, _start_prompt("feature")),
    Prompt("start_bug_fix", "Start a bug fix: load the task's context, reproduce with a test, fix and log.",
           TASK_ARG, _start_prompt("bug")),
    Prompt("end_session", "End a work session: write the last log entry, check annotations, close the log.",
           TASK_ARG, _end_prompt),
]

RESOURCES = [
    Resource("contextia://identity", "identity", "What the project is: .contextia/system/identity.md.",
             "text/markdown", read_identity),
    Resource("contextia://index", "index", "Every spec, decision, norm and task with its title and status.",
             "text/plain", read_index),
]
