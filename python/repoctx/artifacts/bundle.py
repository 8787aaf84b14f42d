"""mcp_context: a task's context bundle within a token budget.

The bundle holds the task, the specs, decisions and norms it reaches through
`links` (breadth first, so direct links come first), the norms that apply to
every task (active norms without `paths`), the project identity and the task's
prior session logs. Linked artifacts start at the requested depth (the contract's
`depth` is the detail of linked artifacts); the task and the session logs at `full`,
so a log is cut to its last entry only when the budget asks for it.

When the text is over budget, a fixed ladder of steps is walked until it fits:
first each part's depth is lowered (full → summary → meta), one part at a time,
least important first — norms, then decisions, the identity, specs, session logs
(oldest first) and the task last, and within a group the part found last first;
then, in the same order, parts other than the task are left out (a budget too small for
the task at `meta` is an error, never a bundle without it). The first state of the ladder that
fits is the bundle, so a larger budget never gives less detail, and the same
files always give the same bundle. A closing section says what was shortened or
left out. Tokens are counted by the `tokenizer` of `.repoctx/config.yaml`
(see repoctx/tokens.py): ceil(UTF-8 bytes / 4) unless a BPE is chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from repoctx.artifacts import text as artifact_text
from repoctx.artifacts.session_logs import Session
from repoctx.artifacts.store import Artifact, Project
from repoctx.base import tokens
from repoctx.base.errors import RepoctxError

DEGRADE_ORDER = ("norm", "decision", "identity", "spec", "log", "task")
SHOWN_ORDER = ("task", "spec", "decision", "norm", "identity", "log")
HEADINGS = {
    "task": "### Task",
    "spec": "### Linked Specs",
    "decision": "### Linked Decisions",
    "norm": "### Applicable Norms",
    "identity": "### Project Identity",
    "log": "### Prior Session Logs",
}
LOWER = {"full": "summary", "summary": "meta"}


@dataclass
class Part:
    key: str  # an artifact id, "identity", or "session <start>"
    group: str
    texts: dict[str, str]  # depth -> the part's text
    contents: dict[str, str]  # depth -> what the depth adds (to tell equal depths apart)
    start: str  # the depth it starts at


@dataclass
class Bundle:
    text: str
    tokens: int
    depths: dict[str, str | None]  # part key -> final depth, None when left out
    parts: list[Part]
    shortened: list[str] = field(default_factory=list)  # "NORM-001 (full → meta)"
    left_out: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # linked ids that do not exist


class BudgetTooSmall(RepoctxError):
    def __init__(self, needed: int) -> None:
        super().__init__(str(needed))
        self.needed = needed


def reach(project: Project, task: Artifact) -> tuple[dict[str, list[Artifact]], list[str]]:
    """Specs, decisions and norms for the task, in importance order, and the missing link targets."""
    groups: dict[str, list[Artifact]] = {"spec": [], "decision": [], "norm": []}
    missing: list[str] = []
    seen = {task.id}
    queue = list(task.meta.links)
    while queue:
        target = queue.pop(0)
        if target in seen:
            continue
        seen.add(target)
        a = project.by_id.get(target)
        if a is None:
            missing.append(target)
        elif a.type.name in groups:
            groups[a.type.name].append(a)
            queue.extend(a.meta.links)
    for norm in project.of_type("norm"):
        if norm.id not in seen and norm.meta.status == "active" and not norm.meta.paths:
            groups["norm"].append(norm)
    return groups, missing


def _artifact_part(a: Artifact, group: str, start: str) -> Part:
    texts = {d: artifact_text.render(a, d, "####", show_depth=True) for d in ("full", "summary", "meta")}
    contents = {d: artifact_text.body_part(a, d) for d in texts}
    return Part(a.id, group, texts, contents, start)


def _task_part(task: Artifact) -> Part:
    texts, contents = {}, {}
    for d in ("full", "summary", "meta"):
        body = artifact_text.body_part(task, d)
        texts[d] = "\n".join(artifact_text.field_lines(task.meta) + (["---", body] if body else []))
        contents[d] = body
    return Part(task.id, "task", texts, contents, "full")


def _identity_part(identity: str, start: str) -> Part:
    first = identity.strip().splitlines()[0].lstrip("# ").strip()
    contents = {"full": identity.strip(), "summary": artifact_text.first_section(identity), "meta": first[:200]}
    return Part("identity", "identity", dict(contents), contents, start)


def _log_part(session: Session, latest: bool) -> Part:
    r = session.record
    n = len(session.entries)
    facts = ["latest"] if latest else []
    facts += [r.status, f"{n} entr{'y' if n == 1 else 'ies'}"]
    if r.duration_minutes is not None:
        facts.append(f"{r.duration_minutes} minute{'' if r.duration_minutes == 1 else 's'}")
    head = f"Session {session.label} ({', '.join(facts)})"
    entries = [f"[{e.written}]\n{e.body}" for e in session.entries]
    contents = {
        "full": "\n".join(entries),
        "summary": entries[-1] if entries else "",
        "meta": "",
    }
    texts = {d: head + (":\n" + c if c else "") for d, c in contents.items()}
    return Part(f"session {session.label}", "log", texts, contents, "full")


def _render(header: str, parts: list[Part], depths: dict[str, str | None], budget: int,
            missing: list[str]) -> tuple[str, list[str], list[str]]:
    sections = [header]
    for group in SHOWN_ORDER:
        shown = [p.texts[depths[p.key]] for p in parts if p.group == group and depths[p.key] is not None]
        if shown:
            sections.append(HEADINGS[group] + "\n" + "\n\n".join(shown))
    shortened = [
        f"{p.key} ({p.start} → {depths[p.key]})" for p in parts if depths[p.key] not in (None, p.start)
    ]
    left_out = [p.key for p in parts if depths[p.key] is None]
    note = [f"### Bundle\nbudget: {budget} tokens"]
    if shortened:
        note.append("shortened: " + ", ".join(shortened))
    if left_out:
        note.append("left out: " + ", ".join(left_out))
    if missing:
        note.append("missing links: " + ", ".join(missing))
    sections.append("\n".join(note))
    return "\n\n".join(sections), shortened, left_out


def _ladder(parts: list[Part]) -> list[tuple[str, str | None]]:
    """The steps, in order: (part key, new depth or None to leave it out)."""
    steps: list[tuple[str, str | None]] = []
    by_group = {g: [p for p in parts if p.group == g] for g in DEGRADE_ORDER}
    for group in DEGRADE_ORDER:
        for p in reversed(by_group[group]):
            depth = p.start
            while depth in LOWER:
                lower = LOWER[depth]
                if p.contents[lower] != p.contents[depth]:
                    steps.append((p.key, lower))
                depth = lower
    for group in DEGRADE_ORDER:  # the task itself is never left out: a bundle without it is no answer
        steps += [(p.key, None) for p in reversed(by_group[group]) if group != "task"]
    return steps


def assemble(project: Project, task: Artifact, depth: str, budget: int, sessions: list[Session],
             count: Callable[[str], int] = tokens.bytes4) -> Bundle:
    """The bundle for `task` within `budget` tokens as `count` counts them (raises BudgetTooSmall)."""
    groups, missing = reach(project, task)
    parts = [_task_part(task)]
    for group in ("spec", "decision", "norm"):
        parts += [_artifact_part(a, group, depth) for a in groups[group]]
    if project.identity:
        parts.append(_identity_part(project.identity, depth))
    parts += [_log_part(s, i == 0) for i, s in enumerate(sessions)]
    header = f"## Context for {task.id}: {task.meta.title}"
    depths: dict[str, str | None] = {p.key: p.start for p in parts}
    steps = iter(_ladder(parts))
    while True:
        text, shortened, left_out = _render(header, parts, depths, budget, missing)
        used = count(text)
        if used <= budget:
            return Bundle(text, used, dict(depths), parts, shortened, left_out, missing)
        step = next(steps, None)
        if step is None:
            raise BudgetTooSmall(used)
        depths[step[0]] = step[1]
