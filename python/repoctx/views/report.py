"""`repoctx report`: one self-contained HTML page on the health of a repository's context.

The numbers come from the registry's own handlers (list_contexts, the artifacts
tools, sessions), so the page agrees with `repoctx status --json` and friends.
The page has no network access: CSS, script and data are inline. The scope tree
is drawn by a virtualised list (only the rows on screen exist in the DOM), so a
tree of tens of thousands of scopes stays responsive.
"""

from __future__ import annotations

import functools
import os
from importlib import resources
from typing import Annotated

import msgspec
from msgspec import Meta, Struct

from repoctx import __version__
from repoctx.base import clock, fs, index, local_state
from repoctx.base.command import CliView, Command
from repoctx.base.workspace import PathEscape, Workspace, atomic_write, one_reading

DEFAULT_OUT = ".repoctx/report.html"
ARTIFACT_TYPES = ("spec", "decision", "norm", "task")
STATES = ("fresh", "stale", "invalid", "missing")


class ReportParams(Struct):
    out: Annotated[str, Meta(description="Where to write the page: a path relative to the repository root "
                             "(inside it), or an absolute path anywhere you may write, in a folder that exists (only "
                             "folders under .repoctx/ are made); a "
                             "file there is replaced keeping its mode and owner, anything else is refused; "
                             "`-` prints it")] = DEFAULT_OUT
    only: Annotated[list[str] | None, Meta(description="Show only scopes in these states in the page's tree at "
                                           "first, e.g. `stale,missing` (the page can widen it again)")] = None


class ReportResult(Struct, omit_defaults=True):
    out: str
    bytes: int
    scopes: int
    fresh: int
    stale: int
    missing: int
    artifacts: int
    sessions: int
    invalid: int = 0  # present only when some are
    error: str = ""
    html: str = ""  # the page itself when out is `-`


@functools.cache
def _tool(catalog, name: str):
    return next(c for c in catalog.all_commands() if (c.tool or c.name) == name)


def _call(catalog, ws: Workspace, name: str, **arguments) -> dict:
    cmd = _tool(catalog, name)
    return msgspec.to_builtins(cmd.handler(ws, cmd.parse(arguments)))


def collect(catalog, ws: Workspace, only: list[str] | None = None) -> dict:
    """Everything the page shows, as plain data, from one reading of the repository (a
    question per task must not read every artifact again: that made the page quadratic)."""
    with one_reading():
        return {**_collect(catalog, ws), "only": only}


def _only(given: list[str] | None) -> list[str] | str:
    """The states of `--only` (each value may list several, comma-separated), or an error."""
    states = [s.strip() for value in given or [] for s in value.split(",") if s.strip()]
    wrong = [s for s in states if s not in STATES]
    if wrong:
        return f"--only {', '.join(wrong)}: not a state; give some of {', '.join(STATES)}, e.g. --only stale,missing"
    return states


def _collect(catalog, ws: Workspace) -> dict:
    status = _call(catalog, ws, "list_contexts")
    sizes = {row.scope: (row.source_bytes, row.files) for row in index.scan(ws, ws.scan_config()).rows if row.eligible}
    # The state a person is shown, as `status` shows it: a file that cannot be used is invalid
    # (the contract calls it missing), with list_contexts' own words on why and where.
    scopes = [[e["scope"], "invalid" if e.get("invalid") else e["state"], sizes.get(e["scope"], (0, 0))[0] // 4,
               sizes.get(e["scope"], (0, 0))[1], e.get("last_updated", ""), e.get("summary", ""), e.get("invalid")]
              for e in status["entries"]]
    counts = {s: sum(1 for row in scopes if row[1] == s) for s in STATES}
    data = {
        "version": __version__,
        "root": os.path.basename(ws.root) or ws.root,
        "generated": clock.stamp(),
        "coverage": {"scopes": status["total_directories"], "tracked": status["tracked"],
                     "skipped": status["skipped_directories"], **counts},
        "scopes": scopes,  # [scope, state, tokens (bytes/4), files, last_updated, summary, why invalid]
        "status_error": status.get("error", ""),
        "artifacts": _artifacts(catalog, ws),
        "sessions": _call(catalog, ws, "sessions", limit=20).get("sessions", []),
    }
    return data


def _artifacts(catalog, ws: Workspace) -> dict:
    lists = {t: _call(catalog, ws, "mcp_list", type=t) for t in ARTIFACT_TYPES}
    if any(r.get("error") for r in lists.values()):
        return {"present": False, "error": next(r["error"] for r in lists.values() if r.get("error"))}
    traced = {a["id"]: a for a in _call(catalog, ws, "mcp_find_by_path", file_path="**").get("artifacts", [])}
    items = []
    for kind, listing in lists.items():
        for a in listing.get("artifacts", []):
            item = {"id": a["id"], "type": kind, "title": a.get("title", ""), "status": a.get("status", ""),
                    "paths": traced.get(a["id"], {}).get("paths", []),
                    "annotations": traced.get(a["id"], {}).get("annotations", [])}
            if kind == "task":
                shown = _call(catalog, ws, "mcp_show_task", task_id=a["id"])
                item["links"] = (shown.get("artifact") or {}).get("links", [])
            items.append(item)
    check = _call(catalog, ws, "mcp_check")
    return {"present": True, "items": items, "check": check}


def render(data: dict) -> str:
    page = resources.files("repoctx.views").joinpath("report.html").read_text(encoding="utf-8")
    # `</` cannot end the script element early once escaped; JSON reads `<\/` as `</`.
    payload = msgspec.json.encode(data).decode().replace("</", "<\\/")
    return page.replace("__REPORT_DATA__", payload)


def report(catalog, ws: Workspace, p: ReportParams) -> ReportResult:
    only = _only(p.only)
    if isinstance(only, str):
        return ReportResult(p.out, 0, 0, 0, 0, 0, 0, 0, error=only)
    data = collect(catalog, ws, only)
    cov = data["coverage"]
    html = render(data)
    counts = dict(scopes=cov["scopes"], fresh=cov["fresh"], stale=cov["stale"], missing=cov["missing"],
                  invalid=cov["invalid"], artifacts=len(data["artifacts"].get("items", [])), sessions=len(data["sessions"]))
    size = len(html.encode())
    if p.out == "-":
        return ReportResult("-", size, **counts, html=html)
    if ws.read_only:
        return ReportResult(p.out, 0, **counts, error="read-only mode: the report was not written")
    path = os.path.abspath(p.out)
    if os.path.isabs(p.out) and not (path == ws.root or path.startswith(ws.root + os.sep)):
        # A path the person typed plainly outside the repository is theirs (`report` is a
        # command, not a tool): written there, its links followed. One inside is confined.
        if not os.path.isdir(os.path.dirname(path)):
            return ReportResult(p.out, 0, **counts, error=_no_folder(p.out))
        try:
            atomic_write(path, html.encode())
        except OSError as exc:
            return ReportResult(p.out, 0, **counts, error=f"{p.out} cannot be written ({exc.strerror or exc})")
        return ReportResult(path, size, **counts)
    try:
        rel, path = ws.resolve(p.out)
    except PathEscape:
        return ReportResult(p.out, 0, **counts, error=f"{p.out} is outside the repository; "
                            "give --out a path inside it, or --out - to print the page")
    if rel == ".":  # `--out ''`: the root itself
        return ReportResult(p.out, 0, **counts, error=f"--out {p.out!r} names the repository itself; "
                            f"give it a file path, e.g. {DEFAULT_OUT}")
    try:
        if rel.startswith(local_state.STATE_DIR + "/"):  # folders of repoctx's own state are made; others must exist
            local_state.makedirs(*fs.split(os.path.dirname(path)))
        elif not fs.is_dir(*fs.split(os.path.dirname(path))):
            return ReportResult(rel, 0, **counts, error=_no_folder(rel))
        atomic_write(path, html.encode())
    except OSError as exc:  # a directory there, a name over 255 bytes, a link loop or out
        return ReportResult(rel, 0, **counts, error=f"{rel} cannot be written ({exc.strerror or exc})")
    return ReportResult(rel, size, **counts)


def _no_folder(out: str) -> str:
    return f"{out} cannot be written: its folder does not exist (make it first; repoctx does not make folders it was not asked for)"


def _render(r: ReportResult) -> str:
    if r.error:
        return r.error
    if r.html:
        return r.html
    invalid = f"{r.invalid} invalid, " if r.invalid else ""
    return (f"wrote {r.out} ({r.bytes // 1024} KB): {r.scopes} scopes ({r.fresh} fresh, {r.stale} stale, "
            f"{invalid}{r.missing} missing), {r.artifacts} artifacts, {r.sessions} recent sessions; open it in a browser")


def commands(catalog) -> list[Command]:
    """The report's command, handed the catalog whose commands it asks."""
    return [Command(
        name="report",
        tool=None,
        summary="Write one self-contained HTML page on the health of this repository's context.",
        description="What needs attention first (stale, invalid and missing scopes), the scope tree coloured by "
        "state with token sizes and ages (filtered by state with --only or in the page), coverage, artifacts "
        "with their traceability and check results, recent sessions. No network: open it anywhere.",
        params=ReportParams,
        result=ReportResult,
        handler=functools.partial(report, catalog),
        is_error=lambda r: bool(r.error),
        writes=True,
        surface="control",
        cli=CliView(render=_render),
    )]
