"""The core's errors as Python sees them: a refusal is a CoreRefused subclass whose facts are
named fields (never a ValueError read by position), and an OS error is the OSError Python
would raise itself, errno and filename kept."""

from __future__ import annotations

import errno
import os

import pytest

from repoctx import _core


def test_refused_yaml_names_its_facts_and_is_no_value_error():
    with pytest.raises(_core.YamlRefused) as caught:
        _core.yaml_to_json(b"a: 1\nb: [1, 2\n")
    exc = caught.value
    assert isinstance(exc, _core.CoreRefused) and not isinstance(exc, ValueError)
    assert exc.syntax is True and exc.line >= 2 and exc.column >= 1
    assert exc.reason and exc.message == exc.reason == str(exc)


def test_a_bound_is_refused_as_no_syntax_error():
    deep = b"a: " + b"[" * 10_000 + b"]" * 10_000
    with pytest.raises(_core.YamlRefused) as caught:
        _core.yaml_to_json(deep)
    assert caught.value.syntax is False and caught.value.line == 1


def test_a_refused_cache_names_the_contract_code(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / "A.md").write_text("one")
    (src / "a.md").write_text("two")  # one id on a case-insensitive reading: refused
    with pytest.raises(_core.CacheRefused) as caught:
        _core.build_cache(str(src), str(tmp_path), "out", False)
    exc = caught.value
    assert isinstance(exc, _core.CoreRefused) and not isinstance(exc, ValueError)
    assert exc.code == "cache_invalid" and exc.message == str(exc) and exc.message


@pytest.mark.parametrize("call", [
    lambda p: _core.walk(p, [], 10, 0),
    lambda p: _core.fingerprint(p),
    lambda p: _core.SourceIndex(p, "@", ["."]),
], ids=["walk", "fingerprint", "source_index"])
def test_an_os_error_keeps_errno_and_names_the_path(tmp_path, call):
    missing = str(tmp_path / "missing")
    with pytest.raises(FileNotFoundError) as caught:
        call(missing)
    assert caught.value.errno == errno.ENOENT and caught.value.strerror
    assert caught.value.filename == missing


def test_a_confined_read_keeps_errno(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        _core.fs_read(str(tmp_path), "absent.txt", 100)
    assert caught.value.errno == errno.ENOENT
    os.mkdir(tmp_path / "d")
    with pytest.raises(IsADirectoryError):
        _core.fs_read(str(tmp_path), "d", 100)
