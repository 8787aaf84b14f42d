"""The rankers `python -m benches quality` compares, each turning (task text, repository state)
into a ranking of files and, per token budget, a bundle of line ranges.

- `bm25`: BM25 (bm25s, Lucene variant, k1=1.5, b=0.75) over whole files;
- `path`: the task's words against the words of each file's path;
- `engine`: repoctx's context engine (`_core.CacheView`), word counts over whole files;
- `task_context`: repoctx's `task_context` tool over MCP (`task_context` below; async).

The baselines' bundles are whole files in rank order, each added when it fits what is left of
the budget (a file that does not fit is passed over, not the end of the bundle).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from benches.quality_history import SourceFile

Bundle = list[tuple[str, int, int]]  # (path, first line, last line), 1-based inclusive


@dataclass
class Answer:
    ranking: list[str]
    bundles: dict[int, Bundle]  # budget -> what the bundle shows
    tokens: dict[int, int]  # budget -> the bundle's tokens, counted by the harness
    seconds: list[float] = field(default_factory=list)  # each timed call (one per query for the baselines)
    error: str | None = None
    cochange: bool = False  # a file's `why` says it changed with another: the history signal spoke


class State:
    """One repository state: its source files, with per-blob caches of what rankers derive."""

    def __init__(self, files: dict[str, SourceFile], count: Callable[[str], int], memo: dict) -> None:
        self.files = files
        self.paths = sorted(files)
        self._count, self._memo = count, memo

    def tokens(self, path: str) -> int:
        f = self.files[path]
        key = ("tokens", f.blob)
        if key not in self._memo:
            self._memo[key] = self._count(f.text)
        return self._memo[key]

    def words(self, path: str) -> list[str]:
        f = self.files[path]
        key = ("words", f.blob)
        if key not in self._memo:
            self._memo[key] = words(f.text)
        return self._memo[key]


def whole_files(state: State, ranking: list[str], budgets: list[int]) -> tuple[dict[int, Bundle], dict[int, int]]:
    """Whole files in rank order, each added when it fits the rest of the budget."""
    bundles, used = {}, {}
    for budget in budgets:
        chosen, total = [], 0
        for path in ranking:
            t = state.tokens(path)
            if total + t <= budget:
                total += t
                chosen.append((path, 1, state.files[path].lines))
        bundles[budget], used[budget] = chosen, total
    return bundles, used


# --- words --------------------------------------------------------------------

_RUN = re.compile(r"[A-Za-z0-9]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Lucene's English stop words (bm25s's STOPWORDS_EN), kept here so `words` is the same with
# or without bm25s installed.
STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with".split())


def words(text: str) -> list[str]:
    """Identifier-aware words, for queries, documents and paths alike: runs of ASCII letters and
    digits (so `_`, `.`, `/`, `-` separate), each split on case changes and digits
    (`parseHTTPResponse2` -> parse, http, response, 2), lowercased; Lucene's English stop words
    and one-character words dropped."""
    out = []
    for run in _RUN.findall(text):
        for part in _PART.findall(run):
            w = part.lower()
            if len(w) > 1 and w not in STOPWORDS:
                out.append(w)
    return out


# --- baselines ------------------------------------------------------------------


def bm25(query: str, state: State, budgets: list[int]) -> Answer:
    """BM25 over whole files (bm25s, its defaults: Lucene, k1 1.5, b 0.75), documents and query
    tokenised by `words`; the index is built for each state (its time is the query's)."""
    import bm25s

    start = time.perf_counter()
    corpus = [state.words(p) for p in state.paths]
    q = words(query)
    ranking: list[str] = []
    if q and state.paths:
        retriever = bm25s.BM25()
        retriever.index(corpus, show_progress=False)
        scores = retriever.get_scores(q)
        ranking = [p for s, p in sorted(zip((-float(s) for s in scores), state.paths)) if s < 0]
    elapsed = time.perf_counter() - start
    bundles, used = whole_files(state, ranking, budgets)
    return Answer(ranking, bundles, used, [elapsed])


def path_score(query_words: set[str], path: str) -> int:
    """2 for each query word among the file name's words (extension dropped), else 1 for each
    among the directories' words."""
    *dirs, name = path.split("/")
    stem = name.rsplit(".", 1)[0]
    in_name = set(words(stem))
    in_dirs = {w for d in dirs for w in words(d)}
    return sum(2 if w in in_name else 1 if w in in_dirs else 0 for w in query_words)


def path_match(query: str, state: State, budgets: list[int]) -> Answer:
    """Files whose path shares words with the task, by `path_score`, ties by path."""
    start = time.perf_counter()
    q = set(words(query))
    scored = [(-path_score(q, p), p) for p in state.paths]
    ranking = [p for s, p in sorted(scored) if s < 0]
    elapsed = time.perf_counter() - start
    bundles, used = whole_files(state, ranking, budgets)
    return Answer(ranking, bundles, used, [elapsed])


def engine(query: str, state: State, budgets: list[int]) -> Answer:
    """repoctx's context engine over the source files as documents (id = path): its ranking is
    the documents it scores above 0 (term matches / words, ties by id), its bundle at a budget
    what `resolve` selects (whole documents, ceil(bytes/4) tokens each, filled with 0-score
    documents in id order once the matches are in, as the engine does)."""
    from repoctx import _core

    start = time.perf_counter()
    view = _core.CacheView.from_documents([(p, "v0", state.files[p].text) for p in state.paths])
    everything = sum(len(state.files[p].text.encode()) for p in state.paths) + 1
    docs = json.loads(view.resolve(query, everything))["documents"]
    ranking = [d["id"] for d in docs if d["score"] > 0]
    elapsed = time.perf_counter() - start
    bundles, used = {}, {}
    for budget in budgets:
        picked = [d["id"] for d in json.loads(view.resolve(query, budget))["documents"]]
        bundles[budget] = [(p, 1, state.files[p].lines) for p in picked]
        used[budget] = sum(state.tokens(p) for p in picked)
    return Answer(ranking, bundles, used, [elapsed])


BASELINES: dict[str, Callable[[str, State, list[int]], Answer]] = {"bm25": bm25, "path": path_match, "engine": engine}


# --- task_context over MCP ---------------------------------------------------------

TOOL = "task_context"


# How `why` names the history signal's tie (rust/tasks/rank.rs, history_signal).
COCHANGE = "changed with "


def task_context_args(schema: dict, query: str, budget: int, signals_off: list[str] | None) -> dict:
    """The arguments of one `task_context` call. The tool is planned as
    `{"task": str, "budget": int, "signals_off": [names]}`; the task's own key is taken from the
    tool's input schema if it names another (query, text)."""
    props = (schema or {}).get("properties", {})
    key = next((k for k in ("task", "query", "text") if k in props), "task")
    args = {key: query, "budget": budget}
    if signals_off:
        args["signals_off"] = signals_off  # the ablation hook: one signal off per ranker row
    return args


def schema_signals(schema: dict) -> list[str]:
    """The signal names the tool's schema lists for `signals_off` (an enum of its items), if any."""
    items = ((schema or {}).get("properties", {}).get("signals_off") or {}).get("items") or {}
    return list(items.get("enum") or [])


def parse_result(result) -> dict:
    """The JSON of a tool result: its structured content, else its first text block."""
    if result.structured_content is not None:
        return result.structured_content
    for block in result.content or []:
        if getattr(block, "text", None):
            return json.loads(block.text)
    return {}


async def task_context(client, schema: dict, query: str, state: State, budgets: list[int], count,
                       signals_off: list[str] | None = None) -> Answer:
    """One call per budget; the ranking is that of the largest budget's call, each bundle what
    that budget's call returned (its texts counted again by the harness's tokenizer)."""
    answer = Answer([], {}, {}, [])
    for budget in sorted(budgets, reverse=True):
        start = time.perf_counter()
        try:
            result = await client.call_tool(TOOL, task_context_args(schema, query, budget, signals_off))
        except Exception as exc:  # recorded on the task's row, the walk goes on
            answer.error = f"call failed: {exc!r:.300}"
            answer.bundles[budget], answer.tokens[budget] = [], 0
            continue
        answer.seconds.append(time.perf_counter() - start)
        try:
            data = parse_result(result)
        except (ValueError, TypeError) as exc:
            data = {"error": f"unreadable result: {exc}"}
        if result.is_error or "files" not in data:
            answer.error = str(data.get("error") or data)[:500]
            answer.bundles[budget], answer.tokens[budget] = [], 0
            continue
        if not answer.ranking:
            answer.ranking = [f["path"] for f in data["files"]]
            answer.cochange = any(COCHANGE in f.get("why", "") for f in data["files"])
        entries = data.get("bundle") or []
        answer.bundles[budget] = [(e["path"], int(e["start"]), int(e["end"])) for e in entries]
        answer.tokens[budget] = sum(count(e.get("text", "")) for e in entries)
    return answer
