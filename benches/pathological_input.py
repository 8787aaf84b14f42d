"""Pathological-input figures (docs/security.md, "Ignore semantics" and "The report"):

1. a repository of 20 packages (context files and a project file committed) under a
   .gitignore of 50,000 lines of each kind: every command that walks the tree, wall time and
   peak RSS, beside `git status` and `git check-ignore` on the same rules;
2. the same on a one-directory repository (50,000 `**` lines);
3. `repoctx report` on repositories of 1,000 to 5,000 tasks, beside `artifacts check`.

    python -m benches.pathological_input [--repoctx CMD] [--tasks 1000,2000,5000] [--timeout S]

--repoctx runs another build (e.g. a script running an older checkout) in place of this one.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KINDS = {
    "none (the floor)": list,
    "50,000 `**`": lambda: ["**"] * 50_000,
    "50,000 `**/build/**`": lambda: ["**/build/**"] * 50_000,
    "50,000 distinct `**/nI/**`": lambda: [f"**/n{i}/**" for i in range(50_000)],
    "50,000 distinct names `nI`": lambda: [f"n{i}" for i in range(50_000)],
    "a 1 MB line of `*`": lambda: ["a" + "*" * 1_000_000, "pkg1/"],
}
COMMANDS = ["status", "regen", "rehash", "report --out -", "project scan"]


def timed(cmd: list[str], cwd: Path, timeout: float) -> str:
    """Wall time and peak RSS of one run, from GNU time; `> timeout` when it ran out."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], cwd=cwd, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"> {timeout:.0f} s"
    took = time.perf_counter() - start
    rss = int(proc.stderr.strip().splitlines()[-1]) // 1024
    return f"{took:.2f} s, {rss} MiB"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def repo(root: Path, repoctx: list[str], packages: int, lines: list[str]) -> Path:
    root.mkdir()
    for i in range(packages):
        (root / f"pkg{i}").mkdir()
        (root / f"pkg{i}" / "m.py").write_text("x = 1\n" * 2000)
    (root / "main.py").write_text("y = 1\n")
    (root / ".context.config.yaml").write_text("min_tokens: 0\n")
    git(root, "init", "-q")
    subprocess.run([*repoctx, "--root", str(root), "init"], capture_output=True)
    subprocess.run([*repoctx, "--root", str(root), "project", "init"], capture_output=True)
    git(root, "add", "-A")
    git(root, "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "bench")
    (root / ".gitignore").write_text("".join(line + "\n" for line in lines))
    return root


def ignore_figures(repoctx: list[str], timeout: float) -> None:
    print("| .gitignore | " + " | ".join(f"`{c}`" for c in COMMANDS) + " | `git status` | `git check-ignore` |")
    print("|---" * (len(COMMANDS) + 3) + "|")
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(name, 20, make) for name, make in KINDS.items()]
        cases.append(("one directory, 50,000 `**`", 0, KINDS["50,000 `**`"]))
        for n, (name, packages, make) in enumerate(cases):
            root = repo(Path(tmp) / f"r{n}", repoctx, packages, make())
            cells = [timed([*repoctx, *shlex.split(c)], root, timeout) for c in COMMANDS]
            cells.append(timed(["git", "status", "--short"], root, timeout))
            (root / ".paths").write_text("\n".join(["main.py", *(f"pkg{i}/m.py" for i in range(packages))]))
            cells.append(timed(["sh", "-c", "git check-ignore --no-index --stdin < .paths"], root, timeout))
            print(f"| {name} | " + " | ".join(cells) + " |")


def tasks_repo(root: Path, n: int) -> Path:
    (root / ".contextia/work/tasks").mkdir(parents=True)
    (root / ".contextia/system/specs").mkdir(parents=True)
    (root / "src").mkdir()
    (root / ".contextia/config.yaml").write_text("project: big\nsource_paths: [src]\n")
    for i in range(1, 11):
        (root / f".contextia/system/specs/SPEC-{i:03d}.md").write_text(
            f"---\nid: SPEC-{i:03d}\ntitle: Spec {i}\nstatus: approved\npaths: [src/m{i}.py]\n---\n\nBody.\n")
        (root / f"src/m{i}.py").write_text(f"# @spec SPEC-{i:03d}\nx = {i}\n")
    for i in range(1, n + 1):
        (root / f".contextia/work/tasks/TASK-{i:03d}.md").write_text(
            f"---\nid: TASK-{i:03d}\ntitle: Task {i}\nstatus: {'in_progress' if i % 3 else 'done'}\n"
            f"kind: feature\nlinks: [SPEC-{i % 10 + 1:03d}]\n---\n\nDo thing {i}.\n")
    past = time.time() - 3600  # as a repository is: no file written in the last seconds
    for path in root.rglob("*"):
        os.utime(path, (past, past))
    return root


def report_figures(repoctx: list[str], sizes: list[int], timeout: float) -> None:
    print("\n| tasks | `report --out -` | `artifacts check` |\n|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            root = tasks_repo(Path(tmp) / f"t{n}", n)
            print(f"| {n:,} | {timed([*repoctx, 'report', '--out', '-'], root, timeout)} | "
                  f"{timed([*repoctx, 'artifacts', 'check'], root, timeout)} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repoctx", default=f"{sys.executable} -m repoctx", help="the command to measure")
    ap.add_argument("--tasks", default="1000,2000,5000")
    ap.add_argument("--timeout", type=float, default=300)
    args = ap.parse_args()
    repoctx = shlex.split(args.repoctx)
    ignore_figures(repoctx, args.timeout)
    report_figures(repoctx, [int(n) for n in args.tasks.split(",")], args.timeout)


if __name__ == "__main__":
    main()
