"""Warm MCP round trips through the official Python client over stdio.

Measures tool calls against a running `repoctx serve`, beside the SDK's own
floor: a tool that does nothing (`REPOCTX_BENCH_NOOP=1` adds it), in the same
server, in the same run.

Memory: a server starts scanning its tree in the background as soon as it starts,
so there is no moment before the scan to read its RSS. "Before" is read from a
server on an empty directory after the same calls; "after" once the server has
gone idle (the warm-up scan and everything it left behind finished).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from benches import measure


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _busy(pid: int) -> tuple[bool, int]:
    """Whether a thread of `pid` is running, and the process's CPU ticks so far."""
    running, ticks = False, 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        running |= fields[0] == "R"
        ticks += int(fields[11]) + int(fields[12])
    return running, ticks


async def _settled_rss_mib(pid: int, quiet_s: float = 0.3, timeout_s: float = 600) -> float:
    """The RSS of `pid` once it has gone idle: no thread running and no CPU time spent for
    `quiet_s` (background work such as the warm-up scan finished)."""
    deadline = time.monotonic() + timeout_s
    _, last = _busy(pid)
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        await anyio.sleep(0.05)
        running, ticks = _busy(pid)
        if running or ticks != last:
            last, quiet_since = ticks, time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s:
            return _rss_mib(pid)
    raise RuntimeError(f"server {pid} did not go idle within {timeout_s} s")


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
    tools alike instead of on whichever block of calls it happened to meet. A call right
    after a multi-megabyte reply pays for freeing it, so a large reply is interleaved only
    with the no-op replaying it: each then pays for the other's bytes alike."""
    samples: list[list[float]] = [[] for _ in calls]
    for _ in range(n):
        for i, (_, tool, args) in enumerate(calls):
            start = time.perf_counter()
            await client.call_tool(tool, args)
            samples[i].append(time.perf_counter() - start)
    return [{"name": label, **measure.percentiles(s)} for (label, _, _), s in zip(calls, samples)]


async def _run(root: Path, calls: list[tuple[str, str, dict]], large: list[tuple[str, str, dict]], n: int,
               touch: Path | None, scope: str, grow: bool, read_only: bool) -> dict:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    def params(at: Path) -> StdioServerParameters:
        return StdioServerParameters(
            command=sys.executable,
            args=["-m", "repoctx", "serve", "--root", str(at), "--profile", "all", *(["--read-only"] if read_only else [])],
            env={**os.environ, "REPOCTX_BENCH_NOOP": "1"},
        )

    with tempfile.TemporaryDirectory(prefix="repoctx-bench-empty-") as empty:
        if (root / ".git").exists():  # the same code paths as the measured server
            subprocess.run(["git", "init", "-q", empty], check=True)
        async with Client(params(Path(empty)), mode="2026-07-28") as client:
            await client.call_tool("noop", {})
            await client.call_tool("list_contexts", {"limit": 1})
            rss_before = await _settled_rss_mib(_server_pid(Path(empty)))

    async with Client(params(root), mode="2026-07-28") as client:
        # This era has no handshake: the server process is certain to run once a call returned.
        await client.call_tool("noop", {})
        pid = _server_pid(root)
        # The scan (index, parsed context files, the cached listing) behind a one-entry page,
        # so the figure is the server's state and not the buffers of a multi-megabyte reply.
        start = time.perf_counter()
        await client.call_tool("list_contexts", {"limit": 1})
        first = time.perf_counter() - start
        rss_after = await _settled_rss_mib(pid)
        await client.call_tool("list_contexts", {})
        rss_full = await _settled_rss_mib(pid)
        # Small replies get four times the rounds: a ratio to the no-op turns on tenths of a
        # millisecond, and 50 samples on a shared machine moved it by ±0.15 from run to run.
        rows = await _interleaved(client, [("noop", "noop", {}), *calls], 4 * n)
        for call in large:  # beside the no-op replaying its reply: the floor for that many bytes
            label, tool, _ = call
            rows += await _interleaved(client, [call, (f"no-op replaying {label}", "noop", {"replay": tool})], n)
        after_touch = {}
        if touch is not None:
            stale, by_git, checks, floor, listing = 0, 0, [], [], []
            was = touch.stat()
            try:
                # check_freshness after each touch, interleaved call by call with the no-op (a
                # small reply: four times the rounds, as above); then a full listing after each.
                for i in range(4 * n):
                    start = time.perf_counter()
                    await client.call_tool("noop", {})
                    floor.append(time.perf_counter() - start)
                    os.utime(touch, ns=(10**18 + i * 10**6, 10**18 + i * 10**6))
                    start = time.perf_counter()
                    result = await client.call_tool("check_freshness", {"scope": scope})
                    checks.append(time.perf_counter() - start)
                    stale += result.structured_content.get("state") == "stale"
                    by_git += result.structured_content.get("fresh_by") == "git"
                for i in range(n):
                    os.utime(touch, ns=(2 * 10**18 + i * 10**6,) * 2)
                    start = time.perf_counter()
                    await client.call_tool("list_contexts", {})
                    listing.append(time.perf_counter() - start)
            finally:
                os.utime(touch, ns=(was.st_atime_ns, was.st_mtime_ns))  # the file's times as they were
            after_touch = {"touches": 4 * n, "check_freshness_stale": stale, "check_freshness_fresh_by_git": by_git,
                           "check_freshness_after_touch": measure.percentiles(checks),
                           "noop_beside_check_freshness_after_touch": measure.percentiles(floor),
                           "list_contexts_after_touch": measure.percentiles(listing)}
            if grow:
                after_touch["list_contexts_after_a_new_directory"] = measure.percentiles(
                    await _grown(client, touch.parent, n))
        return {"first_list_contexts_s": first, "rss_before_scan_mib": rss_before,
                "rss_after_scan_mib": rss_after, "rss_after_full_listing_mib": rss_full, "rows": rows, **after_touch}


async def _grown(client, parent: Path, n: int) -> list[float]:
    """The next full listing after each of `n` new directories holding a source file, made
    in `parent` one by one (and removed after)."""
    made, samples = [], []
    try:
        for i in range(n):
            new = parent / f"repoctx-bench-new-{i}"
            new.mkdir()
            made.append(new)
            (new / "new.py").write_bytes(b"x" * 4096)
            start = time.perf_counter()
            await client.call_tool("list_contexts", {})
            samples.append(time.perf_counter() - start)
    finally:
        for d in made:
            shutil.rmtree(d)
    return samples


def run(root: Path, calls: list[tuple[str, str, dict]], large: list[tuple[str, str, dict]] = (), n: int = 50,
        touch: Path | None = None, scope: str = ".", grow: bool = False, read_only: bool = False) -> dict:
    """Round trips of `calls` (interleaved with the no-op) and of `large` (each interleaved
    with the no-op replaying it), as rows labelled by the first item of each call; with a
    `touch` file, the answers after touching it (its times restored after) and, with `grow`,
    after new directories beside it. `read_only`: the servers write nothing (`serve --read-only`: no
    saved task index, no session database), for a repository that is not ours."""
    return anyio.run(_run, root, calls, list(large), n, touch, scope, grow, read_only)
