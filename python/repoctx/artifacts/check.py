"""mcp_check: the validation rules of a Contextia project.

Each rule belongs to one baseline (`links`, `schema`, `annotations`) and has a
default severity that `checks:` in config.yaml may change (or turn `off`).
Findings come out in a fixed order (rule order, then artifact order), so the
same files always give the same report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from msgspec import Struct

from repoctx.artifacts import session_logs, store
from repoctx.artifacts.store import Project
from repoctx.formats import artifact as fa

BASELINES = ("all", "links", "schema", "annotations")
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Rule:
    name: str
    baseline: str
    severity: str
    description: str


RULES = [
    Rule("invalid_config", "*", "error", "config.yaml cannot be read, or names an unknown rule (every baseline)"),
    Rule("malformed_frontmatter", "schema", "error", "a file whose frontmatter cannot be read"),
    Rule("missing_field", "schema", "error", "a required field is missing (id, title, status; kind for tasks)"),
    Rule("invalid_value", "schema", "error", "a status or kind outside the allowed values, or a glob that does not parse"),
    Rule("duplicate_id", "schema", "error", "two files declare the same id"),
    Rule("misplaced", "schema", "warning", "an id outside its type's directory, or a file not named after its id"),
    Rule("damaged_session", "schema", "error", "a session log whose session.yaml is missing or cannot be read"),
    Rule("broken_link", "links", "error", "`links` names an id that does not exist"),
    Rule("unknown_reference", "links", "error", "the body names an id that does not exist"),
    Rule("orphan_spec", "links", "warning", "a spec that no task links to"),
    Rule("unknown_annotation", "annotations", "error", "an annotation names an id that does not exist"),
    Rule("annotation_kind", "annotations", "error", "an annotation's kind does not match its id (`@decision SPEC-001`)"),
    Rule("unmatched_paths", "annotations", "warning", "a `paths` glob that matches no file"),
    Rule("unannotated_spec", "annotations", "info",
         "an approved or implemented spec that no annotation or `paths` glob ties to code"),
]
RULES_BY_NAME = {r.name: r for r in RULES}

MENTION = re.compile(r"(?<![A-Za-z0-9_-])(?:SPEC|DEC|NORM|TASK)-[A-Z0-9]+(?:-[A-Z0-9]+)*(?![A-Za-z0-9_])")
FENCE = re.compile(r"^\s*(```|~~~)")
KIND_PREFIX = {"spec": "SPEC", "decision": "DEC", "norm": "NORM"}


class Finding(Struct, omit_defaults=True):
    rule: str
    severity: str
    message: str
    file: str | None = None
    line: int | None = None


def _mentions(body: str) -> list[str]:
    """Ids named in the body outside fenced code, in order of first mention."""
    found: dict[str, None] = {}
    fenced = False
    for line in body.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            found.update(dict.fromkeys(MENTION.findall(line)))
    return list(found)


def run(project: Project, baseline: str) -> list[Finding]:  # noqa: C901 - one branch per rule, each a few lines
    """Every finding of the rules in `baseline` ("all" for every rule), errors first."""
    severity = {r.name: r.severity for r in RULES}
    findings: list[Finding] = []

    def add(rule: str, message: str, file: str | None = None, line: int | None = None) -> None:
        level = severity[rule]
        if level != "off" and (baseline == "all" or RULES_BY_NAME[rule].baseline in (baseline, "*")):
            findings.append(Finding(rule, level, message, file, line))

    config_file = f"{fa.CONTEXTIA_DIR}/{fa.CONFIG_FILE}"
    severity.update((k, v) for k, v in project.config.checks.items() if k in RULES_BY_NAME)
    if project.config_problem:
        add("invalid_config", project.config_problem, config_file)
    for name in project.config.checks:
        if name not in RULES_BY_NAME:
            add("invalid_config", f"config.yaml: unknown check rule '{name}' (rules: {', '.join(RULES_BY_NAME)})",
                config_file)

    known = set(project.by_id) | {u.id for u in project.unreadable}
    for u in project.unreadable:
        rule = "missing_field" if u.problem.startswith("missing required field") else "malformed_frontmatter"
        add(rule, u.message, u.file)
    artifacts = [a for a in project.artifacts if project.by_id[a.id] is a]
    for a in artifacts:
        if a.type.name == "task" and not a.meta.kind:
            add("missing_field", f"Error reading {a.id}: missing required field 'kind' in frontmatter ({a.file})", a.file)
    for a in artifacts:
        if a.meta.status not in a.type.statuses:
            add("invalid_value", f"{a.id}: status '{a.meta.status}' is not one of {', '.join(a.type.statuses)}", a.file)
        if a.type.name == "task" and a.meta.kind and a.meta.kind not in fa.TASK_KINDS:
            add("invalid_value", f"{a.id}: kind '{a.meta.kind}' is not one of {', '.join(fa.TASK_KINDS)}", a.file)
    globs, owners = project.path_owners
    for i in globs.invalid:
        a, pattern = owners[i]
        add("invalid_value", f"{a.id}: paths entry '{pattern}' is not a valid glob", a.file)
    for artifact_id, files in project.duplicates.items():
        add("duplicate_id", f"{artifact_id} is declared by {len(files)} files: {', '.join(files)}", files[0])
    for a in project.artifacts:
        directory = a.file.rsplit("/", 1)[0] + "/"
        if not directory.endswith("/" + a.type.directory + "/"):
            add("misplaced", f"{a.id} is in {directory} ({a.type.plural} belong in "
                f"{fa.CONTEXTIA_DIR}/{a.type.directory}/)", a.file)
        elif a.file.rsplit("/", 1)[1] != f"{a.id}.md":
            add("misplaced", f"{a.file} declares id {a.id} (name the file {a.id}.md)", a.file)
    for d in session_logs.damaged(project.root, project.base):
        add("damaged_session", d.message, d.file)

    linked_by_tasks = set()
    for a in artifacts:
        for target in a.meta.links:
            if target not in known:
                add("broken_link", f"{a.id} links to {target} which does not exist", a.file)
            if a.type.name == "task":
                linked_by_tasks.add(target)
    for a in artifacts:
        for target in _mentions(a.body):
            if target not in known and target not in a.meta.links:
                add("unknown_reference", f"{a.id} mentions {target} which does not exist", a.file)
    for a in project.of_type("spec"):
        if a.id not in linked_by_tasks and a.meta.status != "deprecated":
            add("orphan_spec", f"{a.id} is not linked to by any task (orphan spec)", a.file)

    if baseline in ("all", "annotations"):
        _annotation_rules(project, add, known, globs, owners)
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(findings, key=lambda f: order[f.severity])


def _annotation_rules(project: Project, add, known: set[str], globs, owners) -> None:
    index = store.source_index(project, fresh=True)
    annotated: set[str] = set()
    prefix = project.prefix
    for ann in index.annotations():
        artifact_id = store.target_id(ann.target)
        annotated.add(artifact_id)
        where = f"{ann.path}:{ann.line} {prefix}{ann.kind} {ann.target}"
        if artifact_id not in known:
            add("unknown_annotation", f"{where}: {artifact_id} does not exist", ann.path, ann.line)
        elif ann.kind in KIND_PREFIX and not artifact_id.startswith(KIND_PREFIX[ann.kind] + "-"):
            add("annotation_kind", f"{where}: a {ann.kind} annotation names {artifact_id}", ann.path, ann.line)
    invalid = set(globs.invalid)
    for i, ((a, pattern), count) in enumerate(zip(owners, index.match_counts(globs))):
        if count == 0 and i not in invalid:
            add("unmatched_paths", f"{a.id} paths '{pattern}' match no file", a.file)
    for a in project.of_type("spec"):
        if a.meta.status in ("approved", "implemented") and a.id not in annotated and not a.meta.paths:
            add("unannotated_spec", f"{a.id} has no annotations or paths tying it to code", a.file)
