"""Listing pages: `python -m benches.bench_paging [--files 100000] [--limit 100]`.

In one serving process (live index, watching), on the synthetic tree without git: the
first whole listing, then every `list_contexts` page of `--limit` entries following
next_cursor, all and `state: missing`, timed in process (the handler alone, no protocol).
Prints the median and the slowest page.
"""

from __future__ import annotations

import argparse
import statistics
import time

from benches import synth
from repoctx.base import index
from repoctx.base.workspace import Workspace
from repoctx.scopes import read as scopes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--limit", type=int, default=100)
    args = ap.parse_args()
    ws = Workspace.open(synth.tree(args.files, git=False))
    index.serve_live(watch=True)
    t = time.perf_counter()
    full = scopes.list_contexts(ws, scopes.ListContextsParams())
    print(f"first whole listing: {1000 * (time.perf_counter() - t):.0f} ms, {full.total_directories} scopes")
    for label, state in (("all", None), ("state=missing", "missing")):
        times, cursor = [], None
        while True:
            t = time.perf_counter()
            page = scopes.list_contexts(ws, scopes.ListContextsParams(state=state, limit=args.limit, cursor=cursor))
            times.append(time.perf_counter() - t)
            cursor = page.next_cursor or None
            if cursor is None:
                break
        print(f"{label}: {len(times)} pages, median {1000 * statistics.median(times):.2f} ms, "
              f"slowest {1000 * max(times):.2f} ms")


if __name__ == "__main__":
    main()
