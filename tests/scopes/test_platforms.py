"""The rules docs/platforms.md defines for what file systems differ in: a scope is its
directories' names as stored, byte for byte (case and Unicode form included); answers list
scopes sorted by their UTF-8 bytes; and a context file checked out with CRLF keeps CRLF through every write."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest

from conftest import run_cli, write
from repoctx.scopes.read import named_as_stored
from sample_repo import write_context

NFC = unicodedata.normalize("NFC", "café")
NFD = unicodedata.normalize("NFD", "café")


def cli_json(root: Path, *args: str) -> dict:
    return json.loads(run_cli(*args, "--json", "--root", str(root)).stdout)


def folds_case(directory: Path) -> bool:
    """Whether the file system under `directory` opens a name typed in another case."""
    probe = directory / "Case-Probe"
    probe.mkdir()
    try:
        return (directory / "case-probe").exists()
    finally:
        probe.rmdir()


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    write(root, "src/main.py", "print('hi')\n" * 3000)
    write_context(root, "src", "Sources")
    write_context(root, ".", "Root")
    return root


def test_a_scope_typed_in_another_case_is_missing_on_every_os(repo):
    assert cli_json(repo, "check", "src")["state"] == "fresh"
    for typed in ("SRC", "Src"):
        checked = cli_json(repo, "check", typed)
        assert checked["state"] == "missing" and checked["scope"] == typed, checked
        shown = cli_json(repo, "show", typed)
        assert shown["found"] is False and 'No .context.yaml found at scope "' + typed in shown["error"]


def test_names_are_compared_byte_for_byte(repo):
    (repo / "src" / NFD).mkdir()
    assert named_as_stored(str(repo), "src") and named_as_stored(str(repo), f"src/{NFD}")
    assert not named_as_stored(str(repo), "SRC")
    assert not named_as_stored(str(repo), f"src/{NFC}"), "another Unicode form is another name"
    assert named_as_stored(str(repo), ".")


def test_names_differing_only_in_case_or_form_are_scopes_of_their_own_sorted_by_bytes(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    if folds_case(root):
        pytest.skip("this file system keeps one of two names that differ only in case")
    names = ["lib", "Lib", NFD, NFC, "z"]
    for name in names:
        write(root, f"{name}/m.py", "x = 1\n" * 10000)
    if len(os.listdir(root)) < len(names):
        pytest.skip("this file system keeps one name per Unicode form")
    scopes = [e["scope"] for e in cli_json(root, "status")["entries"]]
    assert scopes == [".", *sorted(names, key=str.encode)], scopes
    assert scopes[1:] == ["Lib", NFD, NFC, "lib", "z"]  # NFD's "e" + U+0301 sorts before NFC's U+00E9
    for name in names:
        write_context(root, name, f"about {name}")
        assert cli_json(root, "check", name)["state"] == "fresh"


def crlf(text: bytes) -> bytes:
    return text.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def test_a_crlf_context_file_keeps_crlf_through_every_write(repo):
    path = repo / "src" / ".context.yaml"
    run_cli("regen", "src", "--root", str(repo), check=True)
    lf = path.read_bytes()
    assert b"\r" not in lf, "a file written with LF stays LF"
    path.write_bytes(crlf(lf))
    before = path.stat().st_mtime_ns
    assert cli_json(repo, "check", "src")["state"] == "fresh", "a CRLF file reads as the same file"
    assert cli_json(repo, "show", "src")["context"]["summary"] == json.loads(
        run_cli("show", "src", "--json", "--root", str(repo)).stdout)["context"]["summary"]

    run_cli("regen", "src", "--root", str(repo), check=True)
    assert path.read_bytes() == crlf(lf) and path.stat().st_mtime_ns == before, "nothing changed: nothing written"

    (repo / "src" / "more.py").write_text("y = 2\n")
    for step in (["regen", "src"], ["rehash", "src"], ["update", "src", "--fields", '{"todos": ["a"]}']):
        run_cli(*step, "--root", str(repo), check=True)
        data = path.read_bytes()
        assert data.count(b"\n") == data.count(b"\r\n") > 5, (step, data)
        assert cli_json(repo, "check", "src")["state"] == "fresh", step

    # The same writes of an LF file give the same bytes but for the line ends.
    path.write_bytes(data.replace(b"\r\n", b"\n"))
    run_cli("update", "src", "--fields", '{"todos": ["b"]}', "--root", str(repo), check=True)
    lf_after = path.read_bytes()
    path.write_bytes(crlf(lf_after))
    run_cli("update", "src", "--fields", '{"todos": ["b"]}', "--root", str(repo), check=True)
    crlf_after = path.read_bytes()
    assert unstamped(crlf_after) == unstamped(lf_after) and b"\r\n" in crlf_after


def unstamped(text: bytes) -> list[bytes]:
    """The lines of a context file, LF or CRLF, but its last_updated."""
    return [line for line in text.replace(b"\r\n", b"\n").split(b"\n") if not line.startswith(b"last_updated")]
