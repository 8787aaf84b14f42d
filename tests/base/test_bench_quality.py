"""The quality benchmark (`python -m benches quality`): which commits become tasks, their queries
and gold lines, the metrics, a ranker end to end on a history whose answers are known, and the
repository left exactly as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write
from repoctx import _core

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benches import quality, quality_big, quality_history, quality_rankers, quality_where  # noqa: E402

GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Ann",
           "GIT_AUTHOR_EMAIL": "ann@example.com", "GIT_COMMITTER_NAME": "Ann", "GIT_COMMITTER_EMAIL": "ann@example.com"}

APP = "import sys\n\ndef main(argv):\n    args = argv[1:]\n    if not args:\n        return 1\n    return run(args)\n"
UTIL = "def helper(value):\n    return value.strip()\n\ndef shout(value):\n    return value.upper()\n"
TOKENIZER = "def tokens(text):\n    parts = text.split(' ')\n    return parts\n"


def _git(repo: Path, *args: str, when: int = 0) -> str:
    date = f"2026-01-01T00:{when:02d}:00+00:00"
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout


def _commit(repo: Path, when: int, message: str) -> str:
    _git(repo, "add", "-A", when=when)
    _git(repo, "commit", "-q", "-m", message, when=when)
    return _git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def history(tmp_path):
    """A history with every kind of commit the selection must take or pass over."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    write(repo, "src/app.py", APP)
    write(repo, "src/util.py", UTIL)
    write(repo, "src/tokenizer.py", TOKENIZER)
    write(repo, "tests/test_app.py", "def test_main():\n    pass\n")
    write(repo, "README.md", "# demo\n")
    c = {"root": _commit(repo, 1, "Initial layout")}  # no parent: never a task
    # Line 3 replaced, a line inserted after line 6; a test file changed too (not gold).
    write(repo, "src/app.py", APP.replace("def main(argv):", "def main(argv=None):")
          .replace("        return 1\n", "        return 1\n    log(args)\n"))
    write(repo, "tests/test_app.py", "def test_main():\n    assert True\n")
    c["fix"] = _commit(repo, 2, "Fix parsing of empty input (#12)\n\nThe parser crashed on empty strings.\n\n"
                                "Signed-off-by: Ann <ann@example.com>\nCo-authored-by: Bob <bob@example.com>")
    write(repo, "README.md", "# demo\n\nSee src/.\n")
    write(repo, "tests/test_app.py", "def test_main():\n    assert 1\n")
    c["docs"] = _commit(repo, 3, "Docs: explain the layout")  # no non-test source file
    _git(repo, "checkout", "-q", "-b", "feature")
    write(repo, "src/tokenizer.py", "def tokens(text):\n    return text.split()\n")  # lines 2-3 become one
    c["tabs"] = _commit(repo, 4, "Teach the tokenizer about tabs")
    _git(repo, "checkout", "-q", "main")
    write(repo, "src/util.py", "from typing import Optional\n" + UTIL)  # an insertion at the top
    c["none"] = _commit(repo, 5, "Util: handle None (#7)")
    _git(repo, "merge", "-q", "--no-ff", "feature", "-m", "Merge branch 'feature' (#8)", when=6)
    c["merge"] = _git(repo, "rev-parse", "HEAD").strip()
    for i in range(1, 12):
        write(repo, f"pkg/plugin_{i:02d}.py", "X = 1\n")
    write(repo, "src/app.py", APP + "\n# plugins\n")
    c["twelve"] = _commit(repo, 7, "Add eleven plugins")  # 12 source files: too many
    (repo / "src/util.py").unlink()
    write(repo, "src/loader.py", "def load(name):\n    return name\n")
    c["loader"] = _commit(repo, 8, "Replace util with the plugin loader\n\nThe loader finds plugins by name.\n\n"
                                   "Reviewed-by: Carol <carol@example.com>\n")
    write(repo, "src/extra.py", "Y = 2\n")
    c["added"] = _commit(repo, 9, "Add a new module")  # only an added file: nothing to find
    # Work in progress the harness must leave alone.
    write(repo, "src/app.py", APP + "# unsaved\n")
    write(repo, "notes.txt", "untracked\n")
    return repo, c


def test_selection_queries_and_gold_lines(history):
    repo, c = history
    with quality_history.Checkout(repo) as clone:
        tasks = quality_history.select(clone.path, "HEAD", 10)
        last3 = quality_history.select(clone.path, "HEAD", 3)
    assert [t.sha for t in tasks] == [c["fix"], c["tabs"], c["none"], c["loader"]]
    assert [t.sha for t in last3] == [c["tabs"], c["none"], c["loader"]]
    by = {t.sha: t for t in tasks}
    assert [by[c[k]].parent for k in ("fix", "tabs", "none", "loader")] == [c["root"], c["docs"], c["docs"],
                                                                          c["twelve"]]
    assert by[c["fix"]].query == "Fix parsing of empty input\n\nThe parser crashed on empty strings."
    assert by[c["tabs"]].query == "Teach the tokenizer about tabs"
    assert by[c["none"]].query == "Util: handle None"
    assert by[c["loader"]].query == "Replace util with the plugin loader\n\nThe loader finds plugins by name."
    assert by[c["fix"]].gold == {"src/app.py": [3, 6]}  # a replaced line, and the line an insertion follows
    assert by[c["tabs"]].gold == {"src/tokenizer.py": [2, 3]}
    assert by[c["none"]].gold == {"src/util.py": [1]}  # an insertion at the top counts line 1
    assert by[c["loader"]].gold == {"src/util.py": [1, 2, 3, 4, 5, 6]}  # deleted: every line
    assert by[c["loader"]].added == ["src/loader.py"] and by[c["fix"]].added == []
    assert {t.half for t in tasks} <= {"tuning", "held-out"}
    assert all(t.half == quality_history.half(t.sha) for t in tasks)


def test_messages_lose_pull_request_numbers_and_trailers():
    clean = quality_history.clean_message
    assert clean("Speed up the walk (#1234)\n\nCo-authored-by: X <x@y>\n") == "Speed up the walk"
    assert clean("Fix it (#1, #2)\n\nBody (#3) stays.\n\nFixes: #3\nRefs: abc\n") == "Fix it\n\nBody stays."
    assert clean("Note: the subject looks like a trailer") == "Note: the subject looks like a trailer"
    assert clean("Subject\n\nSigned-off-by: A <a@b>\nKept: because a trailer block must be the last "
                 "paragraph\n\nLast words.") == ("Subject\n\nKept: because a trailer block must be the last "
                                                  "paragraph\n\nLast words.")
    assert quality_history.is_test("pkg/tests/a.py") and quality_history.is_test("src/a_test.go")
    assert quality_history.is_test("web/b.spec.ts") and quality_history.is_test("test_x.py")
    assert not quality_history.is_test("src/testing_utils.py") and not quality_history.is_test("src/contest.py")
    assert quality_history.is_test("Tests/SessionTests.swift") and quality_history.is_test("src/Polly.Core.Tests/A.cs")
    assert not quality_history.is_test("src/Polly.Testing/A.cs") and quality_history.is_source("src/a.hpp")
    assert not quality_history.is_test(".tests/a.cs"), "as the core tells it: a test project has a name"
    assert quality_history.is_test("lib/cart_spec.rb") and not quality_history.is_test("lib/spec.rb")
    assert quality_history.is_source("lib/cart.rb")
    assert all(map(quality_history.is_source, ("lib/cart.ex", "mix.exs", "lua/cart.lua", "src/Cart.hs", "src/cart.zig",
                                               "lib/Cart.pm", "script/cart.pl", "R/cart.R", "src/Cart.jl")))
    assert quality_history.is_test("test/cart_test.exs") and quality_history.is_test("spec/cart_spec.lua")
    assert all(_core.file_kind(f"a{suffix}").code for suffix in quality_history.SOURCE_SUFFIXES), (
        "the harness's source files are code to repoctx")


def test_metrics_on_constructed_answers():
    gold = {"a.py", "b.py"}
    ranking = ["x.py", "b.py", "y.py", "z.py", "w.py", "a.py"]
    assert quality.recall(ranking, gold, 5) == 0.5
    assert quality.recall(ranking, gold, 10) == 1.0
    assert quality.reciprocal_rank(ranking, gold) == 0.5
    assert quality.reciprocal_rank(["x.py"], gold) == 0.0
    lines = {"a.py": [1, 2, 10], "b.py": [5]}
    assert quality.coverage([("a.py", 1, 2), ("b.py", 6, 9), ("c.py", 1, 99)], lines) == 0.5
    assert quality.coverage([("a.py", 2, 10), ("a.py", 1, 1), ("b.py", 5, 5)], lines) == 1.0
    assert quality.coverage([], {"a.py": []}) is None
    assert quality_rankers.words("parseHTTPResponse2 of the task_context, in repoctx/base") == [
        "parse", "http", "response", "task", "context", "repoctx", "base"]


def test_figures_by_the_language_of_the_gold_and_against_bm25():
    def row(gold, ours, theirs):
        scored = lambda rr, cov: {"recall@5": rr, "recall@10": rr, "rr": rr, "coverage": {"8000": cov},  # noqa: E731
                                  "tokens": {"8000": 1}, "ms": [1.0]}
        return {"gold": gold, "rankers": {"task_context": scored(*ours), "bm25": scored(*theirs)}}

    rows = [row({"a.rs": []}, (1.0, 0.6), (0.5, 0.2)), row({"b.rs": [], "c.rs": []}, (0.0, 0.4), (0.5, 0.2)),
            row({"x.py": [], "y.pyi": []}, (1.0, 0.5), (1.0, 0.5)), row({"x.py": [], "m.rs": []}, (0.0, 0.0), (0.0, 0.0))]
    assert [quality.language(r["gold"]) for r in rows] == ["Rust", "Rust", "Python", "mixed"]
    langs = quality.by_language(rows, ["task_context", "bm25"], [8000])
    assert list(langs) == ["Rust", "Python", "mixed"], "most tasks first"
    assert langs["Rust"]["task_context"]["recall@10"] == 0.5 and langs["Rust"]["bm25"]["coverage"]["8000"] == 0.2
    report = {"machine": {"date": "d"}, "repo": "r", "rev": "0" * 40, "tasks": 4, "half": "tuning", "selected": 8,
              "range": {"oldest": "a", "newest": "b"}, "tokenizer": "bytes4", "budgets": [8000], "skipped": {},
              "rankers": quality.by_language(rows[:3], ["task_context", "bm25"], [8000])["Rust"], "languages": langs}
    text = quality.markdown(report)
    assert "task_context against BM25: recall@10 +0.000; coverage@8k 0.500, 2.50 × BM25's whole-file bundle." in text
    assert "## Tasks whose gold files are Rust: 2" in text and "of more than one language: 1" in text


def _snapshot(repo: Path) -> dict:
    """Every file of the repository, .git included, with its size and mtime."""
    out = {}
    for directory, _, names in os.walk(repo):
        for name in names:
            st = os.lstat(os.path.join(directory, name))
            out[os.path.relpath(os.path.join(directory, name), repo)] = (st.st_size, st.st_mtime_ns)
    return out


def _quality(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run([sys.executable, "-m", "benches", "quality", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_path_ranker_end_to_end_and_the_repository_unchanged(history, tmp_path):
    repo, c = history
    status = _git(repo, "status", "--porcelain")
    refs = _git(repo, "for-each-ref") + _git(repo, "rev-parse", "HEAD")
    before = _snapshot(repo)
    reports = []
    for half, extra in (("tuning", ["--rankers", "path,task_context"]), ("held-out", ["--held-out", "--rankers", "path"])):
        out = tmp_path / half
        proc = _quality("--repo", str(repo), "--n", "10", "--budgets", "5,8000", "--out", str(out), *extra)
        assert proc.returncode == 0, proc.stderr
        report = json.loads(next(out.glob("*-quality.json")).read_text())
        assert report["half"] == half and report["selected"] == 4
        assert next(out.glob("*-quality.md")).read_text().startswith("# Quality")
        reports.append(report)
        if "task_context" in report["rankers"]:  # once the tool exists, it answers every task
            assert report["rankers"]["task_context"]["tasks"] == report["tasks"]
        elif half == "tuning":
            assert "task_context: skipped" in proc.stderr and "task_context" in report["skipped"]
    assert _snapshot(repo) == before
    assert _git(repo, "status", "--porcelain") == status == " M src/app.py\n?? notes.txt\n"
    assert _git(repo, "for-each-ref") + _git(repo, "rev-parse", "HEAD") == refs

    rows = {r["sha"]: r for report in reports for r in report["commits"]}
    assert sorted(rows) == sorted(c[k] for k in ("fix", "tabs", "none", "loader"))
    for report in reports:
        assert all(quality_history.half(r["sha"]) == report["half"] for r in report["commits"])
    path = {k: rows[c[k]]["rankers"]["path"] for k in ("fix", "tabs", "none", "loader")}
    # No word of the fix's message is a word of a path: nothing ranked, nothing shown.
    assert path["fix"]["top10"] == [] and path["fix"]["rr"] == 0.0
    assert path["fix"]["coverage"] == {"5": 0.0, "8000": 0.0} and path["fix"]["tokens"] == {"5": 0, "8000": 0}
    # "tokenizer" names the file: first; at 5 tokens it does not fit, at 8,000 all of it is shown.
    assert path["tabs"]["top10"] == ["src/tokenizer.py"]
    assert (path["tabs"]["recall@5"], path["tabs"]["recall@10"], path["tabs"]["rr"]) == (1.0, 1.0, 1.0)
    assert path["tabs"]["coverage"] == {"5": 0.0, "8000": 1.0}
    assert path["tabs"]["tokens"] == {"5": 0, "8000": -(-len(TOKENIZER) // 4)}
    assert path["none"]["top10"] == ["src/util.py"] and path["none"]["coverage"]["8000"] == 1.0
    # "plugin" names eleven files as "util" names util.py (2 each); ties go by path: util.py is 12th.
    assert path["loader"]["gold_ranks"] == {"src/util.py": 12}
    assert (path["loader"]["recall@10"], path["loader"]["rr"]) == (0.0, 1 / 12)
    assert path["loader"]["coverage"] == {"5": 0.0, "8000": 1.0}
    assert path["loader"]["tokens"]["5"] == 4  # two 2-token plugins fit in 5, the next does not
    # Each row keeps the smallest budget's bundle, for benches/quality_where.py.
    assert path["tabs"]["shown"] == [] and len(path["loader"]["shown"]) == 2
    assert [(p[:11], s, e) for p, s, e in path["loader"]["shown"]] == [("pkg/plugin_", 1, 1)] * 2
    for report in reports:
        mine = [r["rankers"]["path"] for r in report["commits"]]
        assert report["rankers"]["path"]["mrr"] == pytest.approx(sum(r["rr"] for r in mine) / len(mine))


def test_where_the_lines_not_shown_in_a_large_file_sit(tmp_path):
    # big.py is over the 10-token budget: line 1 is shown, 4 is in f1 (partly shown), 10 in f2
    # (nothing of it shown), 15 outside both. small.py fits the budget: its line counts in the
    # task's total, not in a place.
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    big = ("def f1(x):\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    return x\n\n"
           "def f2(y):\n    e = 5\n    f = 6\n    g = 7\n    h = 8\n    return y\n\nX = 1\n")
    write(repo, "big.py", big)
    write(repo, "small.py", "Y = 2\n")
    sha = _commit(repo, 1, "two files")
    gold = {"big.py": [[1, 1], [4, 4], [10, 10], [15, 15]], "small.py": [[1, 1]]}
    row = {"top10": ["big.py", "small.py"], "shown": [["big.py", 1, 2], ["small.py", 1, 1]]}
    report = {"repo": str(repo), "budgets": [10, 40],
              "commits": [{"parent": sha, "gold": gold, "rankers": {"task_context": row}}]}
    got = quality_big.summary(report, "task_context")
    assert got["tasks"] == 1
    assert got["ranks"]["1"] == pytest.approx({
        "held": 4 / 5, "shown": 1 / 5, "in a definition partly shown": 1 / 5,
        "in a definition not shown": 1 / 5, "outside definitions": 1 / 5})
    assert got["ranks"]["2-10"] == dict.fromkeys(quality_big.PLACES, 0.0)


def test_where_the_lines_not_shown_went():
    # a.py ranked first: line 10 shown, 30 is 15 off, 300 is 250 off; b.py ranked 3rd, nothing
    # shown; c.py not ranked; d.py (ranked 2nd, no gold) takes 30 of the 60 lines shown.
    gold = {"a.py": [[10, 10], [30, 30], [300, 300]], "b.py": [[5, 5]], "c.py": [[1, 2]]}
    top10 = ["a.py", "d.py", "b.py"]
    shown = [["a.py", 1, 15], ["a.py", 41, 50], ["d.py", 1, 30], ["e.py", 1, 5]]
    got = quality_where.where(gold, top10, shown)
    assert got == pytest.approx({"shown": 1 / 6, "not ranked": 2 / 6, "ranked, none shown": 1 / 6,
                                 "<=20 off": 1 / 6, "21-200 off": 0.0, ">200 off": 1 / 6})
    assert sum(got.values()) == pytest.approx(1.0)
    assert quality_where.where({"a.py": []}, top10, shown) is None
    assert quality_where.spent(gold, top10, shown) == {
        "1": (25 / 60, 3 / 6, 1 / 6), "2": (30 / 60, 0.0, 0.0), "3-10": (0.0, 1 / 6, 0.0),
        "past 10": (5 / 60, 2 / 6, 0.0)}
    row = {"top10": top10, "shown": shown}
    report = {"repo": "/x/demo", "rankers": {"r": {}}, "commits": [
        {"gold": gold, "rankers": {"r": row}}, {"gold": {"a.py": [[1, 1]]}, "rankers": {"r": row}}]}
    s = quality_where.summary(report, "r")
    assert s["tasks"] == 2 and s["places"]["shown"] == pytest.approx((1 / 6 + 1) / 2)
    assert quality_where.summary({"commits": [{"gold": gold, "rankers": {"r": {"top10": []}}}]}, "r") == {"tasks": 0}


def test_bm25_ranks_the_file_with_the_task_s_identifiers():
    pytest.importorskip("bm25s")
    from repoctx.base.tokens import bytes4

    texts = {"src/cache.py": "def evict_stale_entries(cache):\n    pass\n",
             "src/walk.py": "def walk_tree(root):\n    return root\n",
             "src/noise.py": "x = 1\n" * 50}
    files = {p: quality_history.SourceFile(str(i), t, t.count("\n")) for i, (p, t) in enumerate(texts.items())}
    state = quality_rankers.State(files, bytes4, {})
    answer = quality_rankers.bm25("Evict stale entries from the cache", state, [10, 1000])
    assert answer.ranking == ["src/cache.py"]
    assert answer.bundles[1000] == [("src/cache.py", 1, 2)] and answer.bundles[10] == []


def test_task_context_answers_are_read_as_the_tool_will_return_them():
    """The MCP ranker against a stand-in client returning the planned JSON: ranking from the
    largest budget's files, each budget's bundle from its line ranges, the ablation argument."""
    import anyio

    calls = []

    class Result:
        def __init__(self, data):
            self.structured_content, self.content, self.is_error = data, [], False

    class Client:
        async def call_tool(self, name, args):
            calls.append((name, args))
            end = 3 if args["budget"] > 100 else 1
            return Result({"task": args["task"], "budget": args["budget"], "tokens": 5,
                           "files": [{"path": "b.py", "score": 2.0, "why": "", "regions": []},
                                     {"path": "a.py", "score": 1.0, "why": "", "regions": []}],
                           "bundle": [{"path": "a.py", "start": 2, "end": end, "text": "x" * 8}]})

    schema = {"properties": {"task": {}, "budget": {}, "signals_off": {"items": {"enum": ["graph", "recency"]}}}}
    assert quality_rankers.schema_signals(schema) == ["graph", "recency"]
    assert quality_rankers.task_context_args({"properties": {"query": {}}}, "q", 9, None) == {"query": "q", "budget": 9}
    answer = anyio.run(quality_rankers.task_context, Client(), schema, "fix a", None, [50, 500],
                       lambda t: len(t), ["graph"])
    assert calls == [("task_context", {"task": "fix a", "budget": 500, "signals_off": ["graph"]}),
                     ("task_context", {"task": "fix a", "budget": 50, "signals_off": ["graph"]})]
    assert answer.ranking == ["b.py", "a.py"] and answer.error is None and len(answer.seconds) == 2
    assert answer.bundles == {500: [("a.py", 2, 3)], 50: [("a.py", 2, 1)]} and answer.tokens == {500: 8, 50: 8}
    task = quality_history.Task("c" * 40, "p" * 40, "", "fix a", "fix a", {"a.py": [2, 3]})
    row = quality.score(answer, task, [50, 500])
    assert (row["recall@5"], row["rr"], row["coverage"]) == (1.0, 0.5, {"50": 0.0, "500": 1.0})


def test_a_state_git_cannot_check_out_skips_its_task_and_is_counted(tmp_path):
    """A snapshot lacking blobs (here deleted from the object store): a state lacking a source
    file's blob costs its task, counted in the report, not the run; one lacking only another
    file's blob is checked out without that file."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    write(repo, "src/app.py", APP)
    c = [_commit(repo, 1, "Initial layout")]
    write(repo, "tests/fixture.py", "RECORDS = []\n")  # a source file (a test): never gold
    write(repo, "notes.txt", "not source\n")
    write(repo, "src/app.py", APP.replace("argv[1:]", "argv[2:]"))
    c.append(_commit(repo, 2, "Skip the program name and the command"))  # its parent is whole
    write(repo, "src/app.py", APP.replace("argv[1:]", "list(argv[2:])"))
    c.append(_commit(repo, 3, "Copy the arguments"))  # its parent holds the fixture
    (repo / "tests/fixture.py").unlink()
    write(repo, "src/app.py", APP.replace("return 1", "return 2"))
    c.append(_commit(repo, 4, "Exit with 2 without arguments"))  # its parent holds the fixture
    write(repo, "src/app.py", APP.replace("return 1", "return 3"))
    c.append(_commit(repo, 5, "Exit with 3 without arguments"))  # its parent holds only notes.txt
    for path in ("tests/fixture.py", "notes.txt"):
        blob = _git(repo, "rev-parse", f"{c[1]}:{path}").strip()
        (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()

    tasks_of = {}
    for half, extra in (("tuning", []), ("held-out", ["--held-out"])):
        out = tmp_path / half
        proc = _quality("--repo", str(repo), "--n", "10", "--rankers", "path", "--out", str(out), *extra)
        assert proc.returncode == 0, proc.stderr
        report = json.loads(next(out.glob("*-quality.json")).read_text())
        assert report["selected"] == 4
        skipped = [s["sha"] for s in report["unreadable"]["skipped"]]
        assert report["unreadable"]["tasks"] == len(skipped)
        assert report["tasks"] + len(skipped) == len([t for t in c[1:] if quality_history.half(t) == half])
        tasks_of[half] = ([r["sha"] for r in report["commits"]], skipped)
        if skipped:
            assert "skipped: its parent cannot be checked out" in proc.stderr
            assert "tasks skipped (their state cannot be checked out)" in next(out.glob("*-quality.md")).read_text()
    answered = sorted(s for done, _ in tasks_of.values() for s in done)
    skipped = sorted(s for _, gone in tasks_of.values() for s in gone)
    assert answered == sorted([c[1], c[4]]) and skipped == sorted([c[2], c[3]])


def test_the_checkout_is_one_repoctx_reads_history_from_and_a_silent_history_is_told(history, tmp_path):
    """The walk's clone holds its own objects (no alternates: repoctx's git reader refuses
    them) and repoctx reads its history; a checkout the reader refuses, or a walk whose answers
    never name a file changed with another, is warned about."""
    from types import SimpleNamespace

    from repoctx import _core

    repo, c = history
    before = _snapshot(repo)

    def rows(spoke: int) -> list[dict]:  # three answered tasks, `spoke` of them with a co-change reason
        return [{"rankers": {"task_context": {"cochange": True} if i < spoke else {}}} for i in range(3)]

    with quality_history.Checkout(repo) as clone:
        clone.goto(c["loader"])
        assert not (clone.path / ".git/objects/info/alternates").exists()
        assert _core.GitRepo(str(clone.path)).head() == c["loader"]
        assert quality._history_warnings(clone, rows(1)) == []
        assert quality._history_warnings(clone, []) == []  # task_context did not run: nothing to say
        assert "none of task_context's 3 answers" in quality._history_warnings(clone, rows(0))[0]
    assert _snapshot(repo) == before
    shared = tmp_path / "shared"
    _git(tmp_path, "clone", "-q", "--shared", str(repo), str(shared))
    assert "reads no git from the checkout" in quality._history_warnings(SimpleNamespace(path=shared), rows(3))[0]


def test_many_repositories_each_in_its_own_run_then_the_bar_over_them(history, tmp_path):
    import shutil

    repo, _ = history
    other = tmp_path / "other"
    shutil.copytree(repo, other, symlinks=True)
    out = tmp_path / "many"
    # Relative paths, from another directory than the runs' own (this project's).
    proc = subprocess.run([sys.executable, "-m", "benches", "quality", "--repo", "repo", "--repo", "other",
                           "--jobs", "2", "--n", "10", "--budgets", "8000", "--rankers", "path", "--out", "many"],
                          cwd=tmp_path, env={**os.environ, **GIT_ENV, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "repo: done" in proc.stderr and "other: done" in proc.stderr
    for name in ("repo", "other"):
        report = json.loads(next((out / name).glob("*-quality.json")).read_text())
        assert Path(report["repo"]).name == name and report["half"] == "tuning" and "path" in report["rankers"]
        assert "commit 1 of" in (out / f"{name}.log").read_text()  # its progress, in its own log
    bar = (out / "bar.md").read_text()
    assert bar in proc.stdout and "| other | tuning |" in bar and "| repo | tuning |" in bar
    assert "needs task_context and bm25" in bar and "Met on 0 of 2." in bar

    same_name = tmp_path / "again" / "repo"
    shutil.copytree(repo, same_name, symlinks=True)
    clash = _quality("--repo", str(repo), "--repo", str(same_name), "--out", str(tmp_path / "clash"))
    assert clash.returncode == 2 and "share a directory name" in clash.stderr
    not_git = _quality("--repo", str(repo), "--repo", str(tmp_path / "many"), "--out", str(tmp_path / "x"))
    assert not_git.returncode == 2 and "not a git repository" in not_git.stderr
    assert not (tmp_path / "x").exists(), "nothing runs before every repository is checked"
