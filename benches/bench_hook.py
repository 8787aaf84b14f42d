"""What the prompt hook costs a person on each prompt (issue 29.7: not felt, ≤ 150 ms warm).

    python -m benches.bench_hook [--repo PATH] [--repeat 20] [--task TEXT]

Runs `repoctx prompt-hook` as Claude Code does, a whole process with the event as JSON on
stdin, in a copy of PATH (default: this checkout; the hook writes `.repoctx/` state, so the
repository itself is never run in), and prints the medians of wall and CPU time (user + system;
on a loaded machine CPU time is what an idle one would take) beside the floors measured in the
same run: Python doing nothing and `repoctx --version`. "warm" is after one call wrote
`.repoctx/task-index.bin` and `.repoctx/task-history.bin`; "history not saved" deletes the
latter before each run, so git's history is walked again as it was before it was saved (and
the run writes it again: a few ms).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

from benches import measure
from repoctx.base.task_index import HISTORY_FILE

CHECKOUT = Path(__file__).resolve().parents[1]
TASK = "the prompt hook should be silent when the prompt is a slash command"


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m benches.bench_hook")
    ap.add_argument("--repo", default=str(CHECKOUT))
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--task", default=TASK)
    args = ap.parse_args()
    repoctx = shlex.join([sys.executable, "-m", "repoctx"])
    env_pyc = os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's Python keeps its bytecode
    rows = [measure.command("python -c pass", [sys.executable, "-c", "pass"], args.repo, args.repeat),
            measure.command("repoctx --version", [sys.executable, "-m", "repoctx", "--version"], args.repo, args.repeat)]
    with tempfile.TemporaryDirectory(prefix="repoctx-bench-hook-") as tmp:
        repo = str(Path(tmp, "repo"))
        shutil.copytree(args.repo, repo, symlinks=True, ignore=shutil.ignore_patterns(".repoctx"))
        history = shlex.quote(str(Path(repo, HISTORY_FILE)))
        for name, prompt, before in (("prompt-hook, a task (warm)", args.task, ""),
                                     ("prompt-hook, a task, history not saved", args.task, f"rm -f {history}; "),
                                     ("prompt-hook, chat (silent)", "yes, go ahead", "")):
            event = Path(tmp, "event.json")
            event.write_text(json.dumps({"session_id": "bench", "transcript_path": "/dev/null", "cwd": repo,
                                         "hook_event_name": "UserPromptSubmit", "prompt": prompt}))
            argv = ["/bin/sh", "-c", f"{before}exec {repoctx} prompt-hook < {shlex.quote(str(event))}"]
            rows.append(measure.command(name, argv, repo, args.repeat, warmup=2))
            event.unlink()
    if env_pyc is not None:
        os.environ["PYTHONDONTWRITEBYTECODE"] = env_pyc
    print(f"{args.repo} (a copy), {args.repeat} runs each, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("| command | wall p50 | wall min | CPU p50 |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['name']} | {r['wall_s'] * 1000:.0f} ms | {r['wall_min_s'] * 1000:.0f} ms | {r['cpu_s'] * 1000:.0f} ms |")


if __name__ == "__main__":
    main()
