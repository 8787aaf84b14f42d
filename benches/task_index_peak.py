"""One cold task index in a process of its own, for its peak memory (issue 29 item 6).

    /usr/bin/time -v python -m benches.task_index_peak build ROOT SAVED   # from nothing; writes SAVED
    /usr/bin/time -v python -m benches.task_index_peak load ROOT SAVED    # from SAVED, as a cold call

Walks ROOT as a cold call does (keeping each directory's files, which the index takes rather
than list the tree again), makes the task index (from nothing, or from the saved bytes at SAVED), asks 40 synthetic questions (benches/bench_tasks.py) and prints one JSON line: the walk,
the index and the first question in seconds, warm p50, the index's own count by structure
(`TaskIndex.heap_parts`). `/usr/bin/time -v` gives the process's peak RSS ("Maximum resident
set size"). SAVED is any path. One inside ROOT (`ROOT/.repoctx/task-index.bin`, where a cold
call keeps it) is read by the core a piece at a time, as a cold call reads it; one elsewhere is
read whole and handed over as bytes (how every load read it before session 8).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from benches.bench_tasks import synthetic_tasks


def main(argv: list[str]) -> int:
    from repoctx import _core
    from repoctx.base import local_state
    from repoctx.base.task_index import MAX_SAVED_BYTES
    from repoctx.base.workspace import Workspace
    from repoctx.formats.artifact import find_project_dir

    mode, root, saved_at = argv[0], Path(argv[1]), Path(argv[2])
    cfg = Workspace.open(root).scan_config()
    start = time.perf_counter()
    table = _core.walk(str(root), list(cfg.ignore), cfg.max_depth, cfg.min_tokens, keep_files=True)
    out: dict = {"mode": mode, "walk_s": time.perf_counter() - start}
    inside = saved_at.resolve().is_relative_to(root.resolve())
    piecewise = {"saved_at": (str(saved_at.resolve().relative_to(root.resolve())), MAX_SAVED_BYTES)} if inside else {}
    saved = saved_at.read_bytes() if mode == "load" and not inside else None
    start = time.perf_counter()
    index = _core.TaskIndex(str(root), [r.scope for r in table.rows], list(cfg.ignore), "@",
                            find_project_dir(str(root)), saved, files=table.files,
                            **(piecewise if mode == "load" else {}))
    out |= {"index_s": time.perf_counter() - start, "files": index.file_count, "loaded": index.loaded,
            "refused": index.refused, "piecewise": bool(piecewise) and mode == "load"}
    del saved
    tasks = synthetic_tasks(40, 0)
    start = time.perf_counter()
    index.query(tasks[0], 8000, [], [], 10, "bytes4")
    out["first_query_s"] = time.perf_counter() - start
    samples = []
    for task in tasks:
        start = time.perf_counter()
        index.query(task, 8000, [], [], 10, "bytes4")
        samples.append(time.perf_counter() - start)
    out |= {"warm_p50_ms": statistics.median(samples) * 1000, "heap_bytes": index.heap_bytes,
            "heap_parts": dict(index.heap_parts)}
    if mode == "build":
        if inside:  # as a server saves it: written by the core
            local_state.makedirs(str(root), str(saved_at.resolve().parent.relative_to(root.resolve())))
            index.save_to(str(saved_at.resolve().relative_to(root.resolve())), MAX_SAVED_BYTES)
        else:
            saved_at.write_bytes(index.save())
        out["saved_bytes"] = saved_at.stat().st_size
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
