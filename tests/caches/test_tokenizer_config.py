"""The `tokenizer` of .repoctx/config.yaml counts the mcp_context budget (the contract
calls it approximate), seen through `repoctx artifacts context --json`."""

from __future__ import annotations

import json
from pathlib import Path

from artifacts_fixture import copy_fixture
from conftest import run_cli, write
from repoctx import _core
from repoctx.base.tokens import bytes4


def _context(root: Path, budget: int) -> tuple[int, dict]:
    proc = run_cli("artifacts", "context", "TASK-001", "--budget", str(budget), "--json", cwd=root)
    return proc.returncode, json.loads(proc.stdout)


def _shortened(result: dict) -> list[str]:
    return [p["id"] for p in result["parts"] if p.get("depth") != p.get("requested")]


def _count(name: str, text: str) -> int:
    return bytes4(text) if name == "bytes4" else _core.count_tokens(name, [text])[0]


def test_bpe_tokenizer_counts_and_cuts_the_bundle(tmp_path):
    root = copy_fixture(tmp_path / "repo")

    def context(name: str, budget: int) -> dict:
        write(root, ".repoctx/config.yaml", f"tokenizer: {name}\n")
        rc, result = _context(root, budget)
        assert rc == 0, result
        assert result["tokens"] == _count(name, result["text"]) <= budget
        return result

    plain = context("bytes4", 10**6)
    for name in ("o200k", "cl100k"):
        bpe = context(name, 10**6)
        assert bpe["text"] == plain["text"] and bpe["tokens"] != plain["tokens"]
        # At the smaller of the two whole-bundle counts, the tokenizer that counts
        # more must shorten the bundle and the other need not.
        budget = min(bpe["tokens"], plain["tokens"])
        cuts = {n: _shortened(context(n, budget)) for n in ("bytes4", name)}
        more, fewer = ("bytes4", name) if plain["tokens"] > bpe["tokens"] else (name, "bytes4")
        assert cuts[more] and not cuts[fewer], cuts


def test_unknown_tokenizer_is_a_clear_error(tmp_path):
    root = copy_fixture(tmp_path / "repo")
    write(root, ".repoctx/config.yaml", "tokenizer: gpt2\n")
    proc = run_cli("artifacts", "context", "TASK-001", "--json", cwd=root)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert "tokenizer" in error and "gpt2" in error and "bytes4, o200k, cl100k" in error
