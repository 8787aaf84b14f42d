"""Warm MCP round trips through the official Python client over stdio.

Measures tool calls against a running `repoctx serve`, beside the SDK's own
floor: a tool that does nothing (`REPOCTX_BENCH_NOOP=1` adds it), in the same
server, in the same run.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio

from benches import measure


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _server_pid(root: Path) -> int:
    """The `repoctx serve` child of this process serving `root`."""
    me = os.getpid()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me and b"serve" in cmd and str(root).encode() in cmd:
            return int(proc.name)
    raise RuntimeError("server process not found")


async def _interleaved(client, calls: list[tuple[str, str, dict]], n: int) -> list[dict]:
    """`n` rounds, each calling every tool once: drift on a shared machine then lands on all
    tools alike instead of on whichever block of calls it happened to meet. Only for small
    replies: a call right after a multi-megabyte reply pays for it (both processes free and
    collect its objects), so large replies are timed in blocks of their own."""
    samples: list[list[float]] = [[] for _ in calls]
    for _ in range(n):
        for i, (_, tool, args) in enumerate(calls):
            start = time.perf_counter()
            await client.call_tool(tool, args)
            samples[i].append(time.perf_counter() - start)
    return [{"name": label, **measure.percentiles(s)} for (label, _, _), s in zip(calls, samples)]


async def _run(root: Path, calls: list[tuple[str, str, dict]], large: list[tuple[str, str, dict]], n: int,
               touch: Path | None, scope: str) -> dict:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "repoctx", "serve", "--root", str(root), "--profile", "all"],
        env={**os.environ, "REPOCTX_BENCH_NOOP": "1"},
    )
    async with Client(params, mode="2026-07-28") as client:
        pid = _server_pid(root)
        await client.call_tool("noop", {})
        rss_before = _rss_mib(pid)
        # The scan (index, parsed context files, the cached listing) behind a one-entry page,
        # so the figure is the server's state and not the buffers of a multi-megabyte reply.
        start = time.perf_counter()
        await client.call_tool("list_contexts", {"limit": 1})
        first = time.perf_counter() - start
        rss_after = _rss_mib(pid)
        await client.call_tool("list_contexts", {})
        rss_full = _rss_mib(pid)
        rows = await _interleaved(client, [("noop", "noop", {}), *calls], n)
        for call in large:
            rows += await _interleaved(client, [call], n)
        after_touch = {}
        if touch is not None:
            stale, listing = 0, []
            for i in range(n):
                os.utime(touch, ns=(10**18 + i * 10**6, 10**18 + i * 10**6))
                result = await client.call_tool("check_freshness", {"scope": scope})
                stale += result.structured_content.get("state") == "stale"
                os.utime(touch, ns=(2 * 10**18 + i * 10**6,) * 2)
                start = time.perf_counter()
                await client.call_tool("list_contexts", {})
                listing.append(time.perf_counter() - start)
            after_touch = {"touches": n, "check_freshness_stale": stale,
                           "list_contexts_after_touch": measure.percentiles(listing)}
        return {"first_list_contexts_s": first, "rss_before_scan_mib": rss_before,
                "rss_after_scan_mib": rss_after, "rss_after_full_listing_mib": rss_full, "rows": rows, **after_touch}


def run(root: Path, calls: list[tuple[str, str, dict]], large: list[tuple[str, str, dict]] = (), n: int = 50,
        touch: Path | None = None, scope: str = ".") -> dict:
    """Round trips of `calls` (interleaved with the no-op) and of `large` (each in a block),
    as rows labelled by the first item of each call."""
    return anyio.run(_run, root, calls, list(large), n, touch, scope)
