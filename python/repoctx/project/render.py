"""Markdown of the project contract's resources (docs/project-resources.md).

Each function follows the contract's content structure line for line,
including its two-space hard line breaks. An empty list reads "None" (the
contract's own wording for dependencies). `fit` keeps a response under the
contract's size limit by cutting at a line and saying so.
"""

from __future__ import annotations

from datetime import datetime

from repoctx.base import clock
from repoctx.formats.project_file import Module, ProjectFile
from repoctx.project.store import SessionRow

KB = 1024
OVERVIEW_MAX = 50 * KB
MODULE_MAX = 20 * KB
SESSION_MAX = 10 * KB
RECENT_MAX = 50 * KB
TOP_FILES = 10


def fit(text: str, max_bytes: int, hint: str) -> str:
    """`text` if it fits in `max_bytes` of UTF-8; else its longest prefix of whole lines that
    leaves room for a note saying how much was cut and where to read the rest."""
    data = text.encode()
    if len(data) <= max_bytes:
        return text
    note = f"\n\n---\n*Truncated: {len(data):,} bytes exceed this resource's {max_bytes // KB} KB limit. {hint}*"
    budget = max_bytes - len(note.encode())
    cut = data[:budget].decode("utf-8", "ignore")
    cut = cut[: cut.rfind("\n")] if "\n" in cut else cut
    return cut.rstrip() + note


def _lines(items: list[str]) -> list[str]:
    """A bullet list; continuation lines of multi-line items stay inside their bullet."""
    if not items:
        return ["None"]
    return ["- " + item.strip().replace("\n", "\n  ") for item in items]


def overview(pf: ProjectFile) -> str:
    p, t, a = pf.project, pf.tech, pf.architecture
    out = [
        f"# Project: {p.name}",
        "",
        f"**Type:** {p.type}  ",
        f"**Path:** {p.path}",
        "",
        "## Tech Stack",
        "",
        f"- **Stack:** {', '.join(t.stack)}",
        f"- **Runtime:** {t.runtime}",
        f"- **Package Manager:** {t.package_manager}",
        "",
        "## Architecture",
        "",
        f"**Pattern:** {a.pattern}  ",
        f"**Description:** {a.description}",
        "",
        f"## Modules ({len(pf.modules)})",
    ]
    for name, m in pf.modules.items():
        out += ["", f"### {name}"]
        if m.description:
            out.append(m.description.strip())
        out += ["", "**Key Files:**"]
        out += [f"- {f.path} ({f.role})" for f in m.key_files] or ["None"]
        out += [
            "",
            f"**Patterns:** {len(m.patterns)}  ",
            f"**Business Rules:** {len(m.business_rules)}  ",
            f"**Common Issues:** {len(m.common_issues)}",
        ]
    return fit("\n".join(out) + "\n", OVERVIEW_MAX, "Read context://module/{name} for each module.")


def module(name: str, m: Module, uri: str) -> str:
    out = [f"# Module: {name}", ""]
    if m.description:
        out += [m.description.strip(), ""]
    out += ["## Key Files", ""]
    for f in m.key_files:
        out += [f"### {f.path}", f"**Role:** {f.role}" + ("  " if f.description else "")]
        if f.description:
            out.append(f.description.strip())
        out.append("")
    if not m.key_files:
        out += ["None", ""]
    for title, items in (("Patterns", m.patterns), ("Business Rules", m.business_rules)):
        out += [f"## {title} ({len(items)})", "", *_lines(items), ""]
    out += [f"## Common Issues ({len(m.common_issues)})", ""]
    for issue in m.common_issues:
        out += [f"### {issue.description.strip()}", f"**Solution:** {issue.solution.strip()}" + ("  " if issue.discovered_at or issue.session_id else "")]
        if issue.discovered_at or issue.session_id:
            session = f" (Session: {issue.session_id})" if issue.session_id else ""
            out.append(f"**Discovered:** {issue.discovered_at or 'unknown'}{session}")
        out.append("")
    if not m.common_issues:
        out += ["None", ""]
    if m.decisions:  # not in the contract's structure: shown only for modules that have some
        out += [f"## Decisions ({len(m.decisions)})", "", *_lines(m.decisions), ""]
    out += ["## Dependencies", "", ", ".join(m.dependencies) or "None"]
    return fit("\n".join(out) + "\n", MODULE_MAX, f"The full module is in .repoctx/project.yaml ({uri}).")


def duration(start: str, end: str | datetime) -> str:
    """"2 hours 15 minutes": the two largest units, or "less than a minute"."""
    end_dt = end if isinstance(end, datetime) else clock.parse(end)
    seconds = max(0, int((end_dt - clock.parse(start)).total_seconds()))
    parts = []
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        n, seconds = divmod(seconds, size)
        if n:
            parts.append(f"{n} {unit}{'s' if n != 1 else ''}")
    return " ".join(parts[:2]) or "less than a minute"


def _session_end(s: SessionRow, now: datetime) -> str | datetime:
    return s.ended_at or now


def session(s: SessionRow, files: list[tuple[str, int, str]], title: str, now: datetime) -> str:
    """The contract's current-session page; `files` are the most accessed first."""
    out = [
        f"# {title}",
        "",
        f"**Started:** {s.started_at}  ",
        f"**Duration:** {duration(s.started_at, _session_end(s, now))}  ",
        f"**Status:** {s.status}",
        "",
        f"## Files Accessed ({s.files})",
        "",
    ]
    for path, count, last in files[:TOP_FILES]:
        out += [f"### {path}", f"**Access Count:** {count}  ", f"**Last Accessed:** {last}", ""]
    if not files:
        out += ["None", ""]
    out += [f"## Topics ({len(s.topics)})", "", *_lines(list(s.topics)), ""]
    out += [
        "## Activity Summary",
        "",
        f"- **Tool Calls:** {s.tool_calls}",
        f"- **Discoveries:** {s.discoveries}",
    ]
    return fit("\n".join(out) + "\n", SESSION_MAX, "`repoctx sessions show ID` prints the whole session.")


def recent(sessions: list[SessionRow], now: datetime) -> str:
    out = [f"# Recent Sessions ({len(sessions)})"]
    for s in sessions:
        out += [
            "",
            f"## Session {s.id[:8]}",
            f"**Started:** {s.started_at}  ",
            f"**Duration:** {duration(s.started_at, _session_end(s, now))}  ",
            f"**Status:** {s.status}  ",
            f"**Files:** {s.files}  ",
            f"**Topics:** {', '.join(s.topics) or 'None'}  ",
            f"**Discoveries:** {s.discoveries}",
        ]
    return fit("\n".join(out) + "\n", RECENT_MAX, "Ask for fewer with context://sessions/recent?limit=n.")
