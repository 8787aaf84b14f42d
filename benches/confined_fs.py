"""What the confined file-system layer costs (docs/security.md, "Links in the repository"):
a focused loop, in process, over the calls on check_freshness's path on the sample
repository: a read and a stat through the layer beside the same by path, the parse of a
context file, and the check_freshness handler itself with the number of layer calls it makes.

    python -m benches.confined_fs [--n N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def best_us(fn, n: int) -> float:
    """Microseconds a call, best of 5 rounds of n calls."""
    fn()
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter_ns() - t0) / n / 1000)
    return min(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benches.confined_fs")
    parser.add_argument("--n", type=int, default=20000, help="calls a round")
    n = parser.parse_args().n
    sys.path.insert(0, str(HERE / "tests"))
    import msgspec

    from repoctx import _core
    from repoctx.base import fs
    from repoctx.base.workspace import Workspace
    from repoctx.registry.catalog import all_commands
    from repoctx.scopes import state as scope_state
    from sample_repo import build_sample_repo

    tmp = Path(tempfile.mkdtemp())
    try:
        repo = build_sample_repo(tmp / "repo")
        rel = "src/core/.context.yaml"
        path = str(repo / rel)
        old = time.time() - 3600  # older than the racy window, so a parse is reused as when serving
        os.utime(path, (old, old))
        ws = Workspace.open(repo)

        def by_path() -> bytes:
            with open(path, "rb") as fh:
                return fh.read()

        cmd = {c.tool: c for c in all_commands() if c.tool}["check_freshness"]
        params = msgspec.convert({"scope": "src/core"}, cmd.params)
        rows = [
            ("open() + read() by path", best_us(by_path, n)),
            ("fs.read_bytes(root, rel)", best_us(lambda: fs.read_bytes(ws.root, rel), n)),
            ("os.stat(path)", best_us(lambda: os.stat(path), n)),
            ("fs.stat(root, rel)", best_us(lambda: fs.stat(ws.root, rel), n)),
            ("scope_state.read_contexts([path]) (layer read + parse)", best_us(lambda: scope_state.read_contexts([path]), n)),
            ("check_freshness handler", best_us(lambda: cmd.handler(ws, params), n // 4)),
        ]
        counted = {"calls": 0}
        for name in [a for a in dir(_core) if a.startswith("fs_") or a == "read_yaml_many"]:
            real = getattr(_core, name)
            setattr(_core, name, lambda *a, _r=real, **k: (counted.__setitem__("calls", counted["calls"] + 1), _r(*a, **k))[1])
        for _ in range(100):
            cmd.handler(ws, params)
        print(f"{'call':52s} {'µs':>8s}")
        for label, us in rows:
            print(f"{label:52s} {us:8.2f}")
        print(f"layer calls per warm check_freshness: {counted['calls'] / 100:g}")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
