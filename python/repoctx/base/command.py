"""The registry's vocabulary: Command, Resource, Prompt and Check (a leaf: it imports
nothing of repoctx, so every surface can import it and the catalog can import them all).

A Command names its CLI words and its MCP tool, types its parameters with a msgspec
Struct, and points at a pure handler `(Workspace, params) -> result`. The CLI
(views/cli.py) and the MCP server (views/server.py) are both generated from the
catalog's commands (registry/catalog.py), and both turn a result into text with the
same `encode`, so `repoctx <command> --json` prints exactly what the MCP tool returns.
"""

from __future__ import annotations

import json
import types
import typing
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Literal

import msgspec


def pretty_json(result: Any) -> str:
    """JSON with two-space indentation, keys in declaration order (as `JSON.stringify(x, null, 2)`)."""
    return msgspec.json.format(msgspec.json.encode(result), indent=2).decode()


DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def compact_json(result: Any) -> str:
    """JSON without whitespace, for a reply that grows with the tree: its indentation would
    be a third of its bytes, and every byte is read, parsed and counted as tokens."""
    return msgspec.json.encode(result).decode()


@dataclass(frozen=True)
class Command:
    name: str  # CLI words, e.g. "status" or "proposals list"
    tool: str | None  # MCP tool name; None for CLI-only commands
    summary: str  # one line: CLI help and the first line of the tool description
    description: str  # the rest of the tool description
    params: type[msgspec.Struct]
    result: Any  # the result type, for the output schema
    handler: Callable[[Any, Any], Any]
    is_error: Callable[[Any], bool] = lambda result: False
    writes: bool = False
    # Keeps a record of its own (ctxt_validate_run stores a run under .repoctx/runs/) but
    # changes no project file: annotated as not read-only and not idempotent, yet served in
    # read-only mode, where it records nothing.
    records: bool = False
    positional: tuple[str, ...] = ()
    render: Callable[[Any], str] | None = None  # human text; JSON when None
    encode: Callable[[Any], str] = pretty_json
    aliases: tuple[str, ...] = ()  # further MCP names accepted on call; the first is the contract's own name
    surface: str = ""  # the contract it belongs to; default: the handler's module (repoctx.<surface>)
    # The profile that serves it (`serve --profile`); default: its surface. A tool outside its
    # contract's fixed list (propose_change) has a profile of its own, so it is only served when asked for.
    profile: str = ""
    cli: bool = True  # False: an MCP-only form of another command's CLI words (same `name`)
    # Results may list thousands of objects: the output schema then leaves array items
    # unchecked (described, not validated), since clients validate structured content
    # item by item (the Python SDK's jsonschema spends ~0.1 ms per object).
    large_lists: bool = False
    # False: the MCP reply carries the JSON once, as its text, without an output schema or
    # structured content (the shape of the contract's reference server). For a reply that grows
    # with the tree (list_contexts: 1.1 MB on 100,000 files), where a second copy as structured
    # content doubles what every client reads and parses (docs/scopes.md, "Large trees").
    structured: bool = True
    # Numbers and booleans given as strings ("3" for a count) are taken, as the original systems
    # take them; False where a contract fixes the types (the context engine's budget).
    lax: bool = True
    # Its answer depends on how a server was started: the CLI takes serve's --tools, --profile,
    # --names and --read-only too, so the command equals the tool of a server started so.
    server_view: bool = False
    # CLI exit status of a result; None: 1 when is_error, else 0.
    exit_code: Callable[[Any], int] | None = None
    # The result for arguments that fail validation (a contract's own error); None: a plain-text error.
    on_invalid: Callable[[Any], Any] | None = None
    # The MCP text content when a contract wants plain text (Contextia's context format);
    # None: the JSON. `--json` always prints the JSON, which is the structured content.
    text: Callable[[Any], str] | None = None
    # The next step a person is told on stderr after a result, where the result alone (a
    # contract's fixed words) does not say it: (workspace, the arguments given, result) -> a line or None.
    advise: Callable[[Any, dict, Any], str | None] | None = None

    def __post_init__(self) -> None:
        if not self.surface:
            object.__setattr__(self, "surface", _surface_of(self.handler))
        if not self.profile:
            object.__setattr__(self, "profile", self.surface)

    def listed_name(self, names: str) -> str:
        """The name a server lists it under: the safe name, or with names "contract" the
        contract's own (the context engine's dotted names) where it differs."""
        return self.aliases[0] if names == "contract" and self.aliases else self.tool

    @cached_property
    def input_schema(self) -> dict:
        schema = _inline_schema(self.params)
        schema.pop("additionalProperties", None)  # unknown keys are ignored (see parse)
        return schema

    @cached_property
    def output_schema(self) -> dict:
        """The schema every structured result of the tool validates against, failures included
        (hosts on the TypeScript SDK check each result, errors too): the result type may be a
        union of the success and the contract's error object."""
        branches = [_expand_refs(_inline_schema(tp)) for tp in self.result_types]
        if self.large_lists:
            branches = [_unchecked_items(b) for b in branches]
        schema = branches[0] if len(branches) == 1 else {"type": "object", "anyOf": branches}
        # Its keywords mean the same in draft-07, which the Python SDK's jsonschema validates
        # a third faster than the default 2020-12 (tests/views/test_mcp_server.py keeps them so).
        return {"$schema": DRAFT_07, **schema}

    @property
    def result_types(self) -> tuple:
        """The result's members: the success type, then any error object (msgspec builds no
        schema of an untagged union of Structs, so each member gets its own)."""
        return typing.get_args(self.result) if isinstance(self.result, types.UnionType) else (self.result,)

    @cached_property
    def _fields(self) -> frozenset[str]:
        return frozenset(f.encode_name for f in msgspec.structs.fields(self.params))

    def unknown(self, arguments: object) -> list[str]:
        """The argument names it does not take (parse ignores them), sorted."""
        return sorted(k for k in arguments if k not in self._fields) if isinstance(arguments, dict) else []

    def parse(self, arguments: dict | None) -> Any:
        """Typed parameters from JSON-like arguments; raises msgspec.ValidationError. Keys the
        command does not know are ignored, as the original systems do: a client written for a
        newer version of a contract keeps working."""
        arguments = arguments or {}
        if isinstance(arguments, dict) and not self._fields.issuperset(arguments):
            arguments = {k: v for k, v in arguments.items() if k in self._fields}
        params = msgspec.convert(arguments, self.params, strict=not self.lax)
        try:  # lone surrogates (non-UTF-8 argv bytes) would fail later, when a result echoes them
            msgspec.json.encode(params)
        except UnicodeEncodeError:
            raise msgspec.ValidationError("arguments must be valid Unicode text (no lone surrogates)") from None
        return params


def fixed_form(params: type[msgspec.Struct], handler: Callable, **fixed) -> Callable:
    """The handler of an MCP-only form of a CLI command (`cli=False`): the command with some
    parameters fixed, as a contract maps a tool to one fixed command line (ctxt's
    `proposals inspect --id latest --max-bytes 12000`); the tool's own parameters fill the rest.
    `.fixed` keeps them, so the command line is known (tests/views/test_parity.py)."""

    def run(ws, p):
        return handler(ws, params(**fixed, **msgspec.structs.asdict(p)))

    setattr(run, "fixed", fixed)  # a function's own attribute, which no type declares
    run.__module__ = handler.__module__  # the surface of the command it fixes
    return run


def _surface_of(fn: Callable) -> str:
    """The surface package a function lives in: `repoctx.caches.engine` -> "caches"."""
    parts = getattr(fn, "__module__", "").split(".")
    return parts[1] if len(parts) > 2 else ""


def core_schema(tp: Any) -> dict:
    """The JSON Schema of a result the Rust core declares (a class of `_core` with its schema
    as `JSON_SCHEMA` text: the task-context answer), as msgspec's `schema_hook` takes it."""
    own = getattr(tp, "JSON_SCHEMA", None)
    if not isinstance(own, str):
        raise NotImplementedError(f"{tp!r} has no JSON Schema")
    return json.loads(own)


def _inline_schema(tp: Any) -> dict:
    """A self-contained JSON Schema whose top level is the object itself."""
    schema = msgspec.json.schema(tp, schema_hook=core_schema)
    defs = schema.pop("$defs", {})
    ref = schema.get("$ref", "")
    if ref.startswith("#/$defs/"):
        top = dict(defs.pop(ref.rsplit("/", 1)[1]))
        top.pop("title", None)
        if defs:
            top["$defs"] = defs
        return top
    return schema


def _expand_refs(schema: dict) -> dict:
    """The schema with each `$ref` replaced by the definition it names. Clients validate every
    result against the output schema, and the Python SDK's jsonschema resolves a `$ref` anew
    on each call: ~20% of the time it spent on check_freshness's result. (No result type
    refers to itself; one that did could not be inlined, and would fail here.)"""
    defs = schema.get("$defs", {})

    def expand(node, inside: tuple[str, ...]):
        if isinstance(node, list):
            return [expand(n, inside) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref", "")
        if ref.startswith("#/$defs/"):
            name = ref.rsplit("/", 1)[1]
            if name in inside:
                raise ValueError(f"{name} refers to itself: its schema cannot be inlined")
            body = {k: v for k, v in defs[name].items() if k != "title"}
            return expand({**body, **{k: v for k, v in node.items() if k != "$ref"}}, (*inside, name))
        return {k: expand(v, inside) for k, v in node.items() if k != "$defs"}

    return expand(schema, ())


def _unchecked_items(schema: dict) -> dict:
    """The schema with each top-level array's item schema moved into its description."""
    import json

    defs = schema.get("$defs", {})
    props = {}
    for name, prop in schema.get("properties", {}).items():
        items = prop.get("items")
        if prop.get("type") == "array" and items is not None:
            ref = items.get("$ref", "")
            item = defs.get(ref.rsplit("/", 1)[1], items) if ref else items
            item = {k: v for k, v in item.items() if k != "title"}
            prop = {"type": "array", "description": f"Each item: {json.dumps(item, separators=(',', ':'))}"}
        props[name] = prop
    out = dict(schema)  # $defs stay: properties that are not arrays may still refer to them
    out["properties"] = props
    return out


class ResourceError(Exception):
    """A resource read that fails with a JSON-RPC error code (e.g. -32602 for an unknown name)."""

    def __init__(self, code: int, message: str, data: dict | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


@dataclass(frozen=True)
class Resource:
    """An MCP resource: a fixed URI, or a template such as `context://module/{name}`.

    `read(ws, params)` gets the template's fields and the URI's query parameters
    as strings and returns the text; it raises ResourceError to fail.
    `instances(ws)` lists concrete (uri, name) pairs of a template, if any.
    """

    uri: str
    name: str
    description: str
    mime_type: str
    read: Callable[[Any, dict[str, str]], str]
    instances: Callable[[Any], list[tuple[str, str]]] | None = None
    surface: str = ""  # default: the read function's module, as for Command

    def __post_init__(self) -> None:
        if not self.surface:
            object.__setattr__(self, "surface", _surface_of(self.read))

    @property
    def is_template(self) -> bool:
        return "{" in self.uri


class CheckResult(msgspec.Struct, omit_defaults=True):
    status: Literal["pass", "warn", "fail", "skip"]
    message: str
    problems: list[str] = []  # one line each, e.g. "src/.context.yaml: missing field `summary`"


@dataclass(frozen=True)
class Check:
    """One thing `repoctx validate` verifies. A surface contributes checks by a
    module-level `CHECKS` list beside its `COMMANDS`; `run(ws)` never raises for
    a finding, it returns a CheckResult saying what it found."""

    name: str  # e.g. "scopes.context_files"
    surface: str
    description: str
    run: Callable[[Any], CheckResult]
    strict: bool = False  # run only by `validate --strict`: a finding is a drift, not an invalid file


@dataclass(frozen=True)
class Prompt:
    """An MCP prompt: `render(ws, arguments)` returns the text of its one user message."""

    name: str
    description: str
    arguments: tuple[tuple[str, str, bool], ...]  # (name, description, required)
    render: Callable[[Any, dict[str, str]], str]
    surface: str = ""  # default: the render function's module, as for Command

    def __post_init__(self) -> None:
        if not self.surface:
            object.__setattr__(self, "surface", _surface_of(self.render))
