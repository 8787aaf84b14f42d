"""What the prompt hook costs a person on each prompt (issue 29.7: not felt, ≤ 150 ms warm).

    python -m benches.bench_hook [--repo PATH] [--repeat 20] [--task TEXT] [--rounds N]

Runs `repoctx prompt-hook` as Claude Code does, a whole process with the event as JSON on
stdin, in a copy of PATH (default: this checkout; the hook writes `.repoctx/` state, so the
repository itself is never run in), and prints the medians and 95th percentiles of wall and CPU
time (user + system; on a loaded machine CPU time is what an idle one would take) beside the
floors measured in the same run: Python doing nothing and `repoctx --version`. "warm" is after
one call wrote `.repoctx/task-index.bin` and `.repoctx/task-history.bin`; "history not saved"
deletes the latter before each run, so git's history is walked again as it was before it was
saved (and the run writes it again: a few ms). Then, `--rounds` times, the hook with no server
and with `repoctx serve` running on the copy, warm (the hook asks it: views/relay.py),
alternated so both meet the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benches import measure
from repoctx.base.task_index import HISTORY_FILE
from repoctx.views import relay
from repoctx.views.prompt_hook import DEFAULT_BUDGET, DEFAULT_LIMIT

CHECKOUT = Path(__file__).resolve().parents[1]
TASK = "the prompt hook should be silent when the prompt is a slash command"


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m benches.bench_hook")
    ap.add_argument("--repo", default=str(CHECKOUT))
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--task", default=TASK)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the hook without and with a server")
    args = ap.parse_args()
    repoctx = shlex.join([sys.executable, "-m", "repoctx"])
    env_pyc = os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's Python keeps its bytecode
    rows = [measure.command("python -c pass", [sys.executable, "-c", "pass"], args.repo, args.repeat)
            | {"load": os.getloadavg()[0]},
            measure.command("repoctx --version", [sys.executable, "-m", "repoctx", "--version"], args.repo, args.repeat)
            | {"load": os.getloadavg()[0]}]
    with tempfile.TemporaryDirectory(prefix="repoctx-bench-hook-") as tmp:
        repo = os.path.realpath(Path(tmp, "repo"))
        shutil.copytree(args.repo, repo, symlinks=True, ignore=shutil.ignore_patterns(".repoctx"))
        history = shlex.quote(str(Path(repo, HISTORY_FILE)))

        def hook(name: str, prompt: str, before: str = "", warmup: int = 2, server: int | None = None) -> None:
            event = Path(tmp, "event.json")
            event.write_text(json.dumps({"session_id": "bench", "transcript_path": "/dev/null", "cwd": repo,
                                         "hook_event_name": "UserPromptSubmit", "prompt": prompt}))
            argv = ["/bin/sh", "-c", f"{before}exec {repoctx} prompt-hook < {shlex.quote(str(event))}"]
            spent = _cpu_s(server)
            row = measure.command(name, argv, repo, args.repeat, warmup) | {"load": os.getloadavg()[0]}
            if server is not None:  # what answering costs the server, per hook
                row["server_cpu_s"] = (_cpu_s(server) - spent) / (args.repeat + warmup)
            rows.append(row)

        hook("prompt-hook, a task (warm)", args.task)
        hook("prompt-hook, a task, history not saved", args.task, f"rm -f {history}; ")
        hook("prompt-hook, chat (silent)", "yes, go ahead")
        for n in range(1, args.rounds + 1):  # alternated, so both meet the same load
            hook(f"round {n}: a task, no server", args.task, warmup=1)
            with _served(repo, args.task) as server:
                hook(f"round {n}: a task, server up", args.task, warmup=1, server=server)
    if env_pyc is not None:
        os.environ["PYTHONDONTWRITEBYTECODE"] = env_pyc
    print(f"{args.repo} (a copy), {args.repeat} runs each, on {os.cpu_count()} cores\n")
    print("| command | wall p50 | wall p95 | wall min | CPU p50 | CPU p95 | the server's CPU per answer | load |\n"
          "|---|---|---|---|---|---|---|---|")
    for r in rows:
        served = f"{r['server_cpu_s'] * 1000:.0f} ms" if "server_cpu_s" in r else ""
        print(f"| {r['name']} | {r['wall_s'] * 1000:.0f} ms | {r['wall_p95_s'] * 1000:.0f} ms "
              f"| {r['wall_min_s'] * 1000:.0f} ms | {r['cpu_s'] * 1000:.0f} ms | {r['cpu_p95_s'] * 1000:.0f} ms "
              f"| {served} | {r['load']:.1f} |")


@contextmanager
def _served(repo: str, task: str) -> Iterator[int]:
    """`repoctx serve` on `repo` while the block runs, once its relay answers the hook; its pid."""
    server = subprocess.Popen([sys.executable, "-m", "repoctx", "serve", "--root", repo], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while relay.ask(repo, task, DEFAULT_BUDGET, DEFAULT_LIMIT) is None:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the server did not answer the hook")
            time.sleep(0.2)
        yield server.pid
    finally:
        assert server.stdin is not None
        server.stdin.close()  # as its client ends it: it removes its endpoint
        server.wait()


def _cpu_s(pid: int | None) -> float:
    """A process's CPU time so far (user + system), from Linux's /proc; 0 elsewhere or for None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
