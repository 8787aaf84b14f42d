"""Bounded parsing: every YAML, JSON and TOML file repoctx reads is parsed here, so no
input can crash the process or exhaust its memory (docs/security.md, "Bounded parsing").

YAML goes through the core's one reader (rust/formats/yamlread.rs): nesting deeper than 128
levels, and aliases that would copy more than 1 MiB, are refused with the line and the
reason. msgspec and tomllib stop deep nesting at Python's recursion limit with a
RecursionError; here that becomes their own decode error, so a file nested too deep is
refused as a malformed one is, never answered with an internal error.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

import msgspec

from repoctx import _core
from repoctx.base.errors import RepoctxError

# The longest string a configuration file may set (a prefix, a pattern, a path, a name, a tool):
# every setting is read through `Setting` or `is_setting`. An annotation prefix of 30,000
# characters made every command that scans annotations take 16 s.
MAX_SETTING = 256
Setting = Annotated[str, msgspec.Meta(max_length=MAX_SETTING)]


def is_setting(v: object) -> bool:
    """Whether `v` is a string a configuration file may set (see MAX_SETTING)."""
    return isinstance(v, str) and len(v) <= MAX_SETTING


class YamlError(RepoctxError):
    """A YAML document refused: the reason, the line and column (from 1; the column in
    characters) where it was seen, and whether it breaks the YAML syntax (else a bound, or a
    form the reader does not take)."""

    def __init__(self, reason: str, line: int, column: int, syntax: bool) -> None:
        super().__init__(f"{reason} at line {line}", code="invalid_yaml")
        self.reason, self.line, self.column, self.syntax = reason, line, column, syntax

    def at(self, path: str) -> str:
        """What is wrong with the file at `path`, where: `path:3:5: YAML syntax error: reason`
        when the text breaks YAML's syntax, else `path: not valid YAML (reason at line 3)`."""
        if self.syntax:
            return f"{path}:{self.line}:{self.column}: YAML syntax error: {self.reason}"
        return f"{path}: not valid YAML ({self})"


def yaml(data: bytes | str) -> Any:
    """The one YAML document in `data` as plain data (None when it holds none)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")  # a lone surrogate is refused as not UTF-8
    try:
        text = _core.yaml_to_json(data)
    except _core.YamlRefused as exc:
        raise YamlError(exc.reason, exc.line, exc.column, exc.syntax) from None
    return msgspec.json.decode(text)


def mapping_problem(data: bytes) -> str | None:
    """Why `data` is not a YAML mapping, or None."""
    return None if isinstance(yaml(data), dict) else "must be a YAML mapping"


def dump_yaml(data: object, **options: Any) -> str:
    """YAML as PyYAML's safe dumper writes it, for the files we write and read back. It
    quotes what YAML 1.1 would misread (`yes`, dates); it is told to quote as well what the
    1.2 reader above reads as a number (`1e3`, `0o17`), so every string reads back as written."""
    import yaml

    text: str = yaml.dump(data, Dumper=_dumper(), **options)
    return text


@functools.cache
def _dumper() -> type:
    import re

    import yaml

    class Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc, unused-ignore]
        pass

    Dumper.add_implicit_resolver("tag:yaml.org,2002:int", re.compile(r"^0o[0-7]+$"), ["0"])
    Dumper.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(
        r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$"), list("-+.0123456789"))
    return Dumper


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
