"""Properties of selection and builds, against a plain-Python oracle of the spec.

The oracle reads context_selection.md literally: lowercase, split on Unicode
White_Space, count words equal to a query term, score = matches / words as a
32-bit float, order by (score desc, id bytes asc), take greedily what fits
(budget 0 takes nothing), tokens = ceil(UTF-8 bytes / 4).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repoctx import _core
from repoctx.base.workspace import Workspace
from repoctx.caches import engine as caches

WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
SPLIT = re.compile("[" + re.escape(WHITESPACE) + "]+")
# Letters whose lowercase Python and Rust agree on (final sigma, dotted İ, ß included), punctuation
# that sticks to words, characters Python's str.split() would split on but Unicode does not (\x1c),
# and a zero-width space that is not whitespace either.
LETTERS = "abcABCdeDEÉéßΣσςΑİ日本🚀.,:\x1c\u200b"
text = st.text(st.sampled_from(list(LETTERS) + list(" \t\n\u00a0\u3000\u2028")), max_size=40)
word = st.text(st.sampled_from(list("abcABCÉéΣσİ日")), min_size=1, max_size=3)


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def words(s: str) -> list[str]:
    return [w for w in SPLIT.split(s.lower()) if w]


def oracle(docs: list[tuple[str, str, str]], query: str, budget: int) -> dict:
    terms = words(query)
    wanted = set(terms)
    scored = []
    for doc_id, version, content in docs:
        ws = words(content)
        matches = sum(w in wanted for w in ws)
        scored.append({
            "id": doc_id, "version": version, "content": content,
            "score": f32(f32(matches) / f32(len(ws))) if ws else 0.0,
            "tokens": -(-len(content.encode()) // 4),
            "why": {"query_terms": terms, "term_matches": matches, "total_words": len(ws)},
        })
    scored.sort(key=lambda d: (-d["score"], d["id"].encode()))
    selected, used = [], 0
    for d in scored if budget > 0 else []:
        if used + d["tokens"] <= budget:
            selected.append(d)
            used += d["tokens"]
    return {"documents": selected, "selection": {
        "query": query, "budget": budget, "tokens_used": used, "documents_considered": len(docs),
        "documents_selected": len(selected), "documents_excluded_by_budget": len(docs) - len(selected)}}


def shortest_digits(x: float) -> int:
    """Significant digits of the shortest decimal that reads back as the same f32."""
    return next(d for d in range(1, 10) if f32(float(f"{x:.{d}g}")) == x)


def significant_digits(token: str) -> int:
    """Digits of a printed number without its point, exponent and padding zeros ("1.0" -> 1)."""
    return len(token.split("e")[0].replace(".", "").strip("0")) or 1


def score_tokens(text: str) -> list[str]:
    return re.findall(r'"score":([^,]+),', text)


documents = st.lists(st.tuples(word, text), max_size=12, unique_by=lambda d: d[0]).map(
    lambda ds: [(f"{i}{name}.md", "sha256:" + hashlib.sha256(c.encode()).hexdigest(), c) for i, (name, c) in enumerate(ds)]
)
budgets = st.one_of(st.integers(0, 40), st.just(2**63 - 1))


@settings(max_examples=150, deadline=None)
@given(docs=documents, query=st.one_of(text, st.lists(word, max_size=4).map(" ".join)), budget=budgets, seed=st.integers(0, 9))
def test_rust_selection_matches_the_oracle(docs, query, budget, seed):
    shuffled = list(docs)
    random.Random(seed).shuffle(shuffled)
    out_text = _core.CacheView.from_documents(shuffled).resolve(query, budget)
    assert _core.CacheView.from_documents(docs).resolve(query, budget) == out_text  # input order is irrelevant
    out, want = json.loads(out_text), oracle(docs, query, budget)
    for got_doc, want_doc in zip(out["documents"], want["documents"]):
        assert f32(got_doc["score"]) == want_doc["score"]
        got_doc["score"] = want_doc["score"]
    assert out == want
    for token, doc in zip(score_tokens(out_text), want["documents"]):
        assert significant_digits(token) == shortest_digits(doc["score"]), token  # shortest round trip
    # The invariants, said directly.
    ranked = [(-d["score"], d["id"].encode()) for d in out["documents"]]
    assert ranked == sorted(ranked) and len(set(ranked)) == len(ranked)  # total, strict order
    assert out["selection"]["tokens_used"] == sum(d["tokens"] for d in out["documents"]) <= budget
    assert all(0.0 <= d["score"] <= 1.0 for d in out["documents"])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=st.dictionaries(st.text(st.sampled_from("abcXY_-"), min_size=1, max_size=6), text, max_size=6))
def test_rebuilding_gives_the_same_cache_version(files):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        src = tmp / "src"
        src.mkdir()
        distinct = {}
        for name, content in files.items():
            key = name.lower()
            if key in {k.lower() for k in distinct} or content in distinct.values():
                continue  # ids must be unique and contents distinct (one document file each)
            distinct[name] = content
            (src / f"{name}.md").write_text(content, encoding="utf-8", newline="")
        ws = Workspace.open(tmp, cache_root=tmp / "caches")
        first = caches.build(ws, caches.BuildParams(sources=str(src), cache="one"))
        second = caches.build(ws, caches.BuildParams(sources=str(src), cache="two"))
        assert first.cache_version == second.cache_version
        h = hashlib.sha256(b'{"version":"1","hash_algorithm":"sha256"}')
        for name in sorted(f"{n.lower()}.md" for n in distinct):
            content = next(c for n, c in distinct.items() if f"{n.lower()}.md" == name)
            h.update(f"{name}:sha256:{hashlib.sha256(content.encode()).hexdigest()}".encode())
        assert first.cache_version == "sha256:" + h.hexdigest()


@settings(max_examples=60, deadline=None)
@given(parts=st.lists(st.sampled_from(["a", "..", ".", "b", ""]), min_size=1, max_size=5))
def test_names_with_dotdot_or_absolute_never_resolve(parts):
    name = "/".join(parts)
    ws = Workspace.open("/nonexistent", cache_root="/nonexistent/caches")
    absolute = parts[0] == "" and len(parts) > 1
    if ".." in parts or absolute or not any(p not in ("", ".") for p in parts):
        with pytest.raises(caches.CacheError) as err:
            caches._name(ws, name)
        assert err.value.code == "cache_missing"
    else:
        base, rel, _ = caches._name(ws, name)
        assert ".." not in rel.split("/") and os.path.join(base, rel).startswith("/nonexistent/caches/")
