"""`python -m benches quality --repo PATH`: how well rankers find the files (and lines) a task
needs, measured on the repository's own history.

Each task is a past commit (benches/quality_history.py): its message is the query, its parent
the state, the source files and lines it changed the gold. Every ranker (bm25, path, engine and
repoctx's task_context over MCP; benches/quality_rankers.py) answers every task on the same
states, walked oldest first in one private checkout. Figures per ranker: file recall@5,
recall@10 and MRR of the ranking, and the share of the gold lines each budget's bundle shows.
Writes benches/out/<date>-quality.{json,md,png}; progress on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

from benches import quality_bar
from benches import quality_history as history
from benches import quality_rankers as rankers

OUT = Path(__file__).parent / "out"
DEFAULT_RANKERS = ("task_context", "bm25", "path", "engine")

DEFINITIONS = {
    "task": f"a non-merge commit changing 1-10 non-test source files ({' '.join(history.SOURCE_SUFFIXES)}), at least "
            "one of them present in its parent; the last N such commits reachable from --rev",
    "test file": "under a test/tests/__tests__/spec/testing directory (any case) or a *.Test/*.Tests one, or named "
                 "test_*.py, *_test.py, *_test.go, *_spec.rb, conftest.py, *.test.*, *.spec.*",
    "query": "the commit message, subject and body, without '(#N)' pull-request numbers and trailers "
             "(a last paragraph of 'Token: value' lines; Signed-off-by, Co-authored-by, ... anywhere)",
    "state": "the commit's first parent, checked out in one private clone walked oldest first",
    "candidates": "the state's tracked source files (tests included), under 1 MiB and without NUL bytes",
    "gold files": "the non-test source files the commit modified or deleted (renames count as delete + add; "
                  "added files are listed but no ranker could name them)",
    "gold lines": "in each gold file, the parent's lines in the old side of each `git diff -U0` hunk (Myers); "
                  "a pure insertion counts the line it follows (line 1 for one at the top)",
    "recall@k": "gold files among the first k ranked / gold files, averaged over tasks",
    "MRR": "1 / rank of the first gold file (0 when none is ranked), averaged over tasks",
    "coverage@B": "gold lines the bundle at budget B shows / gold lines, averaged over tasks with gold lines",
    "unreadable": "tasks whose parent git cannot check out (a snapshot with absent blobs): skipped and counted; "
                  "commits whose changed lines cannot be read are passed over in the selection and counted",
    "split": "sha256 of the full commit id as hex, even = tuning, odd = held-out",
    "bar": "issue 29's, on the held-out half: task_context's recall@10 >= BM25's + 0.10, MRR >= BM25's, "
           "coverage@8k >= 0.5; each margin with its standard error over the half's tasks (benches/quality_bar.py)",
    "ms": "task_context: each MCP round trip (one per budget); baselines: computing one answer in process, "
          "index built for the state included",
}


# --- metrics ---------------------------------------------------------------------


def recall(ranking: list[str], gold: set[str], k: int) -> float:
    return len(gold & set(ranking[:k])) / len(gold)


def reciprocal_rank(ranking: list[str], gold: set[str]) -> float:
    return next((1 / i for i, p in enumerate(ranking, 1) if p in gold), 0.0)


def coverage(bundle: rankers.Bundle, gold: dict[str, list[int]]) -> float | None:
    """The share of the gold lines that the bundle's ranges show (None: no gold lines)."""
    total = sum(len(lines) for lines in gold.values())
    if not total:
        return None
    shown = 0
    for path, lines in gold.items():
        ranges = [(s, e) for p, s, e in bundle if p == path]
        shown += sum(any(s <= n <= e for s, e in ranges) for n in lines)
    return shown / total


def score(answer: rankers.Answer, task: history.Task, budgets: list[int]) -> dict:
    gold = set(task.gold)
    ranks = {p: answer.ranking.index(p) + 1 if p in answer.ranking else None for p in sorted(gold)}
    return {
        "recall@5": recall(answer.ranking, gold, 5),
        "recall@10": recall(answer.ranking, gold, 10),
        "rr": reciprocal_rank(answer.ranking, gold),
        "gold_ranks": ranks,
        "top10": answer.ranking[:10],
        # The smallest budget's bundle, for benches/quality_where.py (where the lines not shown went).
        "shown": [list(p) for p in answer.bundles.get(min(budgets), [])] if budgets else [],
        "coverage": {str(b): coverage(answer.bundles.get(b, []), task.gold) for b in budgets},
        "tokens": {str(b): answer.tokens.get(b, 0) for b in budgets},
        "ms": [s * 1000 for s in answer.seconds],
        **({"error": answer.error} if answer.error else {}),
        **({"cochange": True} if answer.cochange else {}),  # a `why` said "changed with": history spoke
    }


def _pct(samples: list[float], q: float) -> float | None:
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))] if s else None


def summarise(name: str, rows: list[dict], budgets: list[int]) -> dict:
    mine = [r["rankers"][name] for r in rows if name in r["rankers"]]
    mean = lambda xs: statistics.fmean(xs) if xs else None  # noqa: E731
    ms = [m for r in mine for m in r["ms"]]
    return {
        "tasks": len(mine),
        "recall@5": mean([r["recall@5"] for r in mine]),
        "recall@10": mean([r["recall@10"] for r in mine]),
        "mrr": mean([r["rr"] for r in mine]),
        "coverage": {str(b): mean([c for r in mine if (c := r["coverage"][str(b)]) is not None]) for b in budgets},
        "mean_tokens": {str(b): mean([r["tokens"][str(b)] for r in mine]) for b in budgets},
        "over_budget": {str(b): sum(r["tokens"][str(b)] > b for r in mine) for b in budgets},
        "p50_ms": statistics.median(ms) if ms else None,
        "p95_ms": _pct(ms, 0.95),
        "errors": sum("error" in r for r in mine),
    }


def language(gold: dict) -> str:
    """The language of a task's gold files, or "mixed" when they are of more than one."""
    found = {history.LANGUAGES.get(os.path.splitext(p)[1], "other") for p in gold}
    return found.pop() if len(found) == 1 else "mixed"


def by_language(rows: list[dict], names: list[str], budgets: list[int]) -> dict:
    """The summaries again, for the tasks of each gold language, most tasks first."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(language(r["gold"]), []).append(r)
    ordered = sorted(groups.items(), key=lambda g: (-len(g[1]), g[0]))
    return {lang: {n: summarise(n, group, budgets) for n in names} for lang, group in ordered}


# --- the walk --------------------------------------------------------------------


def _progress(i: int, n: int, task: history.Task, started: float) -> None:
    elapsed = time.monotonic() - started
    eta = elapsed / i * (n - i) if i else 0
    print(f"commit {i + 1} of {n} {task.sha[:10]} (elapsed {elapsed:.0f} s, ~{eta:.0f} s left) "
          f"{task.subject[:60]}", file=sys.stderr, flush=True)


@contextlib.asynccontextmanager
async def _server(root: Path, env: dict):
    """The official MCP client connected to one `repoctx serve --root <checkout>` for the walk."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "repoctx", "serve", "--root", str(root), "--profile", "all",
                                         "--read-only"],
                                   env={**os.environ, **env})
    async with Client(params, mode="2026-07-28") as client:
        yield client


def _goto(checkout: history.Checkout, task: history.Task, unreadable: list[dict]) -> dict | None:
    """The task's state checked out, or None (and the task counted in `unreadable`) when git
    cannot check it out: a snapshot with absent blobs costs that task, not the run."""
    try:
        return checkout.goto(task.parent)
    except history.Unreadable as exc:
        unreadable.append({"sha": task.sha, "why": str(exc)})
        print(f"commit {task.sha[:10]} skipped: its parent cannot be checked out ({exc})", file=sys.stderr)
        return None


def _history_warnings(checkout: history.Checkout, rows: list[dict]) -> list[str]:
    """Why task_context's figures are without history, if they are: repoctx's git reader
    refuses the checkout, or no answer named a file changed with another. Printed too."""
    from repoctx import _core

    answered = [r["rankers"]["task_context"] for r in rows if "task_context" in r["rankers"]]
    answered = [a for a in answered if "error" not in a]
    if not answered:
        return []
    if _core.GitRepo(str(checkout.path)).head() is None:
        warning = ("WARNING: repoctx reads no git from the checkout (its git reader refuses it): "
                   "task_context ran without the history signal")
    elif not any(a.get("cochange") for a in answered):
        warning = (f"WARNING: none of task_context's {len(answered)} answers names a file changed with "
                   "another: the history signal may be silent")
    else:
        return []
    print(warning, file=sys.stderr)
    return [warning]


async def walk(repo: Path, tasks: list[history.Task], budgets: list[int], names: list[str], count,
               ablate: str | None = None) -> tuple[list[dict], dict[str, str], list[dict], list[str]]:
    """Every ranker on every task, oldest first, in one private checkout of `repo`. Returns the
    per-task rows, the rankers skipped with why, the tasks skipped because their state could
    not be checked out, and warnings about the figures."""
    rows, skipped, memo, unreadable = [], {}, {}, []
    baselines = [n for n in names if n in rankers.BASELINES]
    if "bm25" in baselines:
        try:
            import bm25s  # noqa: F401
        except ImportError:
            baselines.remove("bm25")
            skipped["bm25"] = "bm25s is not installed (pip install -e '.[bench]'): ranker skipped"
            print(f"bm25: skipped: {skipped['bm25']}", file=sys.stderr)
    with history.Checkout(repo) as checkout:
        async with contextlib.AsyncExitStack() as stack:
            files = _goto(checkout, tasks[0], unreadable) if tasks else {}
            client, schema, variants = None, {}, []
            if "task_context" in names and tasks:
                # The server starts on the first state and stays for the walk: the checkout moves under it.
                try:
                    client = await stack.enter_async_context(
                        _server(checkout.path, {"XDG_CACHE_HOME": str(checkout.tmp)}))
                    tools = {t.name: t for t in (await client.list_tools()).tools}
                except Exception as exc:  # a server that cannot start skips its ranker
                    client, tools = None, None
                    skipped["task_context"] = f"`repoctx serve` did not start ({exc!r:.300}): ranker skipped"
                    print(f"task_context: skipped: {skipped['task_context']}", file=sys.stderr)
                if tools is None:
                    pass
                elif rankers.TOOL not in tools:
                    skipped["task_context"] = (f"`{rankers.TOOL}` is not listed by `repoctx serve` "
                                               f"({len(tools)} tools): ranker skipped")
                    print(f"task_context: skipped: {skipped['task_context']}", file=sys.stderr)
                    client = None
                else:
                    schema = tools[rankers.TOOL].input_schema or {}
                    variants = [("task_context", None)]
                    if ablate is not None:
                        signals = rankers.schema_signals(schema) if ablate == "schema" else \
                            [s for s in ablate.split(",") if s]
                        if not signals:
                            print("--ablate: the tool's schema lists no signals_off names; pass them: "
                                  "--ablate NAME,NAME", file=sys.stderr)
                        variants += [(f"task_context -{s}", [s]) for s in signals]
            started = time.monotonic()
            for i, task in enumerate(tasks):
                _progress(i, len(tasks), task, started)
                if i:
                    files = _goto(checkout, task, unreadable)
                if files is None:
                    continue
                state = rankers.State(files, count, memo)
                row = {"sha": task.sha, "parent": task.parent, "date": task.date, "subject": task.subject,
                       "query": task.query, "gold": {p: _ranges(ls) for p, ls in task.gold.items()},
                       "gold_lines": sum(len(ls) for ls in task.gold.values()), "added": task.added,
                       "candidates": len(state.paths), "rankers": {}}
                for name, signals_off in variants if client is not None else []:
                    answer = await rankers.task_context(client, schema, task.query, state, budgets, count, signals_off)
                    row["rankers"][name] = score(answer, task, budgets)
                for name in baselines:
                    row["rankers"][name] = score(rankers.BASELINES[name](task.query, state, budgets), task, budgets)
                rows.append(row)
                live = {f.blob for f in files.values()}
                for key in [k for k in memo if k[1] not in live]:
                    del memo[key]  # keep only what the current state's blobs need
        warnings = _history_warnings(checkout, rows)
    return rows, skipped, unreadable, warnings


def _ranges(lines: list[int]) -> list[list[int]]:
    """Sorted lines as [first, last] runs, for a compact JSON."""
    out: list[list[int]] = []
    for n in lines:
        if out and out[-1][1] == n - 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


# --- reports ---------------------------------------------------------------------


def _k(budget: int) -> str:
    return f"{budget // 1000}k" if budget % 1000 == 0 else str(budget)


def _f(value, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


def _table(rankers: dict, budgets: list[int]) -> list[str]:
    lines = ["| ranker | recall@5 | recall@10 | MRR | " + " | ".join(f"coverage@{_k(b)}" for b in budgets)
             + " | p50 ms |",
             "|---|---|---|---|" + "---|" * len(budgets) + "---|"]
    for name, s in rankers.items():
        lines.append(f"| {name} | {_f(s['recall@5'])} | {_f(s['recall@10'])} | {_f(s['mrr'])} | "
                     + " | ".join(_f(s["coverage"][str(b)]) for b in budgets) + f" | {_f(s['p50_ms'], '.1f')} |")
    return lines


def _against_bm25(rankers: dict, budgets: list[int]) -> list[str]:
    """The issue's bar, read off the table: task_context's recall@10 over BM25's, its coverage at
    the smallest budget and that as a multiple of BM25's whole-file bundle."""
    ours, bm25 = rankers.get("task_context"), rankers.get("bm25")
    if not ours or not bm25 or ours["recall@10"] is None or bm25["recall@10"] is None:
        return []
    b = str(budgets[0])
    mine, theirs = ours["coverage"][b], bm25["coverage"][b]
    times = "n/a" if not mine or not theirs else f"{mine / theirs:.2f} ×"
    return ["", f"task_context against BM25: recall@10 {ours['recall@10'] - bm25['recall@10']:+.3f}; "
                f"coverage@{_k(budgets[0])} {_f(mine)}, {times} BM25's whole-file bundle."]


def markdown(report: dict) -> str:
    budgets = report["budgets"]
    lines = [f"# Quality — {report['machine']['date']}", "",
             *(f"**{w}**\n" for w in report.get("warnings", [])),
             f"Repository `{report['repo']}` at {report['rev'][:10]}: {report['tasks']} tasks of the "
             f"{report['half']} half ({report['selected']} commits selected, "
             f"{report['range']['oldest'][:10]}..{report['range']['newest'][:10]}); "
             f"tokens counted by {report['tokenizer']}.", "", *_table(report["rankers"], budgets),
             *_against_bm25(report["rankers"], budgets)]
    if report.get("bar"):
        lines += ["", quality_bar.sentence(report["bar"])]
    languages = report.get("languages", {})
    if len(languages) > 1:
        for lang, rankers in languages.items():
            tasks = next(iter(rankers.values()))["tasks"] if rankers else 0
            what = "of more than one language" if lang == "mixed" else lang
            lines += ["", f"## Tasks whose gold files are {what}: {tasks}", "", *_table(rankers, budgets),
                      *_against_bm25(rankers, budgets)]
    unreadable = report.get("unreadable", {})
    if unreadable.get("tasks") or unreadable.get("selection"):
        lines.append(f"\n{unreadable['tasks']} tasks skipped (their state cannot be checked out) and "
                     f"{len(unreadable['selection'])} commits passed over (their changed lines cannot be read).")
    for name, why in report["skipped"].items():
        lines.append(f"\n{name}: {why}")
    return "\n".join(lines)


def plot(report: dict, path: Path) -> None:
    """Bars of recall@10 and of coverage at each budget, per ranker."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install -e '.[bench]')", file=sys.stderr)
        return
    names = list(report["rankers"])
    series = [("recall@10", [report["rankers"][n]["recall@10"] or 0 for n in names])]
    series += [(f"coverage@{_k(b)}", [report["rankers"][n]["coverage"][str(b)] or 0 for n in names])
               for b in report["budgets"]]
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(names) + 2), 4))
    width = 0.8 / len(series)
    for j, (label, values) in enumerate(series):
        xs = [i + (j - (len(series) - 1) / 2) * width for i in range(len(names))]
        bars = ax.bar(xs, values, width, label=label)
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.set_xticks(range(len(names)), names)
    ax.set(ylim=(0, 1.05), ylabel="share",
           title=f"{Path(report['repo']).name}: {report['tasks']} tasks ({report['half']} half)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}", file=sys.stderr)


def versions() -> dict:
    from importlib import metadata

    out = {}
    for name in ("bm25s", "numpy", "matplotlib"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


# --- the command -----------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benches quality", description=__doc__.split("\n\n")[0])
    p.add_argument("--repo", required=True, type=Path, action="append",
                   help="the git repository whose history is the benchmark (only read: a private clone under a "
                        "temporary directory is walked); given more than once, each is run on its own (--jobs at a "
                        "time), its reports under --out/NAME/ and its progress in --out/NAME.log, and the bar "
                        "over all of them is printed and written to --out/bar.md")
    p.add_argument("--jobs", type=int, default=1, help="with several --repo: how many run at once (default 1)")
    p.add_argument("--rev", default="HEAD", help="the newest commit to consider (default HEAD)")
    p.add_argument("--n", type=int, default=100, help="the last N qualifying commits, before the split (default 100)")
    p.add_argument("--budgets", default="8000,32000", help="token budgets of the bundles (default 8000,32000)")
    p.add_argument("--rankers", default=",".join(DEFAULT_RANKERS),
                   help=f"comma-separated, of {', '.join(DEFAULT_RANKERS)} (default: all)")
    p.add_argument("--held-out", action="store_true",
                   help="report the held-out half (for final figures only) instead of the tuning half")
    p.add_argument("--ablate", nargs="?", const="schema", metavar="SIGNAL,…",
                   help="also run task_context once per signal with that signal off (signals_off); "
                        "the names from the tool's schema when none are given")
    p.add_argument("--tokenizer", help="bytes4, o200k or cl100k (default: the repository's .repoctx/config.yaml, "
                   "else bytes4, as repoctx counts)")
    p.add_argument("--out", type=Path, default=OUT, help="directory for the reports (default benches/out/)")
    return p


def run(args: argparse.Namespace) -> dict:
    import anyio

    from benches.machine import machine
    from repoctx.base import tokens

    repo = args.repo.resolve()
    budgets = sorted({int(b) for b in args.budgets.split(",") if b.strip()})
    names = [n.strip() for n in args.rankers.split(",") if n.strip()]
    unknown = set(names) - set(DEFAULT_RANKERS)
    if unknown:
        raise SystemExit(f"unknown rankers: {', '.join(sorted(unknown))}; known: {', '.join(DEFAULT_RANKERS)}")
    tokenizer = args.tokenizer
    if tokenizer is None:
        from repoctx.formats import config as config_format

        try:
            tokenizer = config_format.load(str(repo)).tokenizer
        except config_format.ConfigError:
            tokenizer = "bytes4"
    count = tokens.counter(tokenizer)
    rev = history.git(repo, "rev-parse", "--verify", f"{args.rev}^{{commit}}").strip()
    half = "held-out" if args.held_out else "tuning"

    print(f"selecting the last {args.n} qualifying commits of {repo} from {rev[:10]}…", file=sys.stderr)
    unread_lines: list[str] = []
    with history.Checkout(repo) as clone:  # selection reads the private clone, not the repository
        selected = history.select(clone.path, rev, args.n, unreadable=unread_lines)
    tasks = [t for t in selected if t.half == half]
    print(f"{len(selected)} commits selected, {len(tasks)} in the {half} half", file=sys.stderr)
    if unread_lines:
        print(f"{len(unread_lines)} commits passed over: their changed lines cannot be read", file=sys.stderr)
    started = time.monotonic()
    rows, skipped, unreadable, warnings = anyio.run(walk, repo, tasks, budgets, names, count, args.ablate)
    if unreadable:
        print(f"{len(unreadable)} of {len(tasks)} tasks skipped: their state cannot be checked out", file=sys.stderr)
    ranked = list(dict.fromkeys(k for r in rows for k in r["rankers"]))  # in the order they ran
    try:
        where = machine()
    except Exception as exc:  # the figures stand without every version
        import datetime as dt
        import platform

        where = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "cpus": os.cpu_count(),
                 "platform": platform.platform(), "python": platform.python_version(), "error": repr(exc)}
    return {
        "machine": where,
        "versions": versions(),
        "repo": str(repo),
        "rev": rev,
        "half": half,
        "selected": len(selected),
        "tasks": len(rows),
        "unreadable": {"tasks": len(unreadable), "skipped": unreadable, "selection": unread_lines},
        "range": {"oldest": selected[0].sha if selected else "", "newest": selected[-1].sha if selected else ""},
        "budgets": budgets,
        "tokenizer": tokenizer,
        "definitions": DEFINITIONS,
        "walk_s": time.monotonic() - started,
        "rankers": {n: summarise(n, rows, budgets) for n in ranked},
        "languages": by_language(rows, ranked, budgets),
        "bar": quality_bar.bar(rows),
        "skipped": skipped,
        "warnings": warnings,
        "commits": rows,
    }


def _one_repo_argv(args: argparse.Namespace, repo: Path, out: Path) -> list[str]:
    """The command line of one repository's run in a run over many."""
    argv = ["--repo", str(repo), "--rev", args.rev, "--n", str(args.n), "--budgets", args.budgets,
            "--rankers", args.rankers, "--out", str(out)]
    if args.held_out:
        argv.append("--held-out")
    if args.ablate is not None:
        argv.append(f"--ablate={args.ablate}")
    if args.tokenizer:
        argv += ["--tokenizer", args.tokenizer]
    return argv


def run_many(args: argparse.Namespace) -> int:
    """Each repository in its own process, `--jobs` at a time; then the bar over them all."""
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    repos = [r.resolve() for r in args.repo]  # the runs' working directory is this project's
    names = [r.name for r in repos]
    if len(set(names)) < len(names):
        parser().error("two --repo share a directory name; their reports would share --out/NAME")
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    def one(repo: Path) -> tuple[str, int]:
        with open(out / f"{repo.name}.log", "w") as log:
            rc = subprocess.run([sys.executable, "-m", "benches", "quality", *_one_repo_argv(args, repo, out / repo.name)],
                                cwd=Path(__file__).resolve().parents[1], stdout=log, stderr=subprocess.STDOUT).returncode
        print(f"{repo.name}: {'done' if rc == 0 else f'failed (exit {rc}), see {out / repo.name}.log'}", file=sys.stderr)
        return repo.name, rc

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        failed = [name for name, rc in pool.map(one, repos) if rc != 0]
    reports = quality_bar.load([out / n for n in names if n not in failed])
    if reports:
        text = quality_bar.table(reports)
        (out / "bar.md").write_text(text + "\n")
        print(text)
    if failed:
        print(f"{len(failed)} of {len(names)} failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    for repo in args.repo:
        try:
            history.git(repo, "rev-parse", "--verify", f"{args.rev}^{{commit}}")
        except (RuntimeError, OSError) as exc:
            parser().error(f"--repo {repo}: not a git repository with {args.rev} ({exc})")
    if len(args.repo) > 1:
        return run_many(args)
    args.repo = args.repo[0]
    report = run(args)
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = report["machine"]["date"].replace(":", "").replace("+0000", "Z")
    base = args.out / f"{stamp}-quality"
    base.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    base.with_suffix(".md").write_text(text + "\n")
    plot(report, base.with_suffix(".png"))
    print(f"report: {base}.json, .md", file=sys.stderr)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
