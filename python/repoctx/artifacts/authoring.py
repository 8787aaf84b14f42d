"""Authoring a Contextia project from the command line: `repoctx artifacts init`
creates the layout, `repoctx artifacts new` adds an artifact with the next free id
(chosen and written under a lock, so concurrent runs never share one)."""

from __future__ import annotations

import os
import re
from typing import Annotated

from msgspec import Meta, Struct

from repoctx.artifacts import store
from repoctx.artifacts.store import Problem, Project, choose, load
from repoctx.base import fs
from repoctx.base.workspace import Workspace, atomic_write, locked
from repoctx.formats import artifact as fa

TYPE_NAMES = tuple(fa.TYPES)


class InitParams(Struct):
    project: Annotated[str | None, Meta(description="Project name (default: the root directory's name)")] = None


class InitResult(Struct, omit_defaults=True):
    root: str
    created: list[str] = []
    error: str | None = None


def init(ws: Workspace, p: InitParams) -> InitResult:
    out = InitResult(ws.root)
    base = os.path.join(ws.root, fa.CONTEXTIA_DIR)
    if os.path.lexists(base) and not (os.path.isdir(base) and ws.contains_real(base)):
        out.error = f"{fa.CONTEXTIA_DIR} exists and is not a directory inside the project; not touched"
        return out
    directories = [t.directory for t in fa.TYPES.values()] + [fa.LOGS_DIR]
    for directory in directories:  # all checked before any is made: a link out must not get a tree there
        if not ws.contains_real(os.path.join(base, directory)):
            out.error = _outside(f"{fa.CONTEXTIA_DIR}/{directory}")
            return out
    for directory in directories:
        rel = f"{fa.CONTEXTIA_DIR}/{directory}"
        if not fs.is_dir(ws.root, rel):
            fs.makedirs(ws.root, rel)
            out.created.append(f"{rel}/")
    name = p.project or os.path.basename(ws.root)
    starters = {
        fa.CONFIG_FILE: f"project: {_yaml_scalar(name)}\nsource_paths: [\".\"]\ntest_paths: []\n"
                        "annotation_prefix: \"@\"\n# checks: {orphan_spec: info}   # rule -> error | warning | info | off\n",
        # A starter the person rewrites, so that `contextia://identity`, listed with the
        # project, can be read from the start.
        fa.IDENTITY_FILE: IDENTITY_STARTER.format(name=" ".join(name.split()) or "This project"),
    }
    with locked(ws.root):  # each made only when absent: the check and the write one step
        for rel, text in starters.items():
            path = os.path.join(base, rel)
            if fs.lstat(*fs.split(path)) is None:
                atomic_write(path, text.encode())
                out.created.append(f"{fa.CONTEXTIA_DIR}/{rel}")
    return out


IDENTITY_STARTER = """\
# {name}

<!-- Written by `repoctx artifacts init`: replace it with what this project is. Agents read it
(`contextia://identity`) at the start of every task, so keep it short and true. -->

What {name} is, who it is for, and what it deliberately does not do.
"""


def _outside(rel: str) -> str:
    return f"Invalid path '{rel}': it leads outside the project"  # the documented artifacts error


def _yaml_scalar(value: str) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def text_init(r: InitResult) -> str:
    if r.error:
        return r.error
    if not r.created:
        return f"The Contextia project in {r.root} is already set up; nothing created."
    return "\n".join([f"Created in {r.root}:", *(f"  {c}" for c in r.created),
                      "Next: say what the project is in .contextia/system/identity.md (a starter is there) "
                      "and add artifacts with "
                      "`repoctx artifacts new spec --title ...`."])


TEMPLATES = {
    "spec": "## Summary\n\nWhat this spec requires, in a paragraph.\n\n## Requirements\n\n- \n",
    "decision": "## Context\n\nWhat forced a choice.\n\n## Decision\n\nWhat was chosen.\n\n## Consequences\n\n- \n",
    "norm": "## Rule\n\nThe rule, in a sentence.\n\n## Why\n\n",
    "task": "## Objective\n\nWhat this task delivers.\n\n## Acceptance criteria\n\n- \n",
}


class NewParams(Struct):
    type: Annotated[str, Meta(description="spec, decision, norm or task")]
    title: Annotated[str, Meta(description="The artifact's title")]
    kind: Annotated[str | None, Meta(description="Task kind: feature, bug, chore or spike (default: feature)")] = None


class NewResult(Struct, omit_defaults=True):
    id: str | None = None
    type: str | None = None
    title: str | None = None
    file: str | None = None
    error: str | None = None


def _next_id(t: fa.ArtifactType, directory: str, project: Project) -> str:
    taken = {a.id for a in project.artifacts} | {u.id for u in project.unreadable}
    taken |= {n[:-3] for n in fs.listdir(*fs.split(directory)) if n.endswith(".md")}
    numbers = [int(i.split("-", 1)[1]) for i in taken if re.fullmatch(rf"{t.prefix}-\d+", i)]
    return f"{t.prefix}-{max(numbers, default=0) + 1:03d}"


def new(ws: Workspace, p: NewParams) -> NewResult:
    try:
        project = load(ws)
        choose("type", p.type, TYPE_NAMES)
        if p.kind is not None:
            if p.type != "task":
                raise Problem("Invalid kind: only tasks have a kind")
            choose("kind", p.kind, fa.TASK_KINDS)
        if not p.title.strip():
            raise Problem("Invalid title: it is empty")
    except Problem as exc:
        return NewResult(error=str(exc))
    t = fa.TYPES[p.type]
    directory = os.path.join(project.base, t.directory)
    if not ws.contains_real(directory):  # a link that leads out: the artifact would be written there
        return NewResult(error=_outside(f"{fa.CONTEXTIA_DIR}/{t.directory}"))
    fs.makedirs(*fs.split(directory))
    # The lock makes "next free id" and the write one step across processes.
    with locked(ws.root):
        artifact_id = _next_id(t, directory, store.open_project(ws))
        data = {"id": artifact_id, "title": p.title.strip(), "status": t.statuses[0]}
        if p.type == "task":
            data["kind"] = p.kind or "feature"
        data |= {"tags": [], "links": []} | ({} if p.type == "task" else {"paths": []})
        path = os.path.join(directory, f"{artifact_id}.md")
        atomic_write(path, (fa.render_frontmatter(data) + "\n" + TEMPLATES[p.type]).encode())
    rel = os.path.relpath(path, ws.root).replace(os.sep, "/")
    return NewResult(artifact_id, p.type, p.title.strip(), rel)


def text_new(r: NewResult) -> str:
    return r.error or f"Created {r.id}: {r.title} ({r.file})"
