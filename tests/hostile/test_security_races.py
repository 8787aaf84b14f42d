"""Check-then-use races (issue 20, item 8): while a local process swaps a directory of the
repository for a link to a copy of it outside (a secret planted in every file), the writing
tools run again and again over MCP (the official client against `repoctx serve`). Whatever
the timing, nothing outside is written (names and bytes unchanged), nothing outside is read
into an answer or into a repository file."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from test_security_links import secret_in_repo, snapshot

from conftest import how_deep, mcp_client
from sample_repo import build_sample_repo

SECRET = "LINKED-OUT-SECRET-91d2"  # the one secret_in_repo looks for
CALLS = how_deep("REPOCTX_RACE_CALLS", 40, 400)

# (tool, arguments, the directory swapped for a link out while it runs)
RACES = [
    ("update_context", {"scope": "src/core", "fields": {"todos": ["Race me"]}}, "src/core"),
    ("mcp_write_log", {"task_id": "TASK-001", "body": "Raced."}, ".contextia/work/logs/TASK-001"),
    ("add_discovery", {"module": "core", "type": "pattern", "content": "Raced"}, ".repoctx"),
]


def plant_copy(src: Path, dst: Path) -> None:
    """A copy of `src` whose every file also carries the secret (YAML and markdown alike)."""
    shutil.copytree(src, dst, symlinks=True)
    for f in dst.rglob("*"):
        if f.is_file() and not f.is_symlink() and f.suffix in (".yaml", ".md"):
            text = f.read_text()
            f.write_text(text.replace("Core engine.", f"Core engine {SECRET}.").replace("The engine.", SECRET)
                         + f"\n# {SECRET}\n")


class Swapper(threading.Thread):
    """Swaps `place` between the real directory and a link out, as fast as it can."""

    def __init__(self, place: Path, out: Path) -> None:
        super().__init__(daemon=True)
        self.place, self.real, self.link = place, place.with_name(place.name + ".real"), place.with_name(place.name + ".link")
        os.rename(place, self.real)
        os.symlink(out, self.link)
        self.stop, self.swaps = threading.Event(), 0

    def run(self) -> None:
        while not self.stop.is_set():
            for held in (self.real, self.link):
                self.put(held)
                # Each state holds a moment, so calls meet all of them; every eighth real state
                # holds longer, so that under load some calls still get through (checked below).
                time.sleep(0.02 if held is self.real and self.swaps % 8 == 0 else 0.0005)
                os.rename(self.place, held)
            self.swaps += 1

    def put(self, held: Path) -> None:
        while True:
            self.clear()
            try:
                return os.rename(held, self.place)
            except OSError:  # the server made the place again in between
                continue

    def clear(self) -> None:
        """While the place was empty, the server may have made it anew (inside the
        repository): moved aside, it stays in the repository for the checks."""
        if os.path.lexists(self.place):
            os.rename(self.place, self.place.with_name(f"{self.place.name}.made-{self.swaps}-{os.urandom(3).hex()}"))

    def finish(self) -> None:
        self.stop.set()
        self.join()
        os.unlink(self.link)
        self.put(self.real)


@pytest.mark.anyio
@pytest.mark.parametrize("tool, arguments, place", RACES, ids=[r[0] for r in RACES])
async def test_a_directory_swapped_for_a_link_out_during_writes(tmp_path, tool, arguments, place):
    repo, out = build_sample_repo(tmp_path / "repo"), tmp_path / "out" / Path(place).name
    plant_copy(repo / place, out)
    before = snapshot(out.parent)
    answers, ok = [], 0
    async with mcp_client("--root", str(repo), "--profile", "all") as client:
        await client.list_tools()  # the server is up: it read its own config before any swap
        swapper = Swapper(repo / place, out)
        swapper.start()
        try:
            for _ in range(CALLS):
                result = await client.call_tool(tool, arguments)
                answers.append(json.dumps(result.model_dump(mode="json")))
                ok += not result.is_error and '"error"' not in answers[-1]
        finally:
            swapper.finish()
    assert swapper.swaps > 10 and ok > 0  # the race was run, and some calls got through
    assert snapshot(out.parent) == before
    assert not any(SECRET in a for a in answers)
    assert secret_in_repo(repo) == []
