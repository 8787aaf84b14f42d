"""The context format of one artifact: compact plain text at a detail level.

`meta` is the heading and the frontmatter fields; `summary` adds the first
section of the body; `full` adds the whole body. Used by mcp_show and by the
bundles of mcp_context, so an artifact reads the same everywhere.
"""

from __future__ import annotations

import re

from repoctx.artifacts.store import Artifact

HEADING = re.compile(r"^#{1,6}(\s|$)")
FENCE = re.compile(r"^\s*(```|~~~)")


def field_lines(m) -> list[str]:
    """The frontmatter as `name: value` lines; `m` is a Frontmatter or anything with its fields."""
    lines = [f"status: {m.status}"]
    if m.kind:
        lines.append(f"kind: {m.kind}")
    if m.description:
        lines.append(f"description: {m.description}")
    for name in ("links", "tags", "paths"):
        values = getattr(m, name)
        if values:
            lines.append(f"{name}: [{', '.join(values)}]")
    if m.assigned:
        lines.append(f"assigned: {m.assigned}")
    return lines


def first_section(body: str) -> str:
    """The text before the first heading, or, when the body opens with a heading,
    that heading and its text up to the next heading (fenced code is not scanned)."""
    lines = body.strip().splitlines()
    headings, fenced = [], False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and HEADING.match(line):
            headings.append(i)
    if not headings:
        return "\n".join(lines).strip()
    if headings[0] > 0:
        return "\n".join(lines[: headings[0]]).strip()
    end = headings[1] if len(headings) > 1 else len(lines)
    return "\n".join(lines[:end]).strip()


def body_part(a: Artifact, depth: str) -> str:
    if depth == "meta":
        return ""
    return a.body.strip() if depth == "full" else first_section(a.body)


def render(a: Artifact, depth: str, heading: str = "#", show_depth: bool = False) -> str:
    return compose(a.id, a.meta, body_part(a, depth), heading + " ", f" ({depth})" if show_depth else "")


def compose(artifact_id: str, m, body: str, heading: str = "# ", suffix: str = "") -> str:
    lines = [f"{heading}{artifact_id}: {m.title}{suffix}", *field_lines(m)]
    if body:
        lines += ["---", body]
    return "\n".join(lines)
