"""Bounded parsing: every YAML, JSON and TOML file repoctx reads is parsed here, so no
input can crash the process or exhaust its memory (docs/security.md, "Bounded parsing").

YAML goes through the core's one reader (rust/yamlread.rs): nesting deeper than 128
levels, and aliases that would copy more than 1 MiB, are refused with the line and the
reason. msgspec and tomllib stop deep nesting at Python's recursion limit with a
RecursionError; here that becomes their own decode error, so a file nested too deep is
refused as a malformed one is, never answered with an internal error.
"""

from __future__ import annotations

from typing import Any

import msgspec

from repoctx import _core


class YamlError(ValueError):
    """A YAML document refused: the reason, the line (from 1) where it was seen, and whether
    it breaks the YAML syntax (else a bound, or a form the reader does not take)."""

    def __init__(self, reason: str, line: int, syntax: bool) -> None:
        super().__init__(f"{reason} at line {line}")
        self.reason, self.line, self.syntax = reason, line, syntax


def yaml(data: bytes | str) -> Any:
    """The one YAML document in `data` as plain data (None when it holds none)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")  # a lone surrogate is refused as not UTF-8
    try:
        text = _core.yaml_to_json(data)
    except ValueError as exc:
        raise YamlError(*exc.args) from None
    return msgspec.json.decode(text)


def json(data: bytes | str, type: Any = Any) -> Any:
    """msgspec.json.decode, with nesting past the recursion limit a msgspec.DecodeError."""
    try:
        return msgspec.json.decode(data, type=type)
    except RecursionError:
        raise msgspec.DecodeError("JSON is malformed: nested too deeply") from None


def toml(text: str) -> dict[str, Any]:
    """tomllib.loads, with nesting past the recursion limit a TOMLDecodeError."""
    import tomllib

    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("nested too deeply") from None
